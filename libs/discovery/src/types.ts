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
  controlPlaneTopology: string;
  /** Infrastructure.status.platformStatus.aws.resourceTags as a map. */
  resourceTags: Record<string, string>;
  worker: WorkerMachineSet;
  /** Subnets tagged kubernetes.io/cluster/<infraID> + kubernetes.io/role/internal-elb=1, resolved in EC2. */
  subnets: { id: string; zone: string }[];
  /** The worker user-data Secret's `userData` key, decoded. */
  userData: string;
}

export interface WorkerMachineSet {
  name: string;
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
    kmsKeyARN?: string;
  };
  userDataSecretName: string;
  tags: Record<string, string>;
  availabilityZone?: string;
}

/** Why discovery could not produce a complete result; CamelCase, shown as a Degraded reason. */
export type DiscoveryFailureReason =
  | 'InfrastructureNotFound'
  | 'UnsupportedPlatform'
  | 'NoWorkerMachineSet'
  | 'UserDataSecretNotFound'
  | 'NoTaggedSubnets'
  | 'AMINotFound'
  | 'SecurityGroupNotFound'
  | 'CloudLookupFailed'
  | 'KubernetesLookupFailed';

export type DiscoveryResult<T> =
  | { ok: true; infrastructure: T }
  | { ok: false; reason: DiscoveryFailureReason; message: string };
