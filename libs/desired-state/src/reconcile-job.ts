import { RECONCILE_QUEUE, type ReconcileRequest } from '@fleet/contracts';
import type { JobsOptions, Queue } from 'bullmq';

export { RECONCILE_QUEUE };

/** One job per (cluster, generation): a retried change cannot enqueue twice. */
export function reconcileJobOptions(request: ReconcileRequest, now = Date.now()): JobsOptions {
  return {
    jobId: request.force
      ? `${request.clusterId}.${request.generation}.force.${now}`
      : `${request.clusterId}.${request.generation}`,
    attempts: 10,
    backoff: { type: 'exponential', delay: 500, jitter: 0.5 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 10000 },
  };
}

export async function requestReconcile(
  queue: Queue<ReconcileRequest>,
  requests: readonly ReconcileRequest[],
): Promise<void> {
  if (!requests.length) return;
  await queue.addBulk(
    requests.map((data) => ({ name: 'reconcile', data, opts: reconcileJobOptions(data) })),
  );
}
