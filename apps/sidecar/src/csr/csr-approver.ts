import type { CsrDecision } from '@fleet/contracts';
import type { NodeIdentityCheck, NodeIdentityClaim } from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { describeKubeError, type ClusterClient } from '../kube/cluster-client.js';
import { CoalescingLoop } from '../kube/coalescing-loop.js';
import type { ResourceWatch } from '../kube/resource-watch.js';
import {
  APPROVE_MESSAGE,
  APPROVE_REASON,
  CLOUD_RETRY_MS,
  approvalWindow,
  isFinished,
  judgeCsr,
  planCsr,
  type CsrObject,
  type NodeClaimObject,
  type Outcome,
  type Plan,
} from './csr-policy.js';

export type { CsrObject, NodeClaimObject } from './csr-policy.js';

/** Decisions kept for the fleet while reports fail; the oldest go first. */
const OUTBOX_LIMIT = 1000;

export interface CsrApproverDeps {
  cluster: ClusterClient;
  csrs: ResourceWatch<CsrObject>;
  nodeClaims: ResourceWatch<NodeClaimObject>;
  /** At most this many approvals in any 60 s; the rest wait (recorded RateLimited). */
  approvalsPerMinute: number;
  log: Logger;
  onDecision?: (decision: CsrDecision) => void;
  now?: () => Date;
}

/**
 * The CSR approver of karpenter-operator (`karpenter-machine-approver`), watch-driven: every
 * pending CSR is judged as soon as it (or a NodeClaim) changes, instances are checked with the cloud in
 * batches, and legitimate ones are approved through `/approval`. Beyond upstream: a CSR created
 * before its NodeClaim is never approved, approvals are capped per minute, and every decision is
 * recorded for the fleet. The sidecar never writes `Denied` on a CSR: another approver (the
 * cluster-machine-approver for MachineSet nodes) or an administrator may still act on it.
 */
export class CsrApprover {
  private check?: NodeIdentityCheck;
  private readonly pending = new Set<string>();
  private readonly settled = new Set<string>();
  private readonly lastOutcome = new Map<string, string>();
  private approvals: number[] = [];
  private readonly outbox: CsrDecision[] = [];
  private timer?: NodeJS.Timeout;
  private readonly loop: CoalescingLoop;
  private readonly unsubscribe: (() => void)[] = [];
  readonly counts = { approved: 0, ignored: 0, denied: 0 };

  constructor(private readonly deps: CsrApproverDeps) {
    this.loop = new CoalescingLoop(
      () => this.run(),
      (err) => {
        deps.log.error({ err: describeKubeError(err) }, 'CSR approval pass failed');
        this.later(CLOUD_RETRY_MS);
      },
    );
  }

  start(): void {
    this.unsubscribe.push(
      this.deps.csrs.on((type, csr) => {
        const name = csr.metadata?.name;
        if (!name) return;
        if (type === 'DELETED' || isFinished(csr)) {
          this.pending.delete(name);
          this.lastOutcome.delete(name);
          if (type === 'DELETED') this.settled.delete(name);
          return;
        }
        if (this.settled.has(name)) return;
        this.pending.add(name);
        this.kick();
      }),
      // A NodeClaim gaining a providerID or a nodeName can make a waiting CSR approvable.
      this.deps.nodeClaims.on(() => {
        if (this.pending.size > 0) this.kick();
      }),
    );
  }

  stop(): void {
    this.loop.stop();
    clearTimeout(this.timer);
    for (const off of this.unsubscribe.splice(0)) off();
  }

  /** The driver's cloud check; known once discovery has found the cluster's infrastructure. */
  setNodeIdentityCheck(check: NodeIdentityCheck | undefined): void {
    this.check = check;
    if (check && this.pending.size > 0) this.kick();
  }

  /** Decisions not yet carried by an accepted report, oldest first. */
  unsentDecisions(): CsrDecision[] {
    return [...this.outbox];
  }

  /** A report carrying these was accepted: they need not be sent again. */
  acknowledge(sent: readonly CsrDecision[]): void {
    const done = new Set(sent);
    for (let i = this.outbox.length - 1; i >= 0; i--) {
      if (done.has(this.outbox[i]!)) this.outbox.splice(i, 1);
    }
  }

  idle(): Promise<void> {
    return this.loop.idle();
  }

