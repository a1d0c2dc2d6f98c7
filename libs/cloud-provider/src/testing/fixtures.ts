import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { KarpenterDesiredState } from '@fleet/contracts';
import type { AwsStandaloneInfrastructure } from '@fleet/discovery';
import { parse } from 'yaml';

/** shared/fixtures, beside the project root. */
export const FIXTURES_DIRECTORY = fileURLToPath(
  new URL('../../../../../shared/fixtures/', import.meta.url),
);
export const CRD_DIRECTORY = `${FIXTURES_DIRECTORY}crds/`;
export const STANDALONE_CLUSTER_DIRECTORY = `${FIXTURES_DIRECTORY}clusters/ocp-aws-standalone/`;

function fixtureUserData(): string {
  const secret = parse(
    readFileSync(`${STANDALONE_CLUSTER_DIRECTORY}secret-worker-user-data.yaml`, 'utf8'),
  ) as { stringData: { userData: string } };
  return secret.stringData.userData;
}

/** What discovery yields for shared/fixtures/clusters/ocp-aws-standalone. */
export function fixtureInfrastructure(): AwsStandaloneInfrastructure {
  return {
    platform: 'AWS',
    infraID: 'prod-east-7xk2p',
    region: 'us-east-1',
    apiServerInternalURI: 'https://api-int.prod-east.example.com:6443',
    controlPlaneTopology: 'HighlyAvailable',
    resourceTags: { 'cost-center': '4411', team: 'platform' },
    worker: {
      name: 'prod-east-7xk2p-worker-us-east-1a',
      providerSpecAPIVersion: 'machine.openshift.io/v1beta1',
      amiID: 'ami-0c6f2a5e3d1b7a901',
      instanceProfile: 'prod-east-7xk2p-worker-profile',
      instanceType: 'm6i.xlarge',
      securityGroups: [{ name: 'prod-east-7xk2p-node' }, { name: 'prod-east-7xk2p-lb' }],
      subnet: { name: 'prod-east-7xk2p-subnet-private-us-east-1a' },
      blockDevice: {
        deviceName: '/dev/xvda',
        encrypted: true,
        volumeSize: 120,
        volumeType: 'gp3',
      },
      userDataSecretName: 'worker-user-data',
      tags: { 'kubernetes.io/cluster/prod-east-7xk2p': 'owned', 'cost-center': '4411' },
      region: 'us-east-1',
      availabilityZone: 'us-east-1a',
    },
    subnets: [
      { id: 'subnet-0aa11111111111111', zone: 'us-east-1a', zoneID: 'use1-az1' },
      { id: 'subnet-0bb22222222222222', zone: 'us-east-1b', zoneID: 'use1-az2' },
      { id: 'subnet-0cc33333333333333', zone: 'us-east-1c', zoneID: 'use1-az4' },
    ],
    securityGroupIDs: ['sg-0n0de000000000001', 'sg-0lb00000000000002'],
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
