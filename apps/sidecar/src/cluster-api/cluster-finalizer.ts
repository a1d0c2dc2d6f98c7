import { CLUSTER_CLEANUP_FINALIZER } from '@fleet/cloud-provider';
import type { KubernetesObject } from '@kubernetes/client-node';
import { CAPI_CLUSTER } from '@fleet/discovery';
import type { Logger } from 'pino';
import type { ClusterClient } from '../kube/cluster-client.js';
import { changeFinalizers } from '../kube/finalizers.js';

/** What the finalizer reads of the Cluster as a watch holds it. */
export interface SeenCluster {
  metadata?: { deletionTimestamp?: unknown; finalizers?: string[] };
}

/** Where the Cluster stands for the fleet's cleanup. */
export type ClusterHold = 'held' | 'deleting' | 'missing';

/**
 * What the reconciler needs of the workload Cluster's lifecycle: whether it is being deleted,
 * and the finalizer that makes its deletion wait for Karpenter's cleanup.
 */
export interface ClusterLifecycle {
  /** The Cluster is being deleted (per the latest watch event, no request). */
  deleting(): boolean;
  /** Adds the finalizer unless the Cluster is being deleted (then no finalizer can be added). */
  hold(): Promise<ClusterHold>;
  /** Removes the finalizer (only ours); a Cluster already gone or without it is fine. */
  release(): Promise<void>;
  /** `Cluster <namespace>/<name>`, for messages. */
  readonly description: string;
}

/**
 * The sidecar's finalizer `fleet.karpenter.sh/karpenter-cleanup` on the Cluster (management
 * side). Written with a JSON merge patch of `metadata.finalizers` alone, carrying the
 * resourceVersion it was computed from, so another controller's finalizer written meanwhile is
 * never lost (409, read again) and the Cluster's spec is never rewritten: the sidecar needs
 * `patch` on clusters, not `update`.
 */
export class ClusterFinalizer implements ClusterLifecycle {
  readonly description: string;
  /** This process added the finalizer and has not removed it since. */
  private added = false;

  constructor(
    private readonly management: ClusterClient,
    private readonly cluster: { namespace: string; clusterName: string },
    /** The Cluster as the sidecar's watch last saw it (undefined: not seen, or not synced). */
    private readonly cached: () => SeenCluster | undefined,
    private readonly log: Logger,
  ) {
    this.description = `Cluster ${cluster.namespace}/${cluster.clusterName}`;
  }

  deleting(): boolean {
    return !!this.cached()?.metadata?.deletionTimestamp;
  }

  async hold(): Promise<ClusterHold> {
    // Always a fresh read, not the watch's cache: an apply must not follow a deletion the watch
    // has not delivered yet. Applying an order costs many requests; this is one more.
    return this.change((finalizers, live) => {
      if (live.metadata?.deletionTimestamp) return { result: 'deleting' };
      if (finalizers.includes(CLUSTER_CLEANUP_FINALIZER)) return { result: 'held' };
      return { result: 'held', finalizers: [...finalizers, CLUSTER_CLEANUP_FINALIZER] };
    });
  }

  async release(): Promise<void> {
    const seen = this.cached();
    // The watch may not have shown our own write yet: only a finalizer this process never added
    // is trusted to be absent from the cache.
    if (
      !this.added &&
      seen &&
      !(seen.metadata?.finalizers ?? []).includes(CLUSTER_CLEANUP_FINALIZER)
    )
      return;
    await this.change((finalizers) =>
      finalizers.includes(CLUSTER_CLEANUP_FINALIZER)
        ? {
            result: 'held',
            finalizers: finalizers.filter((f) => f !== CLUSTER_CLEANUP_FINALIZER),
          }
        : { result: 'held' },
    );
  }

  /** Reads the Cluster, and writes the finalizers `decide` returns (if any) at that version. */
  private async change(
    decide: (
      finalizers: string[],
      live: KubernetesObject,
    ) => { result: ClusterHold; finalizers?: string[] },
  ): Promise<ClusterHold> {
    const { namespace, clusterName: name } = this.cluster;
    let written: string[] | undefined;
    const result = await changeFinalizers(
      this.management,
      { apiVersion: CAPI_CLUSTER.apiVersion, kind: CAPI_CLUSTER.kind, name, namespace },
      (finalizers, live) => {
        const decision = decide(finalizers, live);
        written = decision.finalizers;
        return decision;
      },
    );
    if (written) {
      this.added = written.includes(CLUSTER_CLEANUP_FINALIZER);
      this.log.info(
        { cluster: this.description, finalizers: written },
        this.added ? 'finalizer added to the Cluster' : 'finalizer removed from the Cluster',
      );
    }
    return result;
  }
}
