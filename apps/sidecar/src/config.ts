import {
  dns1123Label,
  dns1123Subdomain,
  imageByDigest,
  logLevel,
  parseEnv,
  redisUrl,
} from '@fleet/contracts';
import { UPSTREAM_CRD_DIRECTORY } from '@fleet/crd-schema';
import { z } from 'zod';

export const SidecarConfigSchema = z.object({
  CLUSTER_ID: z.uuid({ error: 'must be the cluster ID the fleet API gave at registration' }),
  REPORT_TOKEN: z.string().min(16, 'must be the report token the fleet API gave at registration'),
  API_URL: z.url({ error: 'must be the fleet API base URL, e.g. https://fleet.example.com' }),
  REDIS_URL: redisUrl,
  QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .default('bull'),
  /** Kubeconfig of the sidecar's own cluster; in a pod, leave unset to use the service account. */
  KUBECONFIG: z.string().optional(),
  /**
   * Kubeconfig of the workload cluster, for topologies where it is not the sidecar's own
   * (hosted, Cluster API): typically the kubeconfig Secret mounted as a file.
   */
  WORKLOAD_KUBECONFIG: z.string().optional(),
  /**
   * Cluster API with a separate management cluster: its kubeconfig (the sidecar runs on the
   * workload cluster). Unset: the Cluster API objects are on the sidecar's own cluster
   * (OpenShift's own Cluster API).
   */
  MANAGEMENT_KUBECONFIG: z.string().optional(),
  /**
   * Cluster API: the Cluster the sidecar runs Karpenter for and its namespace on the management
   * cluster (default openshift-cluster-api). Read by the Cluster API driver from the environment
   * (cluster-api/driver.ts); named here so a bad value stops the sidecar at start-up.
   */
  CLUSTER_API_CLUSTER_NAME: dns1123Subdomain.optional(),
  CLUSTER_API_NAMESPACE: dns1123Label.optional(),
  /**
   * Longest one API-server request (not a watch) may take, response included; past it the call
   * fails and is retried by whoever made it, so one hung request cannot hold a controller.
   */
  API_SERVER_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).default(30),
  /**
   * Longest one EC2 request may take. Read by the AWS driver from the environment
   * (aws/credentials.ts); named here so a bad value stops the sidecar at start-up.
   */
  EC2_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(10),
  /**
   * Longest one Microsoft Entra ID token request may take, and the operand image (the OpenShift
   * fork of karpenter-provider-azure, by digest). Read by the Azure driver from the environment
   * (azure/credentials.ts, azure/driver.ts); named here so a bad value stops the sidecar at
   * start-up.
   */
  AZURE_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(10),
  AZURE_KARPENTER_IMAGE: imageByDigest.optional(),
  /** The upstream CRDs the sidecar installs; the ones shipped with it unless overridden. */
  CRD_DIR: z.string().default(UPSTREAM_CRD_DIRECTORY),
  /** /healthz, /readyz and /metrics are served only when a port is given (deployments do). */
  OPS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  OPS_HOST: z.string().default('127.0.0.1'),
  HEARTBEAT_SECONDS: z.coerce.number().min(1).max(3600).default(30),
  /**
   * How often the sidecar checks whether credentials it handed the operand are due for renewal
   * (Cluster API with a separate management cluster: the operand's management token, renewed
   * once half its 7-day life is gone), so they are renewed without waiting for an order.
   */
  CREDENTIAL_RENEWAL_CHECK_SECONDS: z.coerce.number().min(1).max(86_400).default(3600),
  /** Cap on CSR approvals in any 60 s; a flood beyond it waits (and is reported RateLimited). */
  CSR_APPROVALS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(60),
  /** Where the copy of the Cluster Autoscaler objects is kept while the fleet has them removed. */
  CLUSTER_AUTOSCALER_BACKUP_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    .default('openshift-config'),
  /**
   * The sidecar's own service account (deploy/ sets both from the downward API): it binds its
   * rights in the operand namespace to it. Only where the sidecar runs on the cluster it changes.
   */
  SIDECAR_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    .default('karpenter-fleet'),
  SIDECAR_SERVICE_ACCOUNT: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
    .default('karpenter-fleet-sidecar'),
  /**
   * Hosted clusters only: who runs Karpenter. `AutoNode` (default): HyperShift does, the sidecar
   * drives HostedCluster.spec.autoNode. `Converged` (the sidecar running it itself) is accepted
   * only to be refused with its reason (ConvergedModeUnsupported) rather than a crash loop.
   */
  HOSTED_MODE: z.enum(['AutoNode', 'Converged']).default('AutoNode'),
  /** Reported to the fleet and as the ClusterOperator's operator version. */
  SIDECAR_VERSION: z.string().min(1).default('0.1.0'),
  LOG_LEVEL: logLevel,
});
export type SidecarConfig = z.infer<typeof SidecarConfigSchema>;
export const loadSidecarConfig = (env: NodeJS.ProcessEnv = process.env): SidecarConfig =>
  parseEnv(SidecarConfigSchema, env);

/** The hosted guest bootstrap (`main.mjs bootstrap-guest`): no fleet connection, two kubeconfigs. */
export const GuestBootstrapConfigSchema = SidecarConfigSchema.pick({
  KUBECONFIG: true,
  SIDECAR_NAMESPACE: true,
  LOG_LEVEL: true,
}).extend({
  /** HyperShift's guest kubeconfig (hcco-kubeconfig), mounted for the bootstrap only. */
  GUEST_ADMIN_KUBECONFIG: z.string().min(1, "must be the path of HyperShift's guest kubeconfig"),
});
export const loadGuestBootstrapConfig = (env: NodeJS.ProcessEnv = process.env) =>
  parseEnv(GuestBootstrapConfigSchema, env);
