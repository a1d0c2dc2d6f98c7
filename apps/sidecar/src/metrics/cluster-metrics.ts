import type { ClusterMetrics } from '@fleet/contracts';
import type { KubernetesObject } from '@kubernetes/client-node';
import { isUnknownKind, type ClusterClient } from '../kube/cluster-client.js';
import type { ResourceWatch } from '../kube/resource-watch.js';

/** Karpenter labels every node it launches with its NodePool. */
const NODEPOOL_LABEL = 'karpenter.sh/nodepool';
/** NodeClaim lifecycle conditions, most advanced last. */
const LIFECYCLE = ['Launched', 'Registered', 'Initialized', 'Ready'] as const;

interface Conditioned extends KubernetesObject {
  status?: {
    conditions?: { type?: string; status?: string; reason?: string }[];
    capacity?: Record<string, string>;
  };
}

/** Kubernetes CPU quantity ("4", "3500m", "0.5") in cores. */
export function cpuCores(quantity: string | undefined): number {
  if (!quantity) return 0;
  const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(quantity.trim());
  if (!m) return 0;
  return m[2] === 'm' ? Number(m[1]) / 1000 : Number(m[1]);
}

/** A NodeClaim's state: its most advanced true lifecycle condition (Pending before Launched). */
export function nodeClaimState(claim: Conditioned): string {
  if (claim.metadata?.deletionTimestamp) return 'Terminating';
  const conditions = claim.status?.conditions ?? [];
  let state = 'Pending';
  for (const type of LIFECYCLE) {
    if (conditions.some((c) => c.type === type && c.status === 'True')) state = type;
  }
  return state;
}

/** A NodeClaim the cloud failed to launch: its Launched condition is False (not yet Unknown). */
export function launchFailed(claim: Conditioned): boolean {
  return (claim.status?.conditions ?? []).some(
    (c) => c.type === 'Launched' && c.status === 'False',
  );
}

/**
 * Age in whole seconds of the oldest pod the scheduler found no room for (PodScheduled=False,
 * Unschedulable): the capacity Karpenter should have brought. 0 when there is none.
 */
export function oldestUnschedulableSeconds(pods: readonly Conditioned[], now: Date): number {
  let oldest = 0;
  for (const pod of pods) {
    const unschedulable = (pod.status?.conditions ?? []).some(
      (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
    );
    const created = pod.metadata?.creationTimestamp;
    if (!unschedulable || !created) continue;
    const age = Math.floor((now.getTime() - new Date(created).getTime()) / 1000);
    if (age > oldest) oldest = age;
  }
  return oldest;
}

/** A watch's cache once it has listed; a list of the same selection before that. */
async function cachedOrList(cluster: ClusterClient, watch: ResourceWatch): Promise<Conditioned[]> {
  if (watch.synced) return watch.items();
  try {
    return await cluster.list<Conditioned>(watch.kind.apiVersion, watch.kind.kind, {
      ...(watch.options.namespace ? { namespace: watch.options.namespace } : {}),
      ...(watch.options.fieldSelector ? { fieldSelector: watch.options.fieldSelector } : {}),
      ...(watch.options.labelSelector ? { labelSelector: watch.options.labelSelector } : {}),
    });
  } catch (err) {
    if (isUnknownKind(err)) return [];
    throw err;
  }
}

/** The watches every report's counts come from. */
export interface MetricsSources {
  nodes: ResourceWatch;
  nodePools: ResourceWatch;
  /** Pods with status.phase=Pending. */
  pendingPods: ResourceWatch;
  nodeClaims: ResourceWatch;
}

/** What every report carries about the cluster's capacity and the approver's work. */
export async function collectMetrics(
  cluster: ClusterClient,
  sources: MetricsSources,
  csr: { approved: number; ignored: number; denied: number; dropped: number },
  now: Date = new Date(),
): Promise<ClusterMetrics> {
  const [nodes, nodePools, pendingPods, claims] = await Promise.all([
    cachedOrList(cluster, sources.nodes),
    cachedOrList(cluster, sources.nodePools),
    cachedOrList(cluster, sources.pendingPods),
    cachedOrList(cluster, sources.nodeClaims),
  ]);
  const byState: Record<string, number> = {};
  for (const claim of claims) {
    const state = nodeClaimState(claim);
    byState[state] = (byState[state] ?? 0) + 1;
  }
  const vcpus = nodes
    .filter((n) => n.metadata?.labels?.[NODEPOOL_LABEL] !== undefined)
    .reduce((sum, n) => sum + cpuCores(n.status?.capacity?.cpu), 0);
  return {
    nodes: nodes.length,
    nodeClaims: claims.length,
    nodeClaimsByState: byState,
    nodePools: nodePools.length,
    vcpus,
    pendingPods: pendingPods.length,
    csrApproved: csr.approved,
    csrIgnored: csr.ignored,
    csrDenied: csr.denied,
    csrDecisionsDropped: csr.dropped,
    // From the same caches as the counts above: no request to the API server of its own.
    nodeClaimLaunchFailures: claims.filter(launchFailed).length,
    oldestPendingPodSeconds: oldestUnschedulableSeconds(pendingPods, now),
  };
}
