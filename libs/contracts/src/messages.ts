import { hashTag, redisKey } from './redis.js';
import { refinementInJsonSchema } from './json-schema-refinement.js';
import { z } from 'zod';
import { ReportedMigrationProposal } from './migration.js';
import { KarpenterDesiredState } from './desired-state.js';

export const Platform = z.enum(['AWS', 'CAPI', 'AZURE']);
export type Platform = z.infer<typeof Platform>;
export const Topology = z.enum(['STANDALONE', 'HOSTED']);
export type Topology = z.infer<typeof Topology>;

/** Upstream Kubernetes condition shape; reasons are CamelCase. */
export const Condition = z.object({
  // Bounded by what the fleet stores (ConditionTransition type 64, reason 128), so a valid
  // report can always be ingested; message ≤ 32768 as metav1.Condition's.
  type: z
    .string()
    .max(64)
    .regex(/^[A-Z][A-Za-z0-9]*$/, 'condition types are CamelCase'),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z
    .string()
    .max(128)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/, 'reasons are CamelCase'),
  message: z.string().max(32768),
  lastTransitionTime: z.iso.datetime(),
});
export type Condition = z.infer<typeof Condition>;

/**
 * The version of the order and report contract this code speaks.
 * 1: orders without `contractVersion`, reports without `sidecar` (sidecars that ignore the
 *    order's platform and topology and run the standalone AWS logic on every order).
 * 2: orders carry `contractVersion`; the sidecar chooses its driver from platform and topology,
 *    refuses what it has no driver for, and reports `sidecar {version, contractVersion}`.
 * A sidecar refuses an order of a newer contract; the fleet does not send one to a sidecar that
 * reported an older contract.
 */
export const CONTRACT_VERSION = 2;

/**
 * The oldest contract that reads an order correctly, which the order carries. A contract-1
 * sidecar applies the standalone AWS logic to every order, which is right only for that pair.
 */
export function orderContractVersion(order: { platform: Platform; topology: Topology }): number {
  return order.platform === 'AWS' && order.topology === 'STANDALONE' ? 1 : 2;
}

/** What the worker pushes onto `sidecar.<clusterId>`: the whole desired state at one generation. */
export const ReconcileOrder = z.object({
  /** Absent in contract 1. */
  contractVersion: z.number().int().positive().default(1),
  clusterId: z.uuid(),
  generation: z.number().int().positive(),
  platform: Platform,
  topology: Topology,
  spec: KarpenterDesiredState,
});
export type ReconcileOrder = z.infer<typeof ReconcileOrder>;

export const ClusterMetrics = z
  .object({
    nodes: z.number().int().nonnegative(),
    nodeClaims: z.number().int().nonnegative(),
    /** NodeClaims by their most advanced true condition: Launched, Registered, Initialized, Ready. */
    // Keys are condition types (Launched, ..., Ready) or Pending/Terminating. CamelCase also
    // keeps out `__proto__`, which a plain object cannot hold as a key: it was accepted and lost.
    nodeClaimsByState: z
      .record(
        z
          .string()
          .max(64)
          .regex(/^[A-Z][A-Za-z0-9]*$/, 'NodeClaim states are CamelCase, e.g. Launched'),
        z.number().int().nonnegative(),
      )
      .refine((o) => Object.keys(o).length <= 16, 'at most 16 states')
      // The refinement as JSON Schema says it, for the compiled validator (json-validator.ts).
      .meta(refinementInJsonSchema({ maxProperties: 16 })),
    nodePools: z.number().int().nonnegative(),
    vcpus: z.number().nonnegative(),
    pendingPods: z.number().int().nonnegative(),
    csrApproved: z.number().int().nonnegative(),
    csrIgnored: z.number().int().nonnegative(),
    /** CSRs that claimed a Karpenter node and failed its checks (left pending, never approved). */
    csrDenied: z.number().int().nonnegative(),
    /**
     * Decisions the sidecar could not deliver and gave up on, since it started: the oldest of a
     * full outbox, or one the fleet API refused on its own (400/413 for it alone).
     */
    csrDecisionsDropped: z.number().int().nonnegative(),
    /**
     * NodeClaims whose Launched condition is False: the cloud refused or failed the instance
     * (capacity, quota, a bad NodeClass). Rollout health gates read it (maxNodeClaimLaunchFailures).
     */
    nodeClaimLaunchFailures: z.number().int().nonnegative(),
    /**
     * When those launches failed (the Launched=False condition's lastTransitionTime, else the
     * NodeClaim's creationTimestamp), newest first, at most 64: stable while nothing changes, so
     * heartbeats still go, and the rollout gate counts only failures after the change was applied.
     */
    nodeClaimLaunchFailureTimes: z.array(z.iso.datetime({ offset: true })).max(64),
    /**
     * When the oldest Pending pod the scheduler marked Unschedulable was created (absent when
     * none): capacity Karpenter did not provide. Read by maxPendingPodSeconds, counted from no
     * earlier than the change being applied. A timestamp, not an age: the report stays equal (and
     * goes as a heartbeat) while the same pod stays pending.
     */
    oldestPendingPodSince: z.iso.datetime({ offset: true }),
    /**
     * Deprecated (sidecars before oldestPendingPodSince sent it; still accepted and read): age in
     * whole seconds of that pod when reported, 0 when none.
     */
    oldestPendingPodSeconds: z.number().int().nonnegative(),
  })
  .partial();
