// The standalone OpenShift-on-AWS fixture cluster (test/fixtures/clusters/ocp-aws-standalone):
// its objects, its EC2 world, and what discovery and the desired state look like for it.
import type { KarpenterDesiredState } from '@fleet/contracts';
import type { AwsStandaloneInfrastructure } from '@fleet/discovery';
import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { fixtureClusterDir } from './fixtures.js';

export const OCP_AWS_STANDALONE = pathToFileURL(`${fixtureClusterDir('ocp-aws-standalone')}/`);

export function fixtureObject<T = Record<string, unknown>>(file: string): T {
  return parse(readFileSync(new URL(file, OCP_AWS_STANDALONE), 'utf8')) as T;
}

/** Every Kubernetes object in the fixture directory. */
export function fixtureObjects(): Record<string, unknown>[] {
  return readdirSync(OCP_AWS_STANDALONE)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => fixtureObject(f));
}

export function fixtureWorldPath(): URL {
  return new URL('ec2-world.json', OCP_AWS_STANDALONE);
}

/** A mutable MachineSet shape for building variants in tests. */
export interface MachineSetFixture {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; annotations?: Record<string, string> };
  spec: {
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        metadata?: { labels?: Record<string, string> };
        taints?: { key: string; effect: string }[];
        providerSpec: { value: Record<string, unknown> };
      };
    };
  };
}

export function workerMachineSet(zone: 'a' | 'b' | 'c' = 'a'): MachineSetFixture {
  return fixtureObject<MachineSetFixture>(`machineset-worker-us-east-1${zone}.yaml`);
}

export function renamed(ms: MachineSetFixture, name: string): MachineSetFixture {
  const copy = structuredClone(ms);
  copy.metadata.name = name;
  return copy;
}

function fixtureUserData(): string {
  return fixtureObject<{ stringData: { userData: string } }>('secret-worker-user-data.yaml')
    .stringData.userData;
}

/** What discovery yields for test/fixtures/clusters/ocp-aws-standalone. */
export function fixtureInfrastructure(): AwsStandaloneInfrastructure {
  return {
    platform: 'AWS',
    infraID: 'prod-east-7xk2p',
    region: 'us-east-1',
    apiServerInternalURI: 'https://api-int.prod-east.example.com:6443',
    controlPlaneTopology: 'HighlyAvailable',
    resourceTags: { 'cost-center': '4411', team: 'platform' },
    // The fixture has no CloudCredential: CCO's default mode.
    cloudCredentials: { mode: 'Default' },
    worker: {
      name: 'prod-east-7xk2p-worker-us-east-1a',
      providerSpecAPIVersion: 'machine.openshift.io/v1beta1',
      amiID: 'ami-0c6f2a5e3d1b7a901',
      instanceProfile: 'prod-east-7xk2p-worker-profile',
      instanceType: 'm6i.xlarge',
      securityGroups: [{ name: 'prod-east-7xk2p-node' }, { name: 'prod-east-7xk2p-lb' }],
      subnet: { name: 'prod-east-7xk2p-subnet-private-us-east-1a' },
      rootVolume: { encrypted: true, volumeSize: 120, volumeType: 'gp3' },
      dataVolumes: [],
      userDataSecretName: 'worker-user-data',
      tags: { 'kubernetes.io/cluster/prod-east-7xk2p': 'owned', 'cost-center': '4411' },
      region: 'us-east-1',
      availabilityZone: 'us-east-1a',
    },
    workerSelection: {
      chosen: 'prod-east-7xk2p-worker-us-east-1a',
      passedOver: [{ name: 'prod-east-7xk2p-infra-us-east-1a', why: 'role infra' }],
    },
    subnets: [
      { id: 'subnet-0aa11111111111111', zone: 'us-east-1a', zoneID: 'use1-az1' },
      { id: 'subnet-0bb22222222222222', zone: 'us-east-1b', zoneID: 'use1-az2' },
      { id: 'subnet-0cc33333333333333', zone: 'us-east-1c', zoneID: 'use1-az4' },
    ],
    securityGroupIDs: ['sg-0n0de000000000001', 'sg-0lb00000000000002'],
    rootDeviceName: '/dev/xvda',
    userData: fixtureUserData(),
  };
}

export function desiredState(
  overrides: Partial<KarpenterDesiredState> = {},
): KarpenterDesiredState {
  return {
    enabled: true,
    paused: false,
    clusterAutoscalerMode: 'DISABLE',
    logLevel: 'info',
    featureGates: { Drift: true },
    nodePools: [],
    nodeClassOverrides: {},
    ...overrides,
  };
}
