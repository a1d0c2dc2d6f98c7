import {
  CONTRACT_VERSION,
  type Condition,
  type CsrDecision,
  type ReconcileOrder,
} from '@fleet/contracts';
import { findDriver, supportedPairs, type RegisteredDriver } from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { ConditionSet } from './reconcile/conditions.js';
import type { ReconcileResult } from './reconcile/reconciler.js';
import type { SidecarRuntime } from './runtime.js';
import type { StatusSnapshot } from './report/cluster-status.js';
import type { PlanResult } from './plan/plan-phase.js';

/**
 * What the host needs of a runtime: SidecarRuntime, or a topology's own (hosted/hosted-runtime.ts
 * for HyperShift's AutoNode mode, where HyperShift runs the operand and approves CSRs).
 */
export type DriverRuntime = Pick<
  SidecarRuntime,
  'onChange' | 'start' | 'apply' | 'snapshot' | 'stop'
> &
  Partial<Pick<SidecarRuntime, 'plan'>> & {
    readonly approver:
      Pick<SidecarRuntime['approver'], 'acknowledge' | 'drop' | 'counts'> | undefined;
  };

export interface SidecarHostOptions {
  /** Builds the runtime for the driver the registry chose (API servers, CRDs, watches). */
  createRuntime(registration: RegisteredDriver): Promise<DriverRuntime>;
  log: Logger;
  /** The sidecar's release, reported with the contract it speaks. */
  version: string;
}

/**
 * What the order queue and the report publisher talk to. The sidecar does not know its
 * platform until the first order says it: the registry then chooses the driver, and the runtime
 * (watches, controllers, reconciler) is built for it. An order for a pair no driver serves, or
 * for another pair than the one running, is refused: Degraded, and nothing is written.
 */
export class SidecarHost {
  private runtime?: DriverRuntime;
  private running?: RegisteredDriver;
  private starting?: Promise<DriverRuntime>;
  private refused?: { generation: number; conditions: Condition[] };
  private readonly listeners = new Set<(urgent: boolean) => void>();
  private refusals = new ConditionSet();

  constructor(private readonly options: SidecarHostOptions) {}

  onChange(listener: (urgent: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async apply(order: ReconcileOrder): Promise<ReconcileResult> {
    if (order.contractVersion > CONTRACT_VERSION) {
      return this.refuse(
        order,
        'UnsupportedContract',
        `the order is of contract ${order.contractVersion}; this sidecar (${this.options.version}) speaks contract ${CONTRACT_VERSION} and older`,
      );
    }
    const registration = findDriver(order.platform, order.topology);
    const pair = `${order.platform}/${order.topology}`;
    if (!registration) {
      return this.refuse(
        order,
        'UnsupportedPlatform',
        `no driver for platform ${order.platform} with topology ${order.topology}; this sidecar supports ${supportedPairs()}`,
      );
    }
    if (this.running && this.running !== registration) {
      return this.refuse(
        order,
        'PlatformChanged',
        `this sidecar runs the ${this.running.platform}/${this.running.topology} driver and was sent an order for ${pair}; restart it to change driver`,
      );
    }
    this.refused = undefined;
    const runtime = await this.start(registration);
    return runtime.apply(order);
  }

  /**
   * A plan of a proposed order: refused like an order (contract, driver) but without touching
   * what the sidecar reports; planned by the running driver's runtime, which it starts if this
   * is the first thing the sidecar was sent. A runtime without plans (hosted) answers FAILED.
   */
  async plan(order: ReconcileOrder): Promise<PlanResult> {
    const failed = (reason: string, message: string): PlanResult => ({
      outcome: 'FAILED',
      reason,
      message,
      objects: [],
    });
    if (order.contractVersion > CONTRACT_VERSION)
      return failed(
        'UnsupportedContract',
        `the plan's order is of contract ${order.contractVersion}; this sidecar speaks contract ${CONTRACT_VERSION} and older`,
      );
    const registration = findDriver(order.platform, order.topology);
    if (!registration)
      return failed(
        'UnsupportedPlatform',
        `no driver for platform ${order.platform} with topology ${order.topology}`,
      );
    if (this.running && this.running !== registration)
      return failed(
        'PlatformChanged',
        `this sidecar runs the ${this.running.platform}/${this.running.topology} driver`,
      );
    const runtime = await this.start(registration);
    if (!runtime.plan)
      return failed(
        'UnsupportedForTopology',
        `the ${order.platform}/${order.topology} sidecar does not plan changes`,
      );
    return runtime.plan(order);
  }

  private async start(registration: RegisteredDriver): Promise<DriverRuntime> {
    if (this.runtime) return this.runtime;
    this.starting ??= this.options.createRuntime(registration).then((runtime) => {
      runtime.onChange((urgent) => this.changed(urgent));
      runtime.start();
      this.runtime = runtime;
      this.running = registration;
      this.options.log.info(
        { platform: registration.platform, topology: registration.topology },
        'driver started',
      );
      return runtime;
    });
    try {
      return await this.starting;
    } catch (err) {
      this.starting = undefined;
      throw err;
    }
  }

  private refuse(order: ReconcileOrder, reason: string, message: string): ReconcileResult {
    this.options.log.warn({ reason, message }, 'order refused');
    this.refusals = new ConditionSet(this.refused?.conditions ?? []);
    this.refusals.set('Degraded', 'True', reason, message);
    this.refusals.set('Available', 'False', reason, message);
    this.refusals.set('Progressing', 'False', reason, 'waiting for an order this sidecar can run');
    const conditions = this.refusals.list();
    this.refused = { generation: order.generation, conditions };
    this.changed(true);
    return { conditions, applied: 0, pruned: 0, requeue: false };
  }

  private changed(urgent: boolean): void {
    for (const l of this.listeners) l(urgent);
  }

  /** What a report says now, and which sidecar says it. */
  async snapshot(): Promise<StatusSnapshot | undefined> {
    const sidecar = { version: this.options.version, contractVersion: CONTRACT_VERSION };
    if (this.refused) {
      return {
        observedGeneration: this.refused.generation,
        conditions: this.refused.conditions,
        metrics: {},
        csrDecisions: [],
        sidecar,
      };
    }
    const snapshot = await this.runtime?.snapshot();
    return snapshot && { ...snapshot, sidecar };
  }

  /** The CSR approver's decisions so far; none before the first order built the runtime. */
  csrCounts(): Readonly<Record<string, number>> | undefined {
    return this.runtime?.approver?.counts;
  }

  /** A report carrying these decisions was accepted. */
  acknowledge(decisions: readonly CsrDecision[]): void {
    this.runtime?.approver?.acknowledge(decisions);
  }

  /** The fleet refuses these decisions on their own: they are given up on and counted. */
  drop(decisions: readonly CsrDecision[]): void {
    this.runtime?.approver?.drop(decisions);
  }

  async stop(): Promise<void> {
    const runtime = this.runtime ?? (await this.starting?.catch(() => undefined));
    await runtime?.stop();
  }
}
