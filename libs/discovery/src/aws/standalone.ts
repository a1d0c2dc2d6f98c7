import { readWorkerKubelet, withWorkerKubelet } from '../openshift/worker-kubelet.js';
import {
  DescribeImagesCommand,
  paginateDescribeSecurityGroups,
  paginateDescribeSubnets,
  type EC2Client,
  type Filter,
  type SecurityGroup,
  type Subnet,
} from '@aws-sdk/client-ec2';

import { fail, readCluster, Stop } from '../stop.js';
import { readWorkerUserData } from '../openshift/user-data.js';
import {
  firstUsableWorker,
  requireWorkerCandidates,
  workerSelectedCondition,
} from '../openshift/worker-machinesets.js';
import type { ClusterObjectReader } from '../cluster-reader.js';
import { describeError } from '../describe-error.js';
import { INFRASTRUCTURE_NAME, parseAwsInfrastructure } from './infrastructure.js';
import { parseClusterProxy, PROXY_NAME } from './proxy.js';
import {
  AUTHENTICATION_NAME,
  CLOUD_CREDENTIAL_NAME,
  parseCloudCredentials,
} from './credentials-mode.js';
import {
  MACHINE_API_NAMESPACE,
  parseWorkerMachineSet,
  selectWorkerMachineSet,
} from './machinesets.js';
import type { DiscoveryFailure, DiscoveryResult } from '../types.js';
import type { AwsStandaloneInfrastructure, WorkerMachineSet } from './types.js';

export const INTERNAL_ELB_ROLE_TAG = 'kubernetes.io/role/internal-elb';
export { USER_DATA_KEY } from '../openshift/user-data.js';
/** RHCOS AMIs' root device; used only when EC2 does not name the AMI's. */
export const DEFAULT_ROOT_DEVICE_NAME = '/dev/xvda';

export interface AwsStandaloneDiscoveryInput {
  reader: ClusterObjectReader;
  /**
   * An EC2 client for the cluster's region, or a factory given the region read from the
   * Infrastructure (callers usually cannot know it before discovery).
   */
  ec2: EC2Client | ((region: string) => EC2Client);
}

/**
 * Learns what Karpenter needs from a standalone OpenShift cluster on AWS: the Infrastructure,
 * the worker MachineSet and its user data, and the subnets, security groups and AMI as EC2 sees
 * them. Never throws: every missing or broken piece comes back as its own reason.
 */
export async function discoverAwsStandalone(
  input: AwsStandaloneDiscoveryInput,
): Promise<DiscoveryResult<AwsStandaloneInfrastructure>> {
  try {
    const infrastructure = await discover(input);
    return {
      ok: true,
      infrastructure,
      conditions: [workerSelectedCondition('EC2NodeClass', infrastructure.workerSelection)],
    };
  } catch (err) {
    if (err instanceof Stop) return err.failure;
    return {
      ok: false,
      reason: 'CloudLookupFailed',
      message: `unexpected error: ${describeError(err)}`,
    };
  }
}

