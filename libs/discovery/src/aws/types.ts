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
  worker: WorkerMachineSet;
  /**
   * Subnets tagged kubernetes.io/cluster/<infraID> + kubernetes.io/role/internal-elb=1, resolved
   * in EC2, ordered by zone then id.
   */
  subnets: { id: string; zone: string; zoneID?: string }[];
  /** EC2 ids of `worker.securityGroups`, as resolved when discovery ran. */
  securityGroupIDs: string[];
  /** The worker user-data Secret's `userData` key, decoded. */
  userData: string;
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
  blockDevice: {
    deviceName: string;
    encrypted: boolean;
    volumeSize: number;
    volumeType: string;
    /** `kmsKey.arn`, else `kmsKey.id`; absent when both are empty. */
    kmsKeyARN?: string;
  };
  userDataSecretName: string;
  tags: Record<string, string>;
  region?: string;
  availabilityZone?: string;
}
