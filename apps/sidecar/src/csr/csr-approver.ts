import type { CsrDecision } from '@fleet/contracts';
import type {
  NodeIdentityCheck,
  NodeIdentityClaim,
  NodeIdentityVerdict,
} from '@fleet/cloud-provider';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeKubeError, type ClusterClient } from '../kube/cluster-client.js';
import { CoalescingLoop } from '../kube/coalescing-loop.js';
import type { ResourceWatch } from '../kube/resource-watch.js';
import { parseCsrRequestField } from './pkcs10.js';

export const APPROVER_NAME = 'karpenter-machine-approver';
export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const NODE_BOOTSTRAPPER =
  'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
export const APPROVE_REASON = 'KarpenterCSRApprove';
export const APPROVE_MESSAGE = `Auto approved by ${APPROVER_NAME}`;
const NODE_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';
const RATE_WINDOW_MS = 60_000;
const CLOUD_RETRY_MS = 5_000;
/** Decisions kept for the fleet while reports fail; the oldest go first. */
const OUTBOX_LIMIT = 1000;

export interface CsrObject extends KubernetesObject {
  spec?: {
    request?: string;
    signerName?: string;
    username?: string;
    groups?: string[];
  };
  status?: { conditions?: { type?: string; status?: string }[] };
}

export interface NodeClaimObject extends KubernetesObject {
  status?: { providerID?: string; nodeName?: string };
}

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

type Outcome = Pick<CsrDecision, 'decision' | 'reason' | 'message'> & {
  nodeName?: string;
  /** Final: nothing that happens later can change the answer, stop looking at this CSR. */
  final: boolean;
};

type Plan =
  | { kind: 'decided'; outcome: Outcome }
  | { kind: 'client'; nodeName: string; candidates: NodeClaimObject[] }
  | { kind: 'serving'; nodeName: string; nodeClaim: NodeClaimObject };

const ignored = (reason: string, message: string, final: boolean, nodeName?: string): Outcome => ({
  decision: 'Ignored',
  reason,
  message,
  final,
  ...(nodeName ? { nodeName } : {}),
});
const denied = (reason: string, message: string, final: boolean, nodeName?: string): Outcome => ({
  decision: 'Denied',
  reason,
  message,
  final,
  ...(nodeName ? { nodeName } : {}),
});

const isFinished = (csr: CsrObject) =>
  (csr.status?.conditions ?? []).some(
    (c) =>
      (c.type === 'Approved' || c.type === 'Denied' || c.type === 'Failed') && c.status === 'True',
  );

