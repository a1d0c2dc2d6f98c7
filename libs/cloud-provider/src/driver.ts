import type {
  KarpenterDesiredState,
  NodeClassOverrides,
  Platform,
  Topology,
} from '@fleet/contracts';
import type { ClusterObjectReader, DiscoveryResult } from '@fleet/discovery';
import type {
  CloudProvider,
  ClusterTarget,
  KubeObject,
  NodeIdentityClaim,
  NodeIdentityVerdict,
  ResourceIdentity,
  TargetedObject,
} from './types.js';

/**
 * Status objects a driver keeps up to date for the cluster's own administrators, besides the
 * fleet's report. Only standalone OpenShift has a ClusterOperator (HyperShift writes a hosted
 * control plane's status.autoNode itself) — see docs/DESIGN.md § Drivers.
 */
export type StatusSurface = 'ClusterOperator';

/** What the sidecar hands a driver when it creates it. */
export interface DriverContext {
  /** Reads for discovery, on the API server of the given target. */
  reader(target: ClusterTarget): ClusterObjectReader;
  /**
   * The process environment. Each driver reads its cloud's endpoint and credentials from it in
   * one place of its own folder (aws/credentials.ts), so the sidecar never names a cloud.
   */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * A server-side dry-run create (`dryRun=All`) on the API server of `target`: resolves when it
   * would accept the object, rejects with the API server's answer otherwise. Writes nothing.
   */
  dryRunCreate?: (target: ClusterTarget, object: KubeObject) => Promise<void>;
  /** Whether `management` and `workload` are one API server. */
  sameApiServer?: boolean;
  /** A bound service-account token (TokenRequest) on the API server of `target`. */
  requestToken?: (
    target: ClusterTarget,
    namespace: string,
    serviceAccount: string,
    expirationSeconds: number,
  ) => Promise<{ token: string; expirationTimestamp: string }>;
  /** The clock for expiries (ms since the epoch); Date.now unless a test moves time. */
  now?: () => number;
  /** How the sidecar reaches the API server of `target`, for a kubeconfig it hands on. */
  connection?: (target: ClusterTarget) => {
    server: string;
    certificateAuthorityData?: string;
    insecureSkipTLSVerify?: boolean;
  };
}

/** The cloud check behind CSR approval, bound to the infrastructure discovery found. */
export type NodeIdentityCheck = (
  claims: readonly NodeIdentityClaim[],
) => Promise<NodeIdentityVerdict[]>;

/**
 * Everything the sidecar needs for one platform and topology: the CloudProvider that renders,
 * the discovery that feeds it, the node-identity lookup behind CSR approval, which API servers
 * the topology has and which status surfaces it owns. The sidecar only ever holds a
 * `ClusterDriver`; which one is decided by the registry from the order.
 */
export interface ClusterDriver<TInfra = unknown> {
  readonly platform: Platform;
  readonly topology: Topology;
  readonly provider: CloudProvider<TInfra, unknown>;
  readonly statusSurfaces: readonly StatusSurface[];
  /** Never throws: a missing piece is a Degraded reason. */
  discover(): Promise<DiscoveryResult<TInfra>>;
  nodeIdentity(infra: TInfra): NodeIdentityCheck;
  /**
   * Cloud lookups rendering needs for this desired state, done before it (rendering is
   * synchronous): Cluster API's instance type capacities. Returns the infrastructure to render
   * with, or a Degraded reason naming what is wrong. Never throws.
   */
  prepare?(
    infra: TInfra,
    desired: KarpenterDesiredState,
  ): Promise<{ ok: true; infra: TInfra } | { ok: false; reason: string; message: string }>;
  /**
   * Asks the API servers, before the first write of an order, whether they accept what the
   * order writes (Cluster API: a server-side dry-run create of a MachineDeployment). A Degraded
   * reason and message when they refuse; nothing is written then. Never throws.
   */
  checkWrites?(
    desired: readonly TargetedObject[],
  ): Promise<{ reason: string; message: string } | undefined>;
  /**
   * Checks in the cloud what the desired state names (e.g. an SQS interruption queue) before
   * anything is applied; a Degraded reason and message when it is not there. Never throws.
   */
  checkCloud?(
    infra: TInfra,
    desired: KarpenterDesiredState,
  ): Promise<{ reason: string; message: string } | undefined>;
  /**
   * Objects that can only be rendered once the rendered ones exist (Cluster API with a separate
   * management cluster: the operand's kubeconfig Secret, holding a token of a ServiceAccount the
   * render creates). Applied after them, kept and pruned with them. Throws on failure.
   */
  renderAfterApply?(infra: TInfra, desired: KarpenterDesiredState): Promise<TargetedObject[]>;
  /**
   * Whether credentials renderAfterApply handed the operand are due for renewal (Cluster API:
   * the management token past half its life). The sidecar asks on a timer and applies the
   * current order again when they are, so renewal needs no new order. Throws on failure.
   */
  credentialsDue?(): Promise<boolean>;
  /** Releases the cloud clients. */
  close(): void;
}

/**
 * What the fleet API checks for a platform before it stores desired state, so that what a
 * cluster would refuse is refused at the API. Each platform defines it in its own folder.
 */
export interface PlatformRules {
  readonly platform: Platform;
  readonly nodeClass: ResourceIdentity;
  /** The NodeClass CRD, relative to the Karpenter CRD directory (libs/crd-schema/upstream/karpenter). */
  readonly nodeClassCrdFile: string;
  /**
   * A complete NodeClass: the overrides over placeholders for what discovery fills in, so the
   * CRD can judge the overrides alone.
   */
  nodeClassForValidation(overrides: NodeClassOverrides): KubeObject;
  /** The provider's own rules beyond the CRD; throws InvalidDesiredStateError. */
  validateNodeClassOverrides(overrides: NodeClassOverrides): void;
  /** Why Karpenter would ignore a NodePool with this nodeClassRef here (nodeClassRefProblem). */
  nodeClassRefProblem(nodeClassRef: unknown): string | undefined;
}

/**
 * What is known of a platform and topology pair without loading its driver's code (its cloud's
 * SDK): what the fleet API checks, and which API servers the sidecar connects first.
 */
export interface DriverDescription {
  readonly platform: Platform;
  readonly topology: Topology;
  readonly rules: PlatformRules;
  /**
   * The API servers the topology has, known before the driver is created (the sidecar connects
   * them first). Standalone: `workload` only, and `management` is the same server. Hosted and
   * Cluster API: `management` and `workload`.
   */
  readonly targets: readonly ClusterTarget[];
  /**
   * With two targets, the one the sidecar runs on (its own API server): `management` (hosted:
   * the workload's kubeconfig comes from WORKLOAD_KUBECONFIG) unless said otherwise. Cluster API
   * runs it on the workload cluster; the management cluster is MANAGEMENT_KUBECONFIG when it is
   * another cluster, else the same server (OpenShift's own Cluster API).
   */
  readonly sidecarRunsOn?: ClusterTarget;
}

/** A driver's code: its description and how to create it (each platform's driver.ts). */
export interface DriverRegistration extends DriverDescription {
  readonly create: (context: DriverContext) => ClusterDriver;
}

/**
 * One entry of the registry: a platform and topology pair the fleet supports. The driver's code
 * is imported by `load()`, so a sidecar loads its own platform's cloud SDK and no other (a
 * standalone AWS sidecar never needs the Azure SDK or the Cluster API code: issue 48, target 5),
 * and the fleet API, which only reads `rules`, loads none.
 */
export interface RegisteredDriver extends DriverDescription {
  readonly load: () => Promise<DriverRegistration>;
}
