import { z } from 'zod';
import { KarpenterDesiredState } from './desired-state.js';

export const Platform = z.enum(['AWS', 'CAPI', 'AZURE']);
export type Platform = z.infer<typeof Platform>;
export const Topology = z.enum(['STANDALONE', 'HOSTED']);
export type Topology = z.infer<typeof Topology>;

/** Upstream Kubernetes condition shape; reasons are CamelCase. */
export const Condition = z.object({
  type: z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'condition types are CamelCase'),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/, 'reasons are CamelCase'),
  message: z.string().max(32768),
  lastTransitionTime: z.iso.datetime(),
});
export type Condition = z.infer<typeof Condition>;

/** What the worker pushes onto `sidecar.<clusterId>`: the whole desired state at one generation. */
export const ReconcileOrder = z.object({
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
    nodePools: z.number().int().nonnegative(),
    vcpus: z.number().nonnegative(),
  })
  .partial();
export type ClusterMetrics = z.infer<typeof ClusterMetrics>;

/** What a sidecar reports: conditions as of `observedGeneration`, stamped with its own clock. */
export const StatusReport = z.object({
  clusterId: z.uuid(),
  observedGeneration: z.number().int().nonnegative(),
  conditions: z.array(Condition).max(64),
  metrics: ClusterMetrics.default({}),
  reportedAt: z.iso.datetime(),
});
export type StatusReport = z.infer<typeof StatusReport>;

export const sidecarQueueName = (clusterId: string): string => `sidecar.${clusterId}`;
export const RECONCILE_QUEUE = 'reconcile';
export const STATUS_INGEST_QUEUE = 'status-ingest';
/** Field manager of every object the sidecar writes with server-side apply. */
export const FIELD_MANAGER = 'karpenter-fleet';

/** What the API asks of the worker: bring this cluster to (at least) this generation. */
export const ReconcileRequest = z.object({
  clusterId: z.uuid(),
  generation: z.number().int().positive(),
});
export type ReconcileRequest = z.infer<typeof ReconcileRequest>;
