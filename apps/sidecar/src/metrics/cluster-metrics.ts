import {
  REPORT_NODECLAIMS_MAX,
  type ClusterMetrics,
  type NodeClaimSummary,
  compareCodeUnits,
} from '@fleet/contracts';
import { NODEPOOL_LABEL } from '@fleet/cloud-provider';
import type { KubernetesObject } from '@kubernetes/client-node';
import { isUnknownKind, type ClusterClient } from '../kube/cluster-client.js';
import type { ResourceWatch } from '../kube/resource-watch.js';

/** NodeClaim lifecycle conditions, most advanced last. */
const LIFECYCLE = ['Launched', 'Registered', 'Initialized', 'Ready'] as const;

interface Conditioned extends KubernetesObject {
  status?: {
    conditions?: {
      type?: string;
      status?: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
    capacity?: Record<string, string>;
    nodeName?: string;
  };
  spec?: { requirements?: { key?: string; operator?: string; values?: string[] }[] };
}

/**
 * The NodeClaims a report names (issue 47): every launch failure (newest first), then the newest
 * of the others, at most REPORT_NODECLAIMS_MAX, newest first. Labels Karpenter sets on a launched
 * claim give the instance type, zone and capacity type; before launch, a single-valued In
 * requirement does. Times, not ages: an unchanged cluster's report stays equal (heartbeats go).
 */
export function nodeClaimSummaries(claims: readonly Conditioned[]): NodeClaimSummary[] {
  const created = (c: Conditioned) => timeOf(c.metadata?.creationTimestamp) || 0;
  const newest = (a: Conditioned, b: Conditioned) =>
    created(b) - created(a) || compareCodeUnits(a.metadata?.name ?? '', b.metadata?.name ?? '');
  const failed = claims.filter(launchFailed).sort(newest);
  const others = claims.filter((c) => !launchFailed(c)).sort(newest);
  const picked = [...failed, ...others].slice(0, REPORT_NODECLAIMS_MAX).sort(newest);
  return picked.map((claim) => {
    const labels = claim.metadata?.labels ?? {};
    const single = (key: string): string | undefined => {
      if (labels[key]) return labels[key];
      const r = claim.spec?.requirements?.find(
        (x) => x.key === key && x.operator === 'In' && x.values?.length === 1,
      );
      return r?.values?.[0];
    };
    const cut = (v: string | undefined, max: number) => (v ? v.slice(0, max) : undefined);
    const failure = (claim.status?.conditions ?? []).find(
      (c) => c.type === 'Launched' && c.status === 'False',
    );
    const at = created(claim);
    const summary: NodeClaimSummary = {
      name: (claim.metadata?.name ?? '').slice(0, 253),
      state: nodeClaimState(claim),
      createdAt: new Date(at).toISOString(),
    };
    const nodePool = cut(labels[NODEPOOL_LABEL], 253);
    const nodeName = cut(claim.status?.nodeName, 253);
    const instanceType = cut(single('node.kubernetes.io/instance-type'), 64);
    const zone = cut(single('topology.kubernetes.io/zone'), 64);
    const capacityType = cut(single('karpenter.sh/capacity-type'), 32);
    return {
      ...summary,
      ...(nodePool ? { nodePool } : {}),
      ...(nodeName ? { nodeName } : {}),
      ...(instanceType ? { instanceType } : {}),
      ...(zone ? { zone } : {}),
      ...(capacityType ? { capacityType } : {}),
      ...(failure
        ? {
            launchFailure: {
              reason: (failure.reason ?? 'Unknown').slice(0, 128),
              message: (failure.message ?? '').slice(0, 512),
            },
          }
        : {}),
    };
  });
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

/** Milliseconds of a Kubernetes time: RFC 3339 over a watch, whatever client-node's types say. */
const timeOf = (value: string | Date | undefined): number =>
  value === undefined ? Number.NaN : new Date(value).getTime();

/**
 * When the oldest pod the scheduler found no room for (PodScheduled=False, Unschedulable) was
 * created, or undefined when there is none: the capacity Karpenter should have brought. A time,
 * not an age, so that a report stays equal while nothing changes.
 */
export function oldestUnschedulableSince(pods: readonly Conditioned[]): string | undefined {
  let oldest: number | undefined;
  for (const pod of pods) {
    const unschedulable = (pod.status?.conditions ?? []).some(
      (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
    );
    const created = timeOf(pod.metadata?.creationTimestamp);
    if (!unschedulable || Number.isNaN(created)) continue;
    if (oldest === undefined || created < oldest) oldest = created;
  }
  return oldest === undefined ? undefined : new Date(oldest).toISOString();
}

/** Most launch failure times a report carries (the contract's bound). */
export const LAUNCH_FAILURE_TIMES = 64;

/**
 * When each failed launch failed (Launched=False since, else the NodeClaim's creation), newest
 * first, at most LAUNCH_FAILURE_TIMES: the fleet counts those after a rollout changed the cluster.
 */
export function launchFailureTimes(claims: readonly Conditioned[]): string[] {
  const times: number[] = [];
  for (const claim of claims) {
    const launched = (claim.status?.conditions ?? []).find(
      (c) => c.type === 'Launched' && c.status === 'False',
    );
    if (!launched) continue;
    const at = timeOf(launched.lastTransitionTime ?? claim.metadata?.creationTimestamp);
    if (!Number.isNaN(at)) times.push(at);
  }
  return times
    .sort((a, b) => b - a)
    .slice(0, LAUNCH_FAILURE_TIMES)
    .map((t) => new Date(t).toISOString());
}

/** What of a Node the metrics read (its NodePool label and CPU capacity): a watch keeps only this. */
export function nodeForMetrics(node: KubernetesObject): Conditioned {
  const { metadata, status } = node as Conditioned;
  const pool = metadata?.labels?.[NODEPOOL_LABEL];
  const cpu = status?.capacity?.cpu;
  return {
    metadata: {
      name: metadata?.name,
      resourceVersion: metadata?.resourceVersion,
      ...(pool !== undefined ? { labels: { [NODEPOOL_LABEL]: pool } } : {}),
    },
    ...(cpu !== undefined ? { status: { capacity: { cpu } } } : {}),
  };
}

/** What of a pending Pod the metrics read (creation and conditions): a watch keeps only this. */
export function pendingPodForMetrics(pod: KubernetesObject): Conditioned {
  const { metadata, status } = pod as Conditioned;
  return {
    metadata: {
      name: metadata?.name,
      namespace: metadata?.namespace,
      resourceVersion: metadata?.resourceVersion,
      creationTimestamp: metadata?.creationTimestamp,
    },
    ...(status?.conditions ? { status: { conditions: status.conditions } } : {}),
  };
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
  const since = oldestUnschedulableSince(pendingPods);
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
    nodeClaimLaunchFailureTimes: launchFailureTimes(claims),
    ...(since ? { oldestPendingPodSince: since } : {}),
  };
}
