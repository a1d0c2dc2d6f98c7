import type { KubernetesObject } from '@kubernetes/client-node';
import { isConflict, type ClusterClient } from './cluster-client.js';

/** Optimistic-lock conflicts (someone else wrote the object meanwhile) retried this often. */
const ATTEMPTS = 5;

export interface FinalizerTarget {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/**
 * Reads the object and writes the finalizers `decide` returns (if any) with a JSON merge patch of
 * `metadata.finalizers` alone, carrying the resourceVersion they were computed from: a merge patch
 * replaces the whole list, so without the lock another controller's finalizer added or removed
 * meanwhile would be undone (the API server answers 409 instead, and the object is read again).
 * Only `patch` is needed, never `update`. Returns what `decide` said, or 'missing'.
 */
export async function changeFinalizers<R extends string>(
  client: ClusterClient,
  target: FinalizerTarget,
  decide: (finalizers: string[], live: KubernetesObject) => { result: R; finalizers?: string[] },
): Promise<R | 'missing'> {
  for (let attempt = 1; ; attempt++) {
    const live = await client.read<KubernetesObject>(target);
    if (!live) return 'missing';
    const { result, finalizers } = decide(live.metadata?.finalizers ?? [], live);
    if (!finalizers) return result;
    try {
      await client.mergePatch({
        apiVersion: target.apiVersion,
        kind: target.kind,
        metadata: {
          name: target.name,
          ...(target.namespace ? { namespace: target.namespace } : {}),
          resourceVersion: live.metadata?.resourceVersion,
          finalizers,
        },
      });
      return result;
    } catch (err) {
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
    }
  }
}