// client-node types creationTimestamp as Date; over a watch it arrives as the RFC 3339 string.
const createdAt = (o: KubernetesObject) => new Date(o.metadata?.creationTimestamp ?? 0).getTime();
const stamp = (o: KubernetesObject) => new Date(createdAt(o)).toISOString();

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
  private readonly approvals: number[] = [];
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

  /** What can be said of a CSR from the CSR and the NodeClaims alone. */
  private plan(csr: CsrObject, nodeClaims: NodeClaimObject[]): Plan {
    const signer = csr.spec?.signerName ?? '';
    const username = csr.spec?.username ?? '';
    if (signer !== CLIENT_SIGNER && signer !== SERVING_SIGNER) {
      return {
        kind: 'decided',
        outcome: ignored('UnsupportedSigner', `signer ${signer} is not a kubelet signer`, true),
      };
    }
    let subject;
    try {
      subject = parseCsrRequestField(csr.spec?.request ?? '');
    } catch (err) {
      return {
        kind: 'decided',
        outcome: denied('InvalidCertificateRequest', `spec.request: ${String(err)}`, true),
      };
    }
    const cn = subject.commonName ?? '';
    if (!subject.signatureValid) {
      return {
        kind: 'decided',
        outcome: denied(
          'InvalidSignature',
          'the request is not signed by the key it carries',
          true,
        ),
      };
    }

    if (signer === CLIENT_SIGNER) {
      if (username !== NODE_BOOTSTRAPPER) {
        return {
          kind: 'decided',
          outcome: ignored(
            'UnexpectedUsername',
            `client CSRs are approved only from ${NODE_BOOTSTRAPPER}, not ${username}`,
            true,
          ),
        };
      }
      if (!cn.startsWith(NODE_PREFIX) || cn.length === NODE_PREFIX.length) {
        return {
          kind: 'decided',
          outcome: denied('InvalidCommonName', `subject CN "${cn}" does not name a node`, true),
        };
      }
      const nodeName = cn.slice(NODE_PREFIX.length);
      const candidates = nodeClaims.filter((c) => !c.status?.nodeName && c.status?.providerID);
      if (candidates.length === 0) {
        return {
          kind: 'decided',
          outcome: ignored(
            'UnknownNodeName',
            `no NodeClaim is waiting for a node, so ${nodeName} is not a Karpenter node (yet)`,
            false,
            nodeName,
          ),
        };
      }
      return { kind: 'client', nodeName, candidates };
    }

    if (!(csr.spec?.groups ?? []).includes(NODES_GROUP) || !username.startsWith(NODE_PREFIX)) {
      return {
        kind: 'decided',
        outcome: ignored(
          'UnexpectedUsername',
          `serving CSRs are approved only from a node in ${NODES_GROUP}, not ${username}`,
          true,
        ),
      };
    }
    const nodeName = username.slice(NODE_PREFIX.length);
    if (cn !== username) {
      return {
        kind: 'decided',
        outcome: denied(
          'SubjectMismatch',
          `subject CN "${cn}" differs from the requesting node ${username}`,
          true,
          nodeName,
        ),
      };
    }
    const nodeClaim = nodeClaims.find((c) => c.status?.nodeName === nodeName);
    if (!nodeClaim) {
      return {
        kind: 'decided',
        outcome: ignored(
          'NoNodeClaim',
          `no NodeClaim has node ${nodeName}; left to the approver of its machine`,
          false,
          nodeName,
        ),
      };
    }
    return { kind: 'serving', nodeName, nodeClaim };
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
      const plan = this.plan(csr, nodeClaims);
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
      const outcome = this.judge(csr, plan, list, mine);
      if (outcome) this.record(csr, outcome);
      else approvals.push(this.approve(csr, plan.nodeName));
    }
    await Promise.all(approvals);
  }

  /** undefined: approve. */
  private judge(
    csr: CsrObject,
    plan: Exclude<Plan, { kind: 'decided' }>,
    nodeClaims: NodeClaimObject[],
    verdicts: NodeIdentityVerdict[],
  ): Outcome | undefined {
    const { nodeName } = plan;
    const index = verdicts.findIndex((v) => v.verified);
    if (index < 0) {
      const failed = verdicts.find((v) => !v.verified && v.reason === 'CloudLookupFailed');
      if (failed && !failed.verified) {
        this.later(CLOUD_RETRY_MS);
        return ignored('CloudLookupFailed', failed.message, false, nodeName);
      }
      if (plan.kind === 'client') {
        return ignored(
          'UnknownNodeName',
          `no instance of the ${nodeClaims.length} NodeClaim(s) awaiting a node is named ${nodeName}`,
          false,
          nodeName,
        );
      }
      const verdict = verdicts[0];
      return denied(
        verdict && !verdict.verified ? verdict.reason : 'NodeNameMismatch',
        verdict && !verdict.verified ? verdict.message : `node ${nodeName} could not be verified`,
        false,
        nodeName,
      );
    }
    const nodeClaim = nodeClaims[index]!;
    if (createdAt(csr) < createdAt(nodeClaim)) {
      return denied(
        'CreatedBeforeNodeClaim',
        `CSR created ${stamp(csr)} before NodeClaim ${nodeClaim.metadata?.name} (${stamp(nodeClaim)}); a machine cannot ask before it exists`,
        true,
        nodeName,
      );
    }
    const now = this.now().getTime();
    while (this.approvals.length > 0 && this.approvals[0]! <= now - RATE_WINDOW_MS)
      this.approvals.shift();
    if (this.approvals.length >= this.deps.approvalsPerMinute) {
      this.later(this.approvals[0]! + RATE_WINDOW_MS - now + 10);
      return ignored(
        'RateLimited',
        `${this.approvals.length} approvals in the last minute (cap ${this.deps.approvalsPerMinute}); retried when the window frees`,
        false,
        nodeName,
      );
    }
    this.approvals.push(now);
    return undefined;
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
