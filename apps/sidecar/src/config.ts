import { logLevel, parseEnv, redisUrl } from '@fleet/contracts';
import { z } from 'zod';

export const SidecarConfigSchema = z.object({
  CLUSTER_ID: z.uuid({ error: 'must be the cluster ID the fleet API gave at registration' }),
  REPORT_TOKEN: z.string().min(16, 'must be the report token the fleet API gave at registration'),
  API_URL: z.url({ error: 'must be the fleet API base URL, e.g. https://fleet.example.com' }),
  REDIS_URL: redisUrl,
  QUEUE_PREFIX: z.string().regex(/^[a-z0-9-]+$/).default('bull'),
  /** Kubeconfig of the cluster; in a pod, leave unset to use the service account. */
  KUBECONFIG: z.string().optional(),
  /** Upstream CRD directory (same layout as shared/fixtures/crds). */
  CRD_DIR: z.string().optional(),
  /** Region and endpoint of the EC2 API; credentials come from the AWS SDK's default chain. */
  AWS_REGION: z.string().optional(),
  AWS_ENDPOINT_URL_EC2: z.url().optional(),
  HEARTBEAT_SECONDS: z.coerce.number().min(1).max(3600).default(30),
  LOG_LEVEL: logLevel,
});
export type SidecarConfig = z.infer<typeof SidecarConfigSchema>;
export const loadSidecarConfig = (env: NodeJS.ProcessEnv = process.env): SidecarConfig =>
  parseEnv(SidecarConfigSchema, env);