  kick(): void {
    this.loop.kick();
  }

  private later(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, ms);
  }

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  private record(csr: CsrObject, outcome: Outcome): void {
    const name = csr.metadata?.name ?? '';
    const key = `${outcome.decision}/${outcome.reason}`;
    if (outcome.final || outcome.decision === 'Approved') {
      this.settled.add(name);
      this.pending.delete(name);
    }
    // A CSR re-judged with the same answer is not a new decision.
    if (this.lastOutcome.get(name) === key) return;
    this.lastOutcome.set(name, key);
    const decision: CsrDecision = {
      csrName: name,
      ...(outcome.nodeName ? { nodeName: outcome.nodeName } : {}),
      signerName: csr.spec?.signerName ?? '',
      decision: outcome.decision,
      reason: outcome.reason,
      message: outcome.message.slice(0, 1024),
      decidedAt: this.now().toISOString(),
    };
    if (outcome.decision === 'Approved') this.counts.approved++;
    else if (outcome.decision === 'Denied') this.counts.denied++;
    else this.counts.ignored++;
    this.outbox.push(decision);
    if (this.outbox.length > OUTBOX_LIMIT) this.outbox.splice(0, this.outbox.length - OUTBOX_LIMIT);
    this.deps.log.info(
      { csr: name, node: outcome.nodeName, decision: outcome.decision, reason: outcome.reason },
      outcome.message,
    );
    this.deps.onDecision?.(decision);
  }

  private async run(): Promise<void> {
    const nodeClaims = this.deps.nodeClaims.items().filter((c) => !c.metadata?.deletionTimestamp);
    const work: { csr: CsrObject; plan: Exclude<Plan, { kind: 'decided' }> }[] = [];
    for (const name of [...this.pending]) {
      const csr = this.deps.csrs.get(name);
      if (!csr || isFinished(csr)) {
        this.pending.delete(name);
        continue;
      }
      const plan = planCsr(csr, nodeClaims);
      if (plan.kind === 'decided') this.record(csr, plan.outcome);
      else work.push({ csr, plan });
    }
    if (work.length === 0) return;
    const check = this.check;
    if (!check) return; // setNodeIdentityCheck kicks again once discovery has run

    // One identity check for every CSR of the pass: the cloud sees each instance once.
    const claims: NodeIdentityClaim[] = [];
    for (const { plan } of work) {
      const list = plan.kind === 'client' ? plan.candidates : [plan.nodeClaim];
      for (const c of list)
        claims.push({ nodeName: plan.nodeName, providerID: c.status?.providerID ?? '' });
    }
    const verdicts = await check(claims);
    let at = 0;
    const approvals: Promise<void>[] = [];
    for (const { csr, plan } of work) {
      const list = plan.kind === 'client' ? plan.candidates : [plan.nodeClaim];
      const mine = verdicts.slice(at, at + list.length);
      at += list.length;
      const now = this.now().getTime();
      this.approvals = approvalWindow(this.approvals, now);
      const judgement = judgeCsr({
        csr,
        plan,
        nodeClaims: list,
        verdicts: mine,
        recent: this.approvals,
        approvalsPerMinute: this.deps.approvalsPerMinute,
        now,
      });
      if (!judgement.approve) {
        if (judgement.retryInMs !== undefined) this.later(judgement.retryInMs);
        this.record(csr, judgement.outcome);
        continue;
      }
      this.approvals.push(now);
      approvals.push(this.approve(csr, plan.nodeName));
    }
    await Promise.all(approvals);
  }

  private async approve(csr: CsrObject, nodeName: string): Promise<void> {
    const name = csr.metadata?.name ?? '';
    try {
      await this.deps.cluster.addCsrCondition(name, {
        type: 'Approved',
        status: 'True',
        reason: APPROVE_REASON,
        message: APPROVE_MESSAGE,
      });
      this.record(csr, {
        decision: 'Approved',
        reason: APPROVE_REASON,
        message: APPROVE_MESSAGE,
        nodeName,
        final: true,
      });
    } catch (err) {
      // Give the rate budget back; the CSR stays pending and is tried again.
      this.approvals.pop();
      this.deps.log.warn({ csr: name, err: describeKubeError(err) }, 'approving CSR failed');
      this.later(CLOUD_RETRY_MS);
    }
  }
}
