import { z } from 'zod';
import { parseRedisUrl } from './redis.js';

/**
 * Parses process configuration with a zod schema and fails with one line per bad variable, so a
 * mistyped REDIS_URL says so at start-up instead of as a connection error minutes later.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map(
    (issue) => `  ${issue.path.join('.') || '(environment)'}: ${issue.message}`,
  );
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}

export const postgresUrl = z
  .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgresql:// URL' })
  .default('postgresql://postgres@127.0.0.1:5432/karpenter_fleet');
export const redisUrl = z
  .url({
    protocol: /^(rediss?|rediss?-cluster)$/,
    error: 'must be a redis:// URL (or rediss://, redis-cluster://, rediss-cluster://)',
  })
  .superRefine((url, ctx) => {
    try {
      parseRedisUrl(url);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^REDIS_URL: /, '') });
    }
  })
  .default('redis://127.0.0.1:6379');
export const port = (fallback: number) =>
  z.coerce.number().int().min(0).max(65535).default(fallback);
export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');
