import type { ClusterAutoscalerState, Condition } from '@fleet/contracts';
import type { KubeObject } from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import type { ConditionSet } from './conditions.js';

export interface ReconcileResult {
  conditions: Condition[];
  applied: number;
  pruned: number;
  /** The order is not done (NodeClaims draining): reconcile it again on change or soon. */
  requeue: boolean;
  clusterAutoscaler?: ClusterAutoscalerState;
}

/** What a phase returns; the reconciler adds the conditions. */
export type Outcome = Omit<ReconcileResult, 'conditions'>;

export const describeObject = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

/** Degraded, not Progressing and not Available, all with the same reason. */
export function degraded(
  log: Logger,
  conditions: ConditionSet,
  reason: string,
  message: string,
  applied = 0,
): Outcome {
  log.warn({ reason, message }, 'reconcile degraded');
  conditions.set('Degraded', 'True', reason, message);
  conditions.set(
    'Progressing',
    'False',
    reason,
    'waiting for the problem to be fixed or a new order',
  );
  conditions.set('Available', 'False', reason, message);
  return { applied, pruned: 0, requeue: false };
}

/**
 * The Paused condition of an order; the outcome that ends the pass when the fleet paused it
 * (nothing written), undefined otherwise.
 */
export function pausedOutcome(
  spec: { paused: boolean },
  conditions: ConditionSet,
): Outcome | undefined {
  if (!spec.paused) {
    conditions.set('Paused', 'False', 'AsExpected', 'reconciling');
    return undefined;
  }
  conditions.set(
    'Paused',
    'True',
    'PausedByFleet',
    'reconciliation is paused; the cluster is left as it is',
  );
  return { applied: 0, pruned: 0, requeue: false };
}

/**
 * Degraded reasons that can heal by themselves (the API server restarting or throttling, a cloud
 * API blip, a webhook briefly down): the runtime reconciles the order again with backoff, as a
 * controller requeues on error. The others (the cluster's or the order's content refused) wait
 * for the cluster or the order to change.
 */
export const RETRIED_FAILURES: ReadonlySet<string> = new Set([
  'KubernetesLookupFailed',
  'CloudLookupFailed',
  'ApplyFailed',
  'PruneFailed',
  'DisableFailed',
  'ClusterAutoscalerFailed',
  'ClusterFinalizerFailed',
]);

/** The first retry after `requeueMs`, then doubling up to five minutes. */
export function retryDelayMs(requeueMs: number, consecutiveFailures: number): number {
  return Math.min(requeueMs * 2 ** Math.max(0, consecutiveFailures - 1), 300_000);
}
