import type { OpenShiftAutoscalerObjects } from './openshift/migration.js';
import type {
  MigrationProposal,
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
export interface RenderInput {
  kind: ResourceIdentity;
  name: string;
}

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

/**
 * A kind of per-NodeClass configuration. `nameFor` marks a kind the sidecar may not list (user
 * data Secrets sit beside the cluster's cloud credentials): it is deleted by name instead.
 */
export interface NodeClassConfigKind extends OwnedKind {
  nameFor?: (nodeClass: string) => string;
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
  /**
   * A JSON merge patch sent after `patch`, for fields that must also lose what someone else set
   * in them (server-side apply cannot take those away): standalone OpenShift's `spec.kubelet`.
   */
  mergePatch?: KubeObject;
  /** Field paths whose live value differs from the patch; empty means nothing to correct. */
  drifted: string[];
}

/** A claim that a node belongs to a NodeClaim: from the NodeClaim's status and the CSR. */
export interface NodeIdentityClaim {
  nodeName: string;
  providerID: string;
}

/**
 * The names and addresses the cloud gives a machine: a serving certificate may name these and
 * nothing else (AWS: PrivateDnsName and the private DNS names and IPs of its interfaces).
 */
export interface MachineAddresses {
  dnsNames: string[];
  ipAddresses: string[];
}

export type NodeIdentityVerdict =
  | {
      nodeName: string;
      providerID: string;
      verified: true;
      instanceID: string;
      addresses: MachineAddresses;
    }
  | {
      nodeName: string;
      providerID: string;
      verified: false;
      /** CamelCase, suitable for an event or a decision log. */
      reason:
        | 'InvalidProviderID'
        | 'InstanceNotFound'
        | 'InstanceNotRunning'
        | 'InstanceNotInCluster'
        | 'NodeNameMismatch'
        | 'CloudLookupFailed';
      message: string;
    };

/** What the sidecar observed of the Karpenter CR and the operand, to report as conditions. */
export type KarpenterObservation =
  | { state: 'present' }
  /** `message` where no Karpenter CR is what says so (the fleet's order, on Azure). */
  | { state: 'missing'; message?: string }
  | { state: 'error'; message: string };

export type OperandObservation =
  | { state: 'missing' }
  | { state: 'error'; message: string }
  | { state: 'present'; replicas: number; availableReplicas: number; updatedReplicas: number };

export interface OperatorStatusInput {
  karpenter: KarpenterObservation;
  operand: OperandObservation;
  /**
   * Where no Karpenter CR says whether Karpenter is configured (Azure), the fleet's order does,
   * and a cluster the sidecar refused (its last reconcile Degraded, e.g. ImageNotSupported) says
   * so here first, so `oc get co` shows why nothing runs.
   */
  refusal?: { reason: string; message: string };
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
  /** Where the operand runs (a namespace on the `operandTarget` target). */
  readonly operandNamespace: string;
  /**
   * The API server the operand Deployment is on; `management` when absent (standalone: the same
   * server; hosted: the HCP namespace). Cluster API runs it on the workload cluster, as its
   * chart does.
   */
  readonly operandTarget?: ClusterTarget;
  /**
   * The label Karpenter puts on every Node it launched, naming the NodeClass it came from
   * (AWS: karpenter.k8s.aws/ec2nodeclass). A NodeClass's MachineConfigPool selects by it.
   */
  readonly nodeClassLabel: string;

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
   * cluster) in line with discovery and the desired state. Apply with
   * NODECLASS_ENFORCER_FIELD_MANAGER and force. Throws NodeClassConfigError when the NodeClass
   * cannot get its own pool's user data.
   */
  enforceNodeClass(
    live: KubeObject,
    infra: TInfra,
    desired: KarpenterDesiredState,
  ): NodeClassEnforcement;

  /**
   * What a NodeClass needs on the cluster before anything launches from it, in apply order.
   * Standalone OpenShift: its user-data Secret, MachineConfigPool `karpenter-<nodeclass>` and
   * the pool's KubeletConfig (openshift/machine-config.ts). Hosted topologies return [] (their
   * nodes get configuration from the HostedCluster, and `spec.kubelet` stays on the NodeClass).
   * Throws NodeClassConfigError.
   */
  renderNodeClassConfig(
    infra: TInfra,
    nodeClass: string,
    desired: KarpenterDesiredState,
  ): TargetedObject[];

  /** Kinds renderNodeClassConfig writes; pruned once their NodeClass and its Nodes are gone. */
  nodeClassConfigKinds(): readonly NodeClassConfigKind[];

  /**
   * The fleet's NodePools. `infra`, when given, is what discovery found (Azure: the worker
   * MachineSets' zones become a zone requirement, since its NodeClass has none).
   */
  renderNodePools(desired: KarpenterDesiredState, infra?: TInfra): TargetedObject[];

  /**
   * ValidatingAdmissionPolicies (and bindings) that keep others from changing what the provider
   * enforces, rendered while Karpenter is enabled; requests by `sidecarUsername` (the sidecar's
   * own user, as the API server authenticates it) are exempt.
   */
  renderAdmissionPolicies?(sidecarUsername: string): TargetedObject[];

  /**
   * Where NodeClasses need configuration before they launch (renderNodeClassConfig), the launch
   * gate's list of those whose configuration is in place; admission refuses a NodeClaim of any
   * other NodeClass. Written by the NodeClass controller only.
   */
  renderLaunchableNodeClasses?(launchable: string[]): TargetedObject;

  /**
   * Fields of a rendered object the sidecar sets only when it creates the object, and leaves to
   * someone else afterwards (Cluster API: a MachineDeployment's `spec.replicas`, which Karpenter
   * scales). Each a path of keys; the sidecar creates the object whole, then applies it without
   * them, so its field manager never owns them.
   */
  createOnlyFields?(object: KubeObject): readonly (readonly string[])[];

  /**
   * Kinds the sidecar writes, in apply order. Prune in reverse, and keep the operand until no
   * NodeClaims remain: NodeClaims and NodeClasses carry Karpenter's finalizers, which only its
   * running controller removes.
   */
  ownedKinds(): readonly OwnedKind[];

  /**
   * Cluster-scoped objects on the workload cluster that rendering reads (through discovery):
   * the sidecar watches each by name and applies the current order again when one changes, so
   * the operand follows them without a new order from the fleet.
   */
  renderInputs?(): readonly RenderInput[];

  /**
   * The migration proposal (Cluster Autoscaler → Karpenter) from OpenShift's Cluster Autoscaler
   * objects, where the platform reads their MachineSets' providerSpec. Pure; absent where the
   * platform proposes nothing yet.
   */
  proposeMigration?(objects: OpenShiftAutoscalerObjects): MigrationProposal;

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