export type ClusterMetrics = z.infer<typeof ClusterMetrics>;

/** One decision of the CSR approver, kept so the fleet can audit what was let in and why not. */
export const CsrDecision = z.object({
  csrName: z.string().max(253),
  nodeName: z.string().max(253).optional(),
  signerName: z.string().max(253),
  decision: z.enum(['Approved', 'Ignored', 'Denied']),
  /** CamelCase, e.g. KarpenterCSRApprove, UnknownNodeName, NodeNameMismatch, RateLimited. */
  reason: z.string().max(64),
  message: z.string().max(1024),
  decidedAt: z.iso.datetime(),
});
export type CsrDecision = z.infer<typeof CsrDecision>;

/** What the sidecar found of the Cluster Autoscaler on the cluster. */
export const ClusterAutoscalerState = z.object({
  mode: z.enum(['KEEP', 'DISABLE', 'MIGRATE']),
  /** Present: ClusterAutoscaler/default exists; Removed: kept aside by the fleet; Absent: never there. */
  observed: z.enum(['Present', 'Removed', 'Absent']),
  machineAutoscalers: z.number().int().nonnegative(),
  /**
   * Where the Cluster Autoscaler is configured two ways at once (OpenShift's own Cluster API):
   * the kinds through which it was found in play on the cluster now, e.g. ClusterAutoscaler,
   * MachineAutoscaler, MachineDeployment, MachineSet (a size-annotated group). Absent elsewhere.
   */
  observedKinds: z.array(z.string().max(64)).max(16).optional(),
});
export type ClusterAutoscalerState = z.infer<typeof ClusterAutoscalerState>;

/**
 * NodeClaims a report carries (issue 47): every launch failure first, then the newest, at most
 * this many, so a report stays small (about 400 bytes each) however many nodes a cluster runs.
 */
export const REPORT_NODECLAIMS_MAX = 20;

/** One NodeClaim as the sidecar sees it: what Karpenter launched or failed to launch, and why. */
export const NodeClaimSummary = z.object({
  name: z.string().min(1).max(253),
  nodePool: z.string().max(253).optional(),
  /** The Node it registered as (status.nodeName), once it did. */
  nodeName: z.string().max(253).optional(),
  instanceType: z.string().max(64).optional(),
  zone: z.string().max(64).optional(),
  /** karpenter.sh/capacity-type: on-demand, spot, reserved. */
  capacityType: z.string().max(32).optional(),
  /** Its most advanced true condition (Launched … Ready), or Pending, or Terminating. */
  state: z
    .string()
    .max(64)
    .regex(/^[A-Z][A-Za-z0-9]*$/, 'NodeClaim states are CamelCase, e.g. Launched'),
  createdAt: z.iso.datetime({ offset: true }),
  /** Launched=False: the cloud refused or failed the instance, with Karpenter's reason. */
  launchFailure: z.object({ reason: z.string().max(128), message: z.string().max(512) }).optional(),
});
export type NodeClaimSummary = z.infer<typeof NodeClaimSummary>;

/** Decisions a report may carry (the outbox of a contract-1 sidecar could send them all). */
export const REPORT_CSR_DECISIONS_MAX = 1000;

/**
 * The fleet API's body limit for a status report. The largest valid report — 64 conditions
 * and 1000 decisions, every string at its maximum length, written by JSON.stringify — is about
 * 4.3 MB (`largestStatusReport` in test support, checked by reports e2e); this leaves room for
 * multi-byte UTF-8 in the longest strings. A sidecar of this release sends far less: at most
 * REPORT_DECISIONS_PER_SEND decisions a report.
 */
export const STATUS_REPORT_BODY_LIMIT_BYTES = 6 * 1024 * 1024;

/** Decisions one report of this sidecar carries; the rest follow in the next reports. */
export const REPORT_DECISIONS_PER_SEND = 100;
/**
 * One NodeClass's MachineConfigPool (`karpenter-<nodeclass>`) as the Machine Config Operator
 * reports it: machine counts, the rendered configuration and the Updated/Updating/Degraded
 * conditions. `updating` is the machines neither updated nor degraded.
 */