async function discover({
  reader,
  ec2,
}: AwsStandaloneDiscoveryInput): Promise<AwsStandaloneInfrastructure> {
  const infrastructureObject = await readCluster(`Infrastructure ${INFRASTRUCTURE_NAME}`, () =>
    reader.getInfrastructure(),
  );
  if (infrastructureObject === undefined || infrastructureObject === null) {
    fail(
      'InfrastructureNotFound',
      `Infrastructure ${INFRASTRUCTURE_NAME} (config.openshift.io/v1) not found; is this an OpenShift cluster?`,
    );
  }
  const infrastructure = parseAwsInfrastructure(infrastructureObject);
  if (!infrastructure.ok) throw new Stop(infrastructure);
  const { infraID, region } = infrastructure.value;
  const proxy = parseClusterProxy(
    await readCluster(`Proxy ${PROXY_NAME}`, () => reader.getProxy()),
  );
  if (!proxy.ok) throw new Stop(proxy);
  const cloudCredentials = parseCloudCredentials(
    await readCluster(`CloudCredential ${CLOUD_CREDENTIAL_NAME}`, () =>
      reader.getCloudCredential(),
    ),
    await readCluster(`Authentication ${AUTHENTICATION_NAME}`, () => reader.getAuthentication()),
  );
  if (!cloudCredentials.ok) throw new Stop(cloudCredentials);

  const machineSets = await readCluster(`MachineSets in ${MACHINE_API_NAMESPACE}`, () =>
    reader.listMachineSets(MACHINE_API_NAMESPACE),
  );
  const selection = selectWorkerMachineSet(machineSets);
  // Before any EC2 call: a cluster without a worker set says so whatever EC2 would answer.
  requireWorkerCandidates(selection);

  const client = typeof ec2 === 'function' ? ec2(region) : ec2;
  const subnets = await findClusterSubnets(client, infraID, region);
  // Each candidate in turn (firstUsableWorker): one whose AMI, profile, user data or security groups cannot be used
  // is passed over with its reason. A lookup that failed (CloudLookupFailed,
  // KubernetesLookupFailed) stops discovery instead: a passing error must not switch the set
  // the default NodeClass is copied from.
  const { value: chosen, workerSelection } = await firstUsableWorker(
    selection,
    SET_UNUSABLE,
    (candidate) => usableWorker(reader, client, candidate.machineSet, region),
  );
  return {
    platform: 'AWS',
    ...infrastructure.value,
    ...(proxy.value ? { proxy: proxy.value } : {}),
    cloudCredentials: cloudCredentials.value,
    worker: chosen.worker,
    subnets,
    securityGroupIDs: chosen.securityGroupIDs,
    rootDeviceName: chosen.rootDeviceName,
    userData: chosen.userData,
    ...withWorkerKubelet(await readWorkerKubelet(reader)),
    workerSelection,
  };
}

/** Why a candidate set is passed over rather than discovery failing at once. */
const SET_UNUSABLE = new Set<DiscoveryFailure['reason']>([
  'InvalidWorkerMachineSet',
  'UserDataSecretNotFound',
  'UserDataKeyMissing',
  'WindowsUserData',
  'SecurityGroupNotFound',
  'AMINotFound',
]);

interface UsableWorker {
  worker: WorkerMachineSet;
  userData: string;
  securityGroupIDs: string[];
  rootDeviceName: string;
}

async function usableWorker(
  reader: ClusterObjectReader,
  client: EC2Client,
  machineSet: unknown,
  region: string,
): Promise<UsableWorker> {
  const worker = parseWorkerMachineSet(machineSet);
  if (!worker.ok) throw new Stop(worker);
  const userData = await readWorkerUserData(reader, worker.value);
  const securityGroupIDs = await resolveSecurityGroups(client, worker.value, region);
  const rootDeviceName = await verifyImage(client, worker.value, region);
  return { worker: worker.value, userData, securityGroupIDs, rootDeviceName };
}

async function ec2Call<T>(action: string, region: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof Stop) throw err;
    fail('CloudLookupFailed', `EC2 ${action} in ${region} failed: ${describeError(err)}`);
  }
}

async function findClusterSubnets(
  ec2: EC2Client,
  infraID: string,
  region: string,
): Promise<AwsStandaloneInfrastructure['subnets']> {
  const clusterTag = `kubernetes.io/cluster/${infraID}`;
  const filters: Filter[] = [
    // The cluster tag's value is `owned` or `shared`; either qualifies.
    { Name: 'tag-key', Values: [clusterTag] },
    { Name: `tag:${INTERNAL_ELB_ROLE_TAG}`, Values: ['1'] },
  ];
  const found: Subnet[] = await ec2Call('DescribeSubnets', region, async () => {
    const all: Subnet[] = [];
    for await (const page of paginateDescribeSubnets(
      { client: ec2, pageSize: 1000 },
      { Filters: filters },
    )) {
      all.push(...(page.Subnets ?? []));
    }
    return all;
  });
  const subnets = found
    .filter((s): s is Subnet & { SubnetId: string; AvailabilityZone: string } =>
      Boolean(s.SubnetId && s.AvailabilityZone),
    )
    .map((s) => ({
      id: s.SubnetId,
      zone: s.AvailabilityZone,
      ...(s.AvailabilityZoneId ? { zoneID: s.AvailabilityZoneId } : {}),
    }))
    .sort((a, b) => (a.zone === b.zone ? cmp(a.id, b.id) : cmp(a.zone, b.zone)));
  if (subnets.length === 0) {
    fail(
      'NoTaggedSubnets',
      `no subnet in ${region} carries both the tag ${clusterTag} and ${INTERNAL_ELB_ROLE_TAG}=1`,
    );
  }
  return subnets;
}

