import { logLevel, parseEnv, postgresUrl, redisUrl } from '@fleet/contracts';
import { z } from 'zod';

export const WorkerConfigSchema = z.object({
  DATABASE_URL: postgresUrl,
  REDIS_URL: redisUrl,
  QUEUE_PREFIX: z.string().regex(/^[a-z0-9-]+$/).default('bull'),
  LOG_LEVEL: logLevel,
  RECONCILE_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(20),
  INGEST_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(20),
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;
export const loadWorkerConfig = (env: NodeJS.ProcessEnv = process.env): WorkerConfig =>
  parseEnv(WorkerConfigSchema, env);