export const MachineConfigPoolState = z.object({
  nodeClass: z.string().max(253),
  name: z.string().max(253),
  machineCount: z.number().int().nonnegative(),
  updatedMachineCount: z.number().int().nonnegative(),
  updatingMachineCount: z.number().int().nonnegative(),
  degradedMachineCount: z.number().int().nonnegative(),
  readyMachineCount: z.number().int().nonnegative(),
  /** status.configuration.name (`rendered-<pool>-<hash>`); absent before the MCO rendered one. */
  renderedConfig: z.string().max(253).optional(),
  conditions: z.array(Condition).max(16),
});
export type MachineConfigPoolState = z.infer<typeof MachineConfigPoolState>;

/** Field paths one drift entry lists; the rest are counted in `moreFields`. */
export const DRIFT_FIELDS_MAX = 16;
/** Drift entries one report carries (open ones first, then the latest corrections). */
export const DRIFT_ENTRIES_MAX = 32;

/**
 * One object the fleet owns that someone else changed (a field the fleet's field manager had
 * applied is now owned by another manager, or gone) or deleted, as the sidecar saw it.
 */
export const DriftEntry = z.object({
  /** The API server it is on (management for hosted and Cluster API operands). */
  target: z.enum(['workload', 'management']),
  apiVersion: z.string().max(253),
  kind: z.string().max(63),
  namespace: z.string().max(63).optional(),
  name: z.string().max(253),
  change: z.enum(['Modified', 'Deleted']),
  /**
   * The managed fields taken over or removed, as `.spec.limits.cpu` paths, each with the field
   * manager that now owns it (absent when the field was removed and nobody owns it).
   */
  fields: z
    .array(z.object({ path: z.string().max(512), manager: z.string().max(128).optional() }))
    .max(DRIFT_FIELDS_MAX),
  moreFields: z.number().int().nonnegative().optional(),
  detectedAt: z.iso.datetime(),
  /** Set once the fleet put the object back (policy CORRECT). */
  correctedAt: z.iso.datetime().optional(),
});
export type DriftEntry = z.infer<typeof DriftEntry>;

/** What a sidecar reports: conditions as of `observedGeneration`, stamped with its own clock. */
export const StatusReport = z.object({
  clusterId: z.uuid(),
  observedGeneration: z.number().int().nonnegative(),
  conditions: z.array(Condition).max(64),
  metrics: ClusterMetrics.default({}),
  /** Decisions since the previous report (each is sent until a report carrying it is accepted). */
  csrDecisions: z.array(CsrDecision).max(REPORT_CSR_DECISIONS_MAX).default([]),
  clusterAutoscaler: ClusterAutoscalerState.optional(),
  /** Standalone OpenShift: each NodeClass's MachineConfigPool; absent where there are none. */
  machineConfigPools: z.array(MachineConfigPoolState).max(256).optional(),
  /**
   * What Karpenter launched (issue 47): launch failures first, then the newest NodeClaims, at
   * most REPORT_NODECLAIMS_MAX. Absent from older sidecars and before the NodeClaim watch synced.
   */
  nodeClaims: z.array(NodeClaimSummary).max(REPORT_NODECLAIMS_MAX).optional(),
  /**
   * Drift of the objects the fleet owns: open entries (left in place under REPORT, or being
   * corrected) and recent corrections. Absent from sidecars that do not watch for drift.
   */
  drift: z.array(DriftEntry).max(DRIFT_ENTRIES_MAX).optional(),
  /**
   * While the Cluster Autoscaler is in play (mode KEEP or MIGRATE, its objects present): the
   * NodePools and NodeClass overrides the sidecar proposes in its place, recomputed only when
   * what the Cluster Autoscaler reads changed. Absent otherwise, and from older sidecars.
   */
  migrationProposal: ReportedMigrationProposal.optional(),
  /** The sidecar's release and the newest contract it speaks; absent from contract-1 sidecars. */
  sidecar: z
    .object({
      version: z.string().min(1).max(64),
      contractVersion: z.number().int().positive(),
    })
    .optional(),
  reportedAt: z.iso.datetime(),
  /**
   * The sidecar's digest of this report without `reportedAt` (`reportDigest`): once the fleet
   * applied it, a heartbeat naming it refreshes liveness without a full report (issue 19).
   * Absent from older sidecars; the fleet never computes it, it only compares.
   */
  digest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'a SHA-256 in lowercase hex')
    .optional(),
});
export type StatusReport = z.infer<typeof StatusReport>;

/**
 * A heartbeat that changes nothing (`POST /v1/clusters/:id/heartbeat`): "my status is still the
 * report of this digest". Accepted (202) only while that digest is the one the fleet applied
 * last for the cluster; otherwise 409 and the sidecar sends its full report.
 */
export const Heartbeat = z.object({
  clusterId: z.uuid(),
  digest: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in lowercase hex'),
});
export type Heartbeat = z.infer<typeof Heartbeat>;

