import type {
  KarpenterDesiredState,
  NodeClassOverrides,
  ResourceIdentity,
  Topology,
} from '@fleet/contracts';

export type { ResourceIdentity } from '@fleet/contracts';

export type CloudProviderName = 'aws' | 'capi' | 'azure';

/**
 * Which API server an object is written to. A standalone cluster has one API server, so both
 * targets resolve to the same client there. In the hosted topology (HyperShift) and with Cluster
 * API, `management` is the cluster that runs the operand (the HCP namespace, or the cluster that
 * holds the MachineDeployments) and `workload` is the cluster whose Nodes Karpenter manages
 * (NodePools, NodeClaims, NodeClasses, CSRs, the Karpenter CRDs).
 */
export type ClusterTarget = 'management' | 'workload';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The minimum every rendered object carries; the rest is the kind's own shape. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** An object together with the cluster it is written to. */
export interface TargetedObject<T extends KubeObject = KubeObject> {
  target: ClusterTarget;
  object: T;
}

/**
 * A kind the sidecar writes and therefore prunes: list it on `target` with the label selector
 * OWNED_BY_SELECTOR (in each of `namespaces` when namespaced) and delete what the latest render
 * no longer contains.
 */
export interface OwnedKind extends ResourceIdentity {
  target: ClusterTarget;
  /** For namespaced kinds, the namespaces the sidecar writes them to. */
  namespaces?: string[];
}

/**
 * A CRD the operand needs. `upstream` CRDs ship with Karpenter and are read from the CRD
 * directory the sidecar is given (same layout as libs/crd-schema/upstream); `bundled` ones are
 * written by this project and live beside the provider's code.
 */
export interface CustomResourceDefinitionSource {
  identity: ResourceIdentity;
  target: ClusterTarget;
  origin: 'upstream' | 'bundled';
  /** Relative to the upstream CRD directory for `upstream`; absolute for `bundled`. */
  path: string;
}

/** An entry of ClusterOperator.status.relatedObjects; an empty name means "all of them". */
export interface RelatedObject {
  group: string;
  resource: string;
  name: string;
  namespace?: string;
}

/** A server-side apply patch for a NodeClass someone else created, and what it corrects. */
export interface NodeClassEnforcement {
  patch: KubeObject;
  /** Field paths whose live value differs from the patch; empty means nothing to correct. */
  drifted: string[];
}

/** A claim that a node belongs to a NodeClaim: from the NodeClaim's status and the CSR. */
export interface NodeIdentityClaim {
  nodeName: string;
  providerID: string;
}

export type NodeIdentityVerdict =
  | { nodeName: string; providerID: string; verified: true; instanceID: string }
  | {
      nodeName: string;
      providerID: string;
      verified: false;
      /** CamelCase, suitable for an event or a decision log. */
      reason:
        | 'InvalidProviderID'
        | 'InstanceNotFound'
        | 'InstanceNotRunning'
        | 'NodeNameMismatch'
        | 'CloudLookupFailed';
      message: string;
    };

/** What the sidecar observed of the Karpenter CR and the operand, to report as conditions. */
export type KarpenterObservation =
  { state: 'present' } | { state: 'missing' } | { state: 'error'; message: string };

export type OperandObservation =
  | { state: 'missing' }
  | { state: 'error'; message: string }
  | { state: 'present'; replicas: number; availableReplicas: number; updatedReplicas: number };

export interface OperatorStatusInput {
  karpenter: KarpenterObservation;
  operand: OperandObservation;
  /** The sidecar's own version, reported as versions[name=operator]. */
  version: string;
  /** The conditions currently on the object, so lastTransitionTime moves only on a change. */
  previousConditions?: readonly OperatorCondition[];
  now: Date;
}

export interface OperatorCondition {
  type: 'Available' | 'Progressing' | 'Degraded' | 'Upgradeable';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/**
 * What every platform implements. Rendering is pure: the same infrastructure and desired state
 * give byte-identical objects, so applying an order twice changes nothing. Discovery, applying
 * (server-side apply, field manager FIELD_MANAGER), pruning and watching belong to the sidecar.
 *
 * `TInfra` is what discovery produces for the platform and topology; `TInstanceLookup` is the
 * cloud call the caller supplies for the node identity check (EC2 DescribeInstances, a CAPI
 * Machine list, an Azure VM get).
 */
export interface CloudProvider<TInfra, TInstanceLookup> {
  readonly name: CloudProviderName;
  readonly topology: Topology;
  /** The platform's NodeClass kind, e.g. karpenter.k8s.aws/v1 EC2NodeClass. */
  readonly nodeClass: ResourceIdentity;
  /** Name of the NodeClass the provider keeps; NodePools without a nodeClassRef point at it. */
  readonly defaultNodeClassName: string;
  /** Where the operand runs (a namespace on the `management` target). */
  readonly operandNamespace: string;

  /**
   * The Karpenter release this provider runs when an order names none; orders may name another
   * one the project ships CRDs for (KARPENTER_RELEASES).
   */
  readonly defaultRelease?: string;

  /** CRDs to install (apply) before anything else, of `release` or the default; never pruned. */
  customResourceDefinitions(release?: string): readonly CustomResourceDefinitionSource[];

  /** Namespace, ServiceAccount, RBAC, cloud credentials request, settings CR and Deployment. */
  renderOperand(infra: TInfra, desired: KarpenterDesiredState): TargetedObject[];

  /** The default NodeClass from discovery with the SRE's overrides merged in. */
  renderDefaultNodeClass(infra: TInfra, overrides: NodeClassOverrides): TargetedObject;

  /** Throws InvalidDesiredStateError naming each offending field; never partially renders. */
  validateNodeClassOverrides(overrides: NodeClassOverrides): void;

  /**
   * The apply patch that keeps the cluster-derived fields of any NodeClass (as read from the
   * cluster) in line with discovery. Apply with NODECLASS_ENFORCER_FIELD_MANAGER and force.
   */
  enforceNodeClass(live: KubeObject, infra: TInfra): NodeClassEnforcement;

  renderNodePools(desired: KarpenterDesiredState): TargetedObject[];

  /**
   * Kinds the sidecar writes, in apply order. Prune in reverse, and keep the operand until no
   * NodeClaims remain: NodeClaims and NodeClasses carry Karpenter's finalizers, which only its
   * running controller removes.
   */
  ownedKinds(): readonly OwnedKind[];

  relatedObjects(): RelatedObject[];

  /** Standalone only: the ClusterOperator the cluster's admins see. */
  renderClusterOperator(input: OperatorStatusInput): TargetedObject;

  /** Extracts the cloud's instance identity from a Node/NodeClaim providerID. */
  parseProviderID(providerID: string): string | undefined;

  verifyNodeIdentity(
    claims: readonly NodeIdentityClaim[],
    lookup: TInstanceLookup,
  ): Promise<NodeIdentityVerdict[]>;
}
