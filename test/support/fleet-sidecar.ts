import type { EmulatedCluster } from './emulated-cluster.js';
import { CRDS_DIR } from './fixtures.js';
import type { GraphQLResponse } from './graphql-client.js';
import type { RunningProcess } from './processes.js';
import { startSidecarProcessWith } from './sidecar-process.js';

type Gql = <T>(query: string, variables?: Record<string, unknown>) => Promise<GraphQLResponse<T>>;

/** What registerCluster hands out once: the cluster's IDs and its sidecar's credentials. */
export interface RegisteredCluster {
  id: string;
  uid: string;
  reportToken: string;
  redisUrl: string;
}

export const OCP_AWS_STANDALONE_INPUT = {
  topology: 'STANDALONE',
  platform: 'AWS',
  region: 'us-east-1',
  infraID: 'prod-east-7xk2p',
} as const;

/** Registers a cluster through GraphQL as an SRE would; fails loudly on any GraphQL error. */
export async function registerCluster(
  gql: Gql,
  input: { name: string; labels?: Record<string, string> } & Partial<Record<string, unknown>>,
): Promise<RegisteredCluster> {
  const res = await gql<{
    registerCluster: {
      reportToken: string;
      redisUrl: string;
      cluster: { id: string; uid: string };
    };
  }>(
    `mutation($input: RegisterClusterInput!) {
       registerCluster(input: $input) { reportToken redisUrl cluster { id uid } } }`,
    { input: { ...OCP_AWS_STANDALONE_INPUT, ...input } },
  );
  if (!res.data) throw new Error(`registerCluster failed: ${JSON.stringify(res.errors)}`);
  const { cluster, reportToken, redisUrl } = res.data.registerCluster;
  return { id: cluster.id, uid: cluster.uid, reportToken, redisUrl };
}

/**
 * The built sidecar as a real process, wired to an emulated cluster and to the fleet with the
 * cluster's own credentials (its Redis user reaches its own queue and nothing else).
 */
export function startSidecarProcess(
  cluster: Pick<EmulatedCluster, 'sidecarEnv'>,
  registered: Pick<RegisteredCluster, 'uid' | 'reportToken'> & { redisUrl?: string },
  fleet: { apiUrl: string; queuePrefix: string },
  env: Record<string, string> = {},
  name = 'sidecar',
): RunningProcess {
  return startSidecarProcessWith(
    {
      ...cluster.sidecarEnv,
      CLUSTER_ID: registered.uid,
      REPORT_TOKEN: registered.reportToken,
      ...(registered.redisUrl ? { REDIS_URL: registered.redisUrl } : {}),
      API_URL: fleet.apiUrl,
      QUEUE_PREFIX: fleet.queuePrefix,
      CRD_DIR: CRDS_DIR,
      LOG_LEVEL: process.env.SIDECAR_LOG_LEVEL ?? 'info',
      ...env,
    },
    name,
  );
}
