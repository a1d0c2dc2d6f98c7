import type { Condition, ReconcileOrder } from '@fleet/contracts';
import type { Logger } from 'pino';
import { RETRIED_FAILURES, retryDelayMs, type ReconcileResult } from './outcome.js';

export interface OrderQueueOptions {
  /** One pass of the topology's pipeline over an order. */
  reconcile(order: ReconcileOrder): Promise<ReconcileResult>;
  /** After each pass (the ClusterOperator shows its outcome). */
  afterReconcile?(result: ReconcileResult): void;
  /** How soon an order that is not done is looked at again. */
  requeueMs: number;
  log: Logger;
}

/**
 * Orders, their re-checks, plans and drift corrections, one at a time in arrival order: every
 * topology's runtime holds one, so a fix to ordering, requeueing or backoff reaches them all. An
 * order not done (requeue) is run again after `requeueMs`; a failure that can heal by itself
 * (RETRIED_FAILURES) with backoff, as a controller requeues on error.
 */
export class OrderQueue {
  private current?: ReconcileOrder;
  private last?: { generation: number; result: ReconcileResult };
  private chain: Promise<unknown> = Promise.resolve();
  private requeueTimer?: NodeJS.Timeout;
  /** Passes in a row that ended in a failure worth retrying. */
  private consecutiveFailures = 0;
  private correctionQueued = false;
  private readonly listeners = new Set<(urgent: boolean) => void>();

  constructor(private readonly options: OrderQueueOptions) {}

  /** The latest order received. */
  get order(): ReconcileOrder | undefined {
    return this.current;
  }

  /** Applies an order (after any order or re-check in progress). */
  apply(order: ReconcileOrder): Promise<ReconcileResult> {
    this.current = order;
    return this.enqueue(order);
  }

  /** Runs `work` in turn with orders and re-checks, so it never sees an apply half-way. */
  inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  lastResult(): { generation: number; result: ReconcileResult } | undefined {
    return this.last;
  }

  /** Progress reported mid-pass: the next report shows these conditions already. */
  progress(conditions: Condition[]): void {
    if (this.last) this.last = { ...this.last, result: { ...this.last.result, conditions } };
    this.changed(true);
  }

  /** Whether an order that is not done waits for its re-check. */
  waiting(): boolean {
    return this.requeueTimer !== undefined;
  }

  /** Runs the current order again now (something it reads changed), reporting after. */
  reapply(why: string): void {
    const order = this.current;
    if (!order) return;
    this.options.log.info(`${why}; applying the order again`);
    void this.enqueue(order)
      .catch((err: unknown) => this.options.log.error({ err: String(err) }, why))
      .then(() => this.changed(true));
  }

  /**
   * Drift under policy CORRECT (the default) is put back at once by applying the current order
   * again (server-side apply with force takes the fields back); one correction is queued at a
   * time, so a burst of edits costs one apply. Under REPORT it is only reported.
   */
  driftChanged(drifted: boolean): void {
    const order = this.current;
    if (
      drifted &&
      order &&
      !order.spec.paused &&
      (order.spec.driftPolicy ?? 'CORRECT') === 'CORRECT' &&
      !this.correctionQueued
    ) {
      this.correctionQueued = true;
      this.chain = this.chain.then(() => {
        this.correctionQueued = false;
      });
      this.reapply('drift: putting it back');
    }
    // Reported at once, before the correction lands.
    this.changed(true);
  }

  /**
   * The re-check of the current order, now. `onlyIfWaiting`: only when it is not done yet (an
   * event it waits for, such as a NodeClaim going away, arrived).
   */
  async recheck(onlyIfWaiting = false): Promise<void> {
    const order = this.current;
    if (!order || (onlyIfWaiting && !this.requeueTimer)) return;
    clearTimeout(this.requeueTimer);
    this.requeueTimer = undefined;
    try {
      await this.enqueue(order);
    } catch (err) {
      this.options.log.error({ err: String(err) }, 're-check failed');
      this.schedule(order, true);
    }
    this.changed(true);
  }

  /** Called with urgent=true for steps that should be reported at once. */
  onChange(listener: (urgent: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(urgent: boolean): void {
    for (const l of this.listeners) l(urgent);
  }

  /** Resolves when orders and re-checks in flight have settled. */
  async idle(): Promise<void> {
    await this.chain;
  }

  async stop(): Promise<void> {
    clearTimeout(this.requeueTimer);
    this.requeueTimer = undefined;
    await this.chain.catch(() => undefined);
  }

  private enqueue(order: ReconcileOrder): Promise<ReconcileResult> {
    return this.inTurn(async () => {
      const result = await this.options.reconcile(order);
      this.last = { generation: order.generation, result };
      this.options.afterReconcile?.(result);
      const degraded = result.conditions.find((c) => c.type === 'Degraded');
      const retry = degraded?.status === 'True' && RETRIED_FAILURES.has(degraded.reason);
      this.consecutiveFailures = retry ? this.consecutiveFailures + 1 : 0;
      this.schedule(order, result.requeue || retry);
      return result;
    });
  }

  private schedule(order: ReconcileOrder, requeue: boolean): void {
    clearTimeout(this.requeueTimer);
    this.requeueTimer = undefined;
    if (!requeue || this.current !== order) return;
    const { requeueMs } = this.options;
    this.requeueTimer = setTimeout(
      () => void this.recheck(),
      this.consecutiveFailures ? retryDelayMs(requeueMs, this.consecutiveFailures) : requeueMs,
    );
  }
}
