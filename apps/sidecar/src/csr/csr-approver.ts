import type { CsrDecision } from '@fleet/contracts';
import type { NodeIdentityCheck, NodeIdentityClaim } from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { describeKubeError, type ClusterClient } from '../kube/cluster-client.js';
import { CoalescingLoop } from '../kube/coalescing-loop.js';
import type { ResourceWatch } from '../kube/resource-watch.js';
import { parseCsrRequestField } from './pkcs10.js';
import {
  APPROVE_MESSAGE,
  APPROVE_REASON,
  CLIENT_SIGNER,
  CLOUD_RETRY_MS,
  approvalWindow,
  isFinished,
  judgeCsr,
  nodeAlreadyExists,
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
  /** Approved client CSRs in the cluster, by the node they name (anyone's approval counts). */
  private readonly clientByNode = new Map<string, string>();
  /** Client CSRs this approver approved, by instance; kept while the instance's NodeClaim is. */
  private readonly clientByInstance = new Map<string, string>();
  private readonly outbox: CsrDecision[] = [];
  private timer?: NodeJS.Timeout;
  private readonly loop: CoalescingLoop;
  private readonly unsubscribe: (() => void)[] = [];
  /** Since start; `dropped`: decisions given up on (outbox full, or refused by the fleet alone). */
  readonly counts = { approved: 0, ignored: 0, denied: 0, dropped: 0 };

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
        this.trackIssuedClient(type, csr);
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

  /** The fleet refuses these however they are sent: give up on them, and count it. */
  drop(refused: readonly CsrDecision[]): void {
    const before = this.outbox.length;
    this.acknowledge(refused);
    this.counts.dropped += before - this.outbox.length;
  }

  idle(): Promise<void> {
    return this.loop.idle();
  }

  kick(): void {
    this.loop.kick();
  }

  /**
   * An approved kubelet client CSR means that node has bootstrapped: no second one is approved
   * for it, while the CSR exists (the garbage collector removes approved CSRs after an hour; by
   * then the Node exists, which refuses them too).
   */
  private trackIssuedClient(type: string, csr: CsrObject): void {
    const name = csr.metadata?.name ?? '';
    if (csr.spec?.signerName !== CLIENT_SIGNER) return;
    const approved = (csr.status?.conditions ?? []).some(
      (c) => c.type === 'Approved' && c.status === 'True',
    );
    if (!approved) return;
    let nodeName: string | undefined;
    try {
      const cn = parseCsrRequestField(csr.spec.request ?? '').commonName ?? '';
      if (cn.startsWith('system:node:')) nodeName = cn.slice('system:node:'.length);
    } catch {
      return;
    }
    if (!nodeName) return;
    if (type === 'DELETED') {
      if (this.clientByNode.get(nodeName) === name) this.clientByNode.delete(nodeName);
    } else if (!this.clientByNode.has(nodeName)) this.clientByNode.set(nodeName, name);
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
    if (this.outbox.length > OUTBOX_LIMIT) {
      const overflow = this.outbox.length - OUTBOX_LIMIT;
      this.outbox.splice(0, overflow);
      this.counts.dropped += overflow;
    }
    this.deps.log.info(
      { csr: name, node: outcome.nodeName, decision: outcome.decision, reason: outcome.reason },
      outcome.message,
    );
    this.deps.onDecision?.(decision);
  }

  private async run(): Promise<void> {
    const nodeClaims = this.deps.nodeClaims.items().filter((c) => !c.metadata?.deletionTimestamp);
    // providerIDs end in the instance id on every platform the drivers serve.
    const live = new Set(nodeClaims.map((c) => (c.status?.providerID ?? '').split('/').pop()));
    for (const [instance] of this.clientByInstance) {
      if (!live.has(instance)) this.clientByInstance.delete(instance);
    }
    const issued = { byNode: this.clientByNode, byInstance: this.clientByInstance };
    const planned: { csr: CsrObject; plan: Exclude<Plan, { kind: 'decided' }> }[] = [];
    for (const name of [...this.pending]) {
      const csr = this.deps.csrs.get(name);
      if (!csr || isFinished(csr)) {
        this.pending.delete(name);
        continue;
      }
      const plan = planCsr(csr, nodeClaims, issued);
      if (plan.kind === 'decided') this.record(csr, plan.outcome);
      else planned.push({ csr, plan });
    }
    // A client CSR for a node that has joined is never a bootstrap (the Node is read, not
    // watched: the sidecar keeps no cache of every Node for this).
    const nodes = new Map<string, Promise<unknown>>(); // one read per node name and pass
    const readNode = (name: string) => {
      let read = nodes.get(name);
      if (!read) {
        read = this.deps.cluster.read({ apiVersion: 'v1', kind: 'Node', name });
        nodes.set(name, read);
      }
      return read;
    };
    const kept = await Promise.all(
      planned.map(async (item) => {
        if (item.plan.kind !== 'client') return true;
        try {
          if (!(await readNode(item.plan.nodeName))) return true;
          this.record(item.csr, nodeAlreadyExists(item.plan.nodeName));
        } catch (err) {
          this.deps.log.warn(
            { csr: item.csr.metadata?.name, err: describeKubeError(err) },
            'reading the node of a client CSR failed; retried',
          );
          this.later(CLOUD_RETRY_MS);
        }
        return false;
      }),
    );
    // Oldest first still, so the rate cap serves CSRs in the order they came.
    const work = planned.filter((_, i) => kept[i]);
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
        issued,
      });
      if (!judgement.approve) {
        if (judgement.retryInMs !== undefined) this.later(judgement.retryInMs);
        this.record(csr, judgement.outcome);
        continue;
      }
      this.approvals.push(now);
      // Claimed before the approval call, so a second CSR of this pass cannot take it too.
      if (plan.kind === 'client')
        this.clientByInstance.set(judgement.instanceID, csr.metadata?.name ?? '');
      approvals.push(this.approve(csr, plan, judgement.instanceID));
    }
    await Promise.all(approvals);
  }

  private async approve(
    csr: CsrObject,
    plan: Exclude<Plan, { kind: 'decided' }>,
    instanceID: string,
  ): Promise<void> {
    const name = csr.metadata?.name ?? '';
    const { nodeName } = plan;
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
      if (plan.kind === 'client' && !this.clientByNode.has(nodeName))
        this.clientByNode.set(nodeName, name);
    } catch (err) {
      // Give the rate budget and the instance back; the CSR stays pending and is tried again.
      this.approvals.pop();
      if (plan.kind === 'client' && this.clientByInstance.get(instanceID) === name)
        this.clientByInstance.delete(instanceID);
      this.deps.log.warn({ csr: name, err: describeKubeError(err) }, 'approving CSR failed');
      this.later(CLOUD_RETRY_MS);
    }
  }
}
