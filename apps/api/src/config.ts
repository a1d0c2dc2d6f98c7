import { parseEnv, port, postgresUrl, redisUrl, logLevel } from '@fleet/contracts';
import { z } from 'zod';

export const ApiConfigSchema = z.object({
  DATABASE_URL: postgresUrl,
  REDIS_URL: redisUrl,
  API_PORT: port(4000),
  API_HOST: z.string().default('127.0.0.1'),
  /** Prefix of every BullMQ key, so several fleets (or test suites) can share one Redis. */
  QUEUE_PREFIX: z.string().regex(/^[a-z0-9-]+$/).default('bull'),
  LOG_LEVEL: logLevel,
});
export type ApiConfig = z.infer<typeof ApiConfigSchema>;

export const API_CONFIG = Symbol('API_CONFIG');
export const loadApiConfig = (env: NodeJS.ProcessEnv = process.env): ApiConfig =>
  parseEnv(ApiConfigSchema, env);
