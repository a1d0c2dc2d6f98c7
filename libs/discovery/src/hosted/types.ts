/** The HostedCluster a HostedControlPlane belongs to (on the management cluster). */
export interface HostedClusterRef {
  namespace: string;
  name: string;
}

/** What the release status of the hosted control plane says (HCP status.versionStatus). */
export interface HostedRelease {
  /** The version the control plane is reconciling towards. */
  desiredVersion?: string;
  desiredImage?: string;
  /**
   * An upgrade is in progress: the newest history entry is Partial and an older one Completed
   * (HyperShift's controlplaneversion.go writes Partial for the install too, as the only entry).
   */
  updating: boolean;
  /** The install is in progress: the only history entries are Partial, none Completed yet. */
  installing: boolean;
}

/** The AutoNode (Karpenter) configuration HyperShift holds in spec.autoNode. */
export interface AutoNodeSpec {
  provisioner: string;
  platform?: string;
  roleARN?: string;
}

/** HyperShift's view of AutoNode (status.autoNode), counts as written by its karpenter-operator. */
export interface AutoNodeCounts {
  nodeCount?: number;
  nodeClaimCount?: number;
  vcpus?: number;
}

/** What discovery learns from a hosted control plane on AWS. */
export interface HostedAwsInfrastructure {
  hcpNamespace: string;
  hcpName: string;
  hostedCluster: HostedClusterRef;
  infraID: string;
  region: string;
  release: HostedRelease;
  /** Absent when AutoNode is not configured on the HostedControlPlane. */
  autoNode?: AutoNodeSpec;
  autoNodeStatus: AutoNodeCounts;
  /** The instance profile HyperShift made for Karpenter nodes, when it has made one. */
  instanceProfile?: string;
  /** spec.platform.aws.resourceTags: the cluster's tags, which every AWS resource carries. */
  resourceTags: HostedResourceTag[];
  /** status.controlPlaneEndpoint as `https://host:port`, once HyperShift has published it. */
  controlPlaneEndpoint?: string;
  /** metadata.deletionTimestamp is set: the HostedControlPlane is being deleted. */
  deleting: boolean;
  /** metadata.finalizers, to know whether a finalizer is held. */
  finalizers: string[];
}

/** One of HyperShift's cluster tags; `Allow` lets a NodeClass's own tag of that key win. */
export interface HostedResourceTag {
  key: string;
  value: string;
  overridePolicy?: string;
}

/**
 * Which Karpenter a hosted cluster runs. `AutoNode`: HyperShift's own karpenter-operator (it runs
 * while HostedCluster.spec.autoNode is set). `None`: neither HyperShift's operator nor spec.autoNode.
 */
export interface HostedModeObservation {
  /** HyperShift's karpenter-operator Deployment exists in the HCP namespace. */
  hypershiftOperator: boolean;
  /** HyperShift's operand (`karpenter`) Deployment, when it exists. */
  operand?: { replicas: number; availableReplicas: number; updatedReplicas: number };
  /** spec.autoNode of the HostedControlPlane (a copy of the HostedCluster's). */
  autoNodeConfigured: boolean;
}
