import { NODECLAIM, NODEPOOL, type ReconcileOrder } from '@fleet/contracts';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  NODEPOOL_LABEL,
  type KubeObject,
  type TargetedObject,
} from '@fleet/cloud-provider';
import type { DriftDetector } from '../drift/drift-detector.js';
import { isNotFound } from '../kube/cluster-client.js';
import type { GuestConnection } from './guest-connection.js';

/** Applies the guest objects and prunes the owned ones no longer rendered; undefined while the CRDs are not served. */
export async function applyGuestObjects(
  guest: GuestConnection,
  drift: DriftDetector,
  objects: readonly TargetedObject[],
  driftPolicy: ReconcileOrder['spec']['driftPolicy'],
): Promise<{ applied: number; pruned: number } | undefined> {
  const client = guest.client();
  let applied = 0;
  try {
    for (const { object } of objects) {
      // Under REPORT an object with open drift stays as its editor left it.
      if (drift.held(object, driftPolicy)) continue;
      drift.recordApplied('workload', await client.apply(object));
      applied++;
    }
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  // The CRDs are served now: the watches need not wait out their backoff.
  guest.nudge();
  // Before pruning, so the fleet's own deletions are never mistaken for drift.
  drift.retain(objects.map(({ object }) => object));
  return { applied, pruned: await guest.owned().prune(objects) };
}

/**
 * Disabling: the fleet's NodePools and NodeClass go first, while HyperShift's Karpenter still
 * runs to drain and terminate their nodes; spec.autoNode is cleared once no NodeClaim of the
 * fleet's is left and HyperShift's karpenter-operator has released the fleet's NodeClass.
 */
export async function removeGuestObjects(
  guest: GuestConnection,
  drift: DriftDetector,
): Promise<{ pruned: number; nodeClaims: number; nodeClasses: number }> {
  const client = guest.client();
  drift.retain([]);
  let pruned = 0;
  try {
    await guest.discoverNodeClass();
    pruned = await guest.owned().prune([]);
    // Only the fleet's NodeClaims hold the disable back: a guest admin's own NodePools (live,
    // without the fleet's label) keep theirs. A claim whose NodePool is gone was the fleet's.
    const others = new Set(
      (await client.list<KubeObject>(NODEPOOL.apiVersion, NODEPOOL.kind))
        .filter((pool) => pool.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE)
        .map((pool) => pool.metadata.name),
    );
    const claims = await client.list<KubeObject>(NODECLAIM.apiVersion, NODECLAIM.kind);
    const fleets = claims.filter(
      (claim) => !others.has(claim.metadata.labels?.[NODEPOOL_LABEL] ?? ''),
    );
    // Deleted but still held by the operator's finalizer (it deletes the derived EC2NodeClass
    // first): still listed, with a deletionTimestamp.
    const nodeClasses = (await guest.owned().list(guest.ownedNodeClassKind())).length;
    return { pruned, nodeClaims: fleets.length, nodeClasses };
  } catch (err) {
    // No Karpenter CRDs in the guest: nothing of the fleet's can be there.
    if (isNotFound(err)) return { pruned, nodeClaims: 0, nodeClasses: 0 };
    throw err;
  }
}
