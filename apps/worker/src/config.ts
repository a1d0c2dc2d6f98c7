import {
  DEFAULT_KARPENTER_VERSION,
  imageByDigest,
  KarpenterVersion,
  logLevel,
  parseEnv,
  postgresUrl,
  redisUrl,
} from '@fleet/contracts';
import { z } from 'zod';

export const WorkerConfigSchema = z.object({
  DATABASE_URL: postgresUrl,
  REDIS_URL: redisUrl,
  QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .default('bull'),
  LOG_LEVEL: logLevel,
  /** /healthz, /readyz and /metrics are served only when a port is given (deployments do). */
  OPS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  OPS_HOST: z.string().default('127.0.0.1'),
  /**
   * How often rotations expire and sidecar Redis users changed since the last pass are written
   * again (all of them when Redis lost its ACL users).
   */
  ACL_SYNC_SECONDS: z.coerce.number().int().min(1).default(60),
  /** How often every sidecar Redis user is rewritten from PostgreSQL whatever happened. */
  ACL_FULL_SYNC_SECONDS: z.coerce.number().int().min(1).default(3600),
  RECONCILE_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(20),
  /** How often running rollouts advance (a BullMQ job scheduler; see docs/ROLLOUTS.md). */
  ROLLOUT_TICK_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  /** Ingest jobs in flight; they fill the write batches, so keep it at least INGEST_BATCH_SIZE. */
  INGEST_CONCURRENCY: z.coerce.number().int().min(1).max(5000).default(1000),
  INGEST_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(500),
  INGEST_FLUSH_MS: z.coerce.number().int().min(1).max(5000).default(50),
  /** How often heartbeats' liveness goes from Redis to PostgreSQL (and before each sweep). */
  LIVENESS_FLUSH_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  /** The sidecars' heartbeat interval; a cluster silent for STALE_AFTER_HEARTBEATS of them is Stale. */
  HEARTBEAT_SECONDS: z.coerce.number().positive().default(30),
  STALE_AFTER_HEARTBEATS: z.coerce.number().positive().default(3),
  /** A dispatched order not applied within this long raises OrderNotTaken. */
  ORDER_NOT_TAKEN_SECONDS: z.coerce.number().positive().default(300),
  SWEEP_EVERY_SECONDS: z.coerce.number().positive().default(15),
  RESYNC_EVERY_SECONDS: z.coerce.number().positive().default(60),
  HISTORY_EVERY_SECONDS: z.coerce.number().positive().default(3600),
  HISTORY_RAW_RETENTION_DAYS: z.coerce.number().int().min(1).default(7),
  HISTORY_ROLLUP_RETENTION_DAYS: z.coerce.number().int().min(1).default(90),
  HISTORY_PARTITIONS_AHEAD_DAYS: z.coerce.number().int().min(1).max(60).default(3),
  /**
   * The fleet default Karpenter release for clusters without their own (setKarpenter
   * karpenterVersion); changing it reaches each cluster only with its next order, so upgrade
   * the fleet with a rollout of karpenterVersion instead (docs/ROLLOUTS.md).
   */
  KARPENTER_VERSION: KarpenterVersion.default(DEFAULT_KARPENTER_VERSION),
  /** The fleet default's image from a mirror, by digest (disconnected fleets). */
  KARPENTER_IMAGE: imageByDigest.optional(),
  /**
   * A job whose worker died is retried after this long (BullMQ lock duration and stall check);
   * a report stream entry left unacknowledged this long is taken over by another worker.
   */
  JOB_LOCK_MS: z.coerce.number().int().min(500).default(30_000),
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;
export const loadWorkerConfig = (env: NodeJS.ProcessEnv = process.env): WorkerConfig =>
  parseEnv(WorkerConfigSchema, env);

/** The fleet default operand of a worker's configuration. */
export const operandDefault = (
  config: Pick<WorkerConfig, 'KARPENTER_VERSION' | 'KARPENTER_IMAGE'>,
) => ({
  version: config.KARPENTER_VERSION,
  ...(config.KARPENTER_IMAGE ? { image: config.KARPENTER_IMAGE } : {}),
});