async function resolveSecurityGroups(
  ec2: EC2Client,
  worker: WorkerMachineSet,
  region: string,
): Promise<string[]> {
  const names = worker.securityGroups.flatMap((g) => ('name' in g ? [g.name] : []));
  const ids = worker.securityGroups.flatMap((g) => ('id' in g ? [g.id] : []));
  const describe = (filter: Filter) =>
    ec2Call('DescribeSecurityGroups', region, async () => {
      const all: SecurityGroup[] = [];
      for await (const page of paginateDescribeSecurityGroups(
        { client: ec2, pageSize: 1000 },
        { Filters: [filter] },
      )) {
        all.push(...(page.SecurityGroups ?? []));
      }
      return all;
    });
  // Filters rather than GroupIds: a missing id then shows up as absent instead of an error.
  const byName = names.length > 0 ? await describe({ Name: 'tag:Name', Values: names }) : [];
  const byID = ids.length > 0 ? await describe({ Name: 'group-id', Values: ids }) : [];

  const resolved: string[] = [];
  const missing: string[] = [];
  for (const wanted of worker.securityGroups) {
    const match =
      'name' in wanted
        ? byName.find((g) => g.Tags?.some((t) => t.Key === 'Name' && t.Value === wanted.name))
        : byID.find((g) => g.GroupId === wanted.id);
    if (match?.GroupId) resolved.push(match.GroupId);
    else missing.push('name' in wanted ? `tag Name=${wanted.name}` : `id ${wanted.id}`);
  }
  if (missing.length > 0) {
    fail(
      'SecurityGroupNotFound',
      `security group ${missing.join(', ')} of MachineSet ${worker.name} not found in EC2 (${region})`,
    );
  }
  return resolved;
}

/**
 * The AMI must exist and be available; returns its RootDeviceName, the device
 * machine-api-provider-aws launches the root volume under (instances.go,
 * getBlockDeviceMappings), so the NodeClass names the same one.
 */
async function verifyImage(
  ec2: EC2Client,
  worker: WorkerMachineSet,
  region: string,
): Promise<string> {
  const notFound = (detail: string) =>
    fail(
      'AMINotFound',
      `AMI ${worker.amiID} of MachineSet ${worker.name} ${detail} in EC2 (${region})`,
    );
  let images;
  try {
    images = (await ec2.send(new DescribeImagesCommand({ ImageIds: [worker.amiID] }))).Images ?? [];
  } catch (err) {
    const name = (err as { name?: unknown }).name;
    if (name === 'InvalidAMIID.NotFound' || name === 'InvalidAMIID.Unavailable')
      notFound('not found');
    if (name === 'InvalidAMIID.Malformed') notFound('is not a valid AMI id');
    fail('CloudLookupFailed', `EC2 DescribeImages in ${region} failed: ${describeError(err)}`);
  }
  const image = images.find((i) => i.ImageId === worker.amiID);
  // Recently deregistered AMIs come back as an empty result rather than an error.
  if (image === undefined) return notFound('not found');
  if (image.State !== undefined && image.State !== 'available') notFound(`is ${image.State}`);
  return image.RootDeviceName || DEFAULT_ROOT_DEVICE_NAME;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export { describeError } from '../describe-error.js';
