import type { ClusterTarget } from '@fleet/cloud-provider';
import { KubeConfig } from '@kubernetes/client-node';
import { API_SERVER_TIMEOUT_MS } from '@fleet/discovery';
import { ClusterClient } from './cluster-client.js';
import { pooledConnections } from './pooled-connections.js';

/**
 * Where the credentials for one API server come from: the pod's service account, or a
 * kubeconfig file (a developer's, or a kubeconfig Secret mounted as a volume, which the kubelet
 * rewrites when the Secret is rotated).
 */
export type ApiServerSource = { kind: 'in-cluster' } | { kind: 'kubeconfig-file'; path: string };

const sameSource = (a: ApiServerSource, b: ApiServerSource) =>
  a.kind === b.kind && (a.kind === 'in-cluster' || a.path === (b as { path: string }).path);

function load(source: ApiServerSource): KubeConfig {
  const kc = new KubeConfig();
  if (source.kind === 'kubeconfig-file') kc.loadFromFile(source.path);
  else kc.loadFromDefault();
  return pooledConnections(kc);
}

/**
 * The API servers a driver talks to, one client per distinct server. On a standalone cluster
 * both targets are the same server and share one client (one set of watches, one connection
 * pool); hosted and Cluster API drivers get the management cluster and the workload cluster.
 */
export class ApiServers {
  private readonly configs = new Map<ClusterTarget, KubeConfig>();
  private readonly clients = new Map<ClusterTarget, ClusterClient>();

  constructor(
    sources: Readonly<Record<ClusterTarget, ApiServerSource>>,
    private readonly timeout = API_SERVER_TIMEOUT_MS,
  ) {
    const built: { source: ApiServerSource; config: KubeConfig; client: ClusterClient }[] = [];
    for (const target of ['management', 'workload'] as const) {
      const source = sources[target];
      let entry = built.find((b) => sameSource(b.source, source));
      if (!entry) {
        const config = load(source);
        entry = { source, config, client: new ClusterClient(config, timeout) };
        built.push(entry);
      }
      this.configs.set(target, entry.config);
      this.clients.set(target, entry.client);
    }
  }

  client(target: ClusterTarget): ClusterClient {
    return this.clients.get(target)!;
  }

  kubeConfig(target: ClusterTarget): KubeConfig {
    return this.configs.get(target)!;
  }

  /** The deadline of every request (not watch) to these API servers. */
  get timeoutMs(): number {
    return this.timeout;
  }

  /** True when both targets are one API server (standalone). */
  get single(): boolean {
    return this.client('management') === this.client('workload');
  }
}

/**
 * The one place that decides how each of a driver's API servers is reached. The sidecar's own
 * server (`KUBECONFIG`, else the service account) is the management cluster; a topology with a
 * separate workload cluster reads that cluster's kubeconfig from `WORKLOAD_KUBECONFIG`.
 */
export function apiServersFor(
  targets: readonly ClusterTarget[],
  env: {
    KUBECONFIG?: string;
    WORKLOAD_KUBECONFIG?: string;
    MANAGEMENT_KUBECONFIG?: string;
    API_SERVER_TIMEOUT_SECONDS?: number;
  },
  sidecarRunsOn: ClusterTarget = 'management',
): ApiServers {
  const timeoutMs =
    env.API_SERVER_TIMEOUT_SECONDS === undefined
      ? API_SERVER_TIMEOUT_MS
      : env.API_SERVER_TIMEOUT_SECONDS * 1000;
  const own: ApiServerSource = env.KUBECONFIG
    ? { kind: 'kubeconfig-file', path: env.KUBECONFIG }
    : { kind: 'in-cluster' };
  if (!targets.includes('management'))
    return new ApiServers({ management: own, workload: own }, timeoutMs);
  // Cluster API: the sidecar is on the workload cluster; the management cluster is another one
  // only when its kubeconfig is given (OpenShift's own Cluster API is the same server).
  if (sidecarRunsOn === 'workload') {
    const management: ApiServerSource = env.MANAGEMENT_KUBECONFIG
      ? { kind: 'kubeconfig-file', path: env.MANAGEMENT_KUBECONFIG }
      : own;
    return new ApiServers({ management, workload: own }, timeoutMs);
  }
  if (!env.WORKLOAD_KUBECONFIG) {
    throw new Error(
      'WORKLOAD_KUBECONFIG: required for a topology with a management and a workload cluster (the workload cluster kubeconfig, e.g. a mounted kubeconfig Secret)',
    );
  }
  return new ApiServers(
    { management: own, workload: { kind: 'kubeconfig-file', path: env.WORKLOAD_KUBECONFIG } },
    timeoutMs,
  );
}