/**
 * Redis keys of the report path (issue 19), each a fixed name under the queue prefix, all named
 * here so that Redis Cluster can give them a hash tag in one place:
 * - `reports`: the stream the API appends accepted reports to and the workers drain (group
 *   `INGEST_GROUP`);
 * - `digests`: hash cluster id → digest of the report last applied to PostgreSQL;
 * - `liveness`: hash cluster id → when (fleet clock, ms) the last heartbeat was accepted;
 * - `liveness-flushing`: the part of `liveness` a worker is writing to PostgreSQL;
 * - `digest-fences`: hash cluster id → how many times a sweep forgot its digest (a worker records
 *   a digest only if this did not move while its report was being written).
 * A cluster's entries in `digests` and `digest-fences` are deleted when it is deregistered
 * (QueuesService.forgetClusterIngestState: safe with a report in flight, as cluster ids are never
 * reused and no report of a deleted cluster commits).
 * The two liveness hashes are touched by one Lua script together, and the heartbeat script reads
 * `digests` beside `liveness`: every ingest key carries the hash tag `{ingest}`, so on a Redis
 * Cluster they share one slot.
 */
export type IngestKeyName =
  'reports' | 'digests' | 'digest-fences' | 'liveness' | 'liveness-flushing';
export const ingestKey = (prefix: string, name: IngestKeyName): string =>
  redisKey(prefix, 'ingest', name);
/** The consumer group of the workers on the `reports` stream. */
export const INGEST_GROUP = 'ingest';
/** The field of a `reports` stream entry holding the IngestedStatusReport as JSON. */
export const INGEST_REPORT_FIELD = 'r';
/**
 * An entry the API appends since issue 48 holds instead the report's body as the sidecar sent it
 * (validated as a StatusReport by the API before it was appended) and, in a field of its own,
 * when the API received it: the API neither serializes the report again nor re-encodes it.
 */
export const INGEST_BODY_FIELD = 'b';
export const INGEST_RECEIVED_AT_FIELD = 't';

/**
 * A report as the API queues it for ingest: `receivedAt` is the API's clock when it accepted
 * the report, and the only time status ordering, lastReportAt and staleness use; the sidecar's
 * `reportedAt` is information only (a sidecar's clock, or a compromised node, could say
 * anything). Absent from jobs queued before the API stamped it: then reportedAt stands in.
 */
export const IngestedStatusReport = StatusReport.extend({
  receivedAt: z.iso.datetime().optional(),
});
export type IngestedStatusReport = z.infer<typeof IngestedStatusReport>;

/**
 * Every BullMQ queue name is hash-tagged (`{name}`): BullMQ's keys are `<prefix>:<queue>:<suffix>`,
 * so all keys of one queue, everything its Lua scripts touch, and a sidecar's ACL key pattern
 * land in one Redis Cluster slot, while different queues (clusters) spread over every slot.
 * Queue names go through `queueName`; other keys through `redisKey` (redis.ts).
 */
export const queueName = (name: string): string => hashTag(name);
/**
 * A queue's name without its hash tag (`{reconcile}` → `reconcile`): what people and dashboards
 * see (metrics' `queue` label, a dead letter's `queue`), as before queues were tagged.
 */
export const queueLabel = (name: string): string => name.replace(/^\{(.*)\}$/, '$1');
export const sidecarQueueName = (clusterId: string): string => queueName(`sidecar.${clusterId}`);
export const RECONCILE_QUEUE = queueName('reconcile');
export const STATUS_INGEST_QUEUE = queueName('status-ingest');
/** Field manager of every object the sidecar writes with server-side apply. */
export const FIELD_MANAGER = 'karpenter-fleet';

/** What the API asks of the worker: bring this cluster to (at least) this generation. */
export const ReconcileRequest = z.object({
  clusterId: z.uuid(),
  generation: z.number().int().positive(),
  /** Send the order even if the cluster reports this generation applied (reconcileCluster). */
  force: z.boolean().optional(),
});
export type ReconcileRequest = z.infer<typeof ReconcileRequest>;

/** Published on Redis by whoever changes a cluster (API mutations, worker ingest, rollouts). */
export const FleetEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('cluster-changed'), clusterId: z.uuid() }),
  z.object({ type: z.literal('rollout-changed'), rolloutId: z.uuid() }),
  /** A cluster's report token changed or ended (rotation, deregistration): drop cached ones. */
  z.object({ type: z.literal('credentials-changed'), clusterId: z.uuid() }),
  /** An API replica's probe of its own subscription: it expects its own back (`replica`). */
  z.object({ type: z.literal('subscription-check'), replica: z.string().max(64) }),
]);
export type FleetEvent = z.infer<typeof FleetEvent>;
export const fleetEventsChannel = (prefix: string): string => `${prefix}:fleet-events`;
