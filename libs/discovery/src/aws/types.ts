import type { WorkerKubelet } from '../openshift/worker-kubelet.js';
import type { CloudCredentials } from './credentials-mode.js';
import type { ClusterProxy } from './proxy.js';

/**
 * What discovery learns about a standalone OpenShift cluster on AWS. Everything the AWS
 * CloudProvider needs to render the operand and the default EC2NodeClass, and nothing else.
 */
export interface AwsStandaloneInfrastructure {
  platform: 'AWS';
  /** Infrastructure.status.infrastructureName (the infraID); the operand's CLUSTER_NAME. */
  infraID: string;
  region: string;
  /** Infrastructure.status.apiServerInternalURI; the operand's CLUSTER_ENDPOINT. */
  apiServerInternalURI: string;
  /** Infrastructure.status.controlPlaneTopology; `HighlyAvailable` when the cluster predates it. */
  controlPlaneTopology: string;
  /** Infrastructure.status.platformStatus.aws.resourceTags as a map. */
  resourceTags: Record<string, string>;
  /** The cluster-wide Proxy (proxy.ts); absent when the cluster reaches AWS directly. */
  proxy?: ClusterProxy;
  /**
   * How the Cloud Credential Operator runs (credentials-mode.ts): in ManualSTS the operand
   * assumes the desired state's web-identity role and no CredentialsRequest is written.
   */
  cloudCredentials: CloudCredentials;
  worker: WorkerMachineSet;
  /** Which worker MachineSet the default NodeClass is copied from, and why the others were not. */
  workerSelection: { chosen: string; passedOver: { name: string; why: string }[] };
  /**
   * Subnets tagged kubernetes.io/cluster/<infraID> + kubernetes.io/role/internal-elb=1, resolved
   * in EC2, ordered by zone then id.
   */
  subnets: { id: string; zone: string; zoneID?: string }[];
  /** EC2 ids of `worker.securityGroups`, as resolved when discovery ran. */
  securityGroupIDs: string[];
  /**
   * The worker AMI's RootDeviceName (DescribeImages): the device machine-api-provider-aws gives
   * the root volume; `/dev/xvda` (RHCOS's) when EC2 does not say.
   */
  rootDeviceName: string;
  /** The worker user-data Secret's `userData` key, decoded. */
  userData: string;
  /**
   * The worker pool's kubelet settings (accepted KubeletConfigs, latency profile), which each
   * Karpenter pool's KubeletConfig carries. Absent from infrastructure recorded before it.
   */
  workerKubelet?: WorkerKubelet;
}

/**
 * An EBS volume as machine-api-provider-aws requests it from EC2 (pkg/actuators/machine/
 * instances.go, getBlockDeviceMappings): a field absent from the providerSpec is not sent, so
 * EC2 decides (the AMI snapshot's size and type, the account's encryption-by-default).
 */
export interface EbsVolume {
  /** GiB. */
  volumeSize?: number;
  volumeType?: string;
  encrypted?: boolean;
  /** Only for io1, io2 and gp3, and only above 0 (the installer writes 0 for "unset"). */
  iops?: number;
  /** Only for gp3, and only above 0. */
  throughputMiB?: number;
  /** `kmsKey.id`, else `kmsKey.arn` (the provider prefers the id). */
  kmsKeyID?: string;
}

export interface WorkerMachineSet {
  name: string;
  /** The providerSpec apiVersion: machine.openshift.io/v1beta1 or the legacy awsproviderconfig one. */
  providerSpecAPIVersion: string;
  amiID: string;
  instanceProfile: string;
  instanceType: string;
  /** One entry per security group of the providerSpec: by Name tag, or by id. */
  securityGroups: ({ name: string } | { id: string })[];
  subnet: { name: string } | { id: string } | undefined;
  /**
   * The root volume: the providerSpec's block device without a `deviceName`, which
   * machine-api-provider-aws launches under the AMI's root device name. Absent when the
   * providerSpec describes none (then EC2 uses the AMI's own root mapping).
   */
  rootVolume?: EbsVolume;
  /** Further EBS volumes, each under the `deviceName` the providerSpec gives it. */
  dataVolumes: (EbsVolume & { deviceName: string })[];
  userDataSecretName: string;
  tags: Record<string, string>;
  region?: string;
  availabilityZone?: string;
}
