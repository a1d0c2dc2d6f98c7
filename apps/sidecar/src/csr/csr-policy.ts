import type { CsrDecision } from '@fleet/contracts';
import type { NodeIdentityVerdict } from '@fleet/cloud-provider';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseCsrRequestField } from './pkcs10.js';

// The approver's policy, without a cluster: what a CSR is (plan) and what the cloud's verdicts
// make of it (judge). The loop in csr-approver.ts feeds it from watches and acts on the answers.

export const APPROVER_NAME = 'karpenter-machine-approver';
export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const NODE_BOOTSTRAPPER =
  'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
export const APPROVE_REASON = 'KarpenterCSRApprove';
export const APPROVE_MESSAGE = `Auto approved by ${APPROVER_NAME}`;
const NODE_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';
export const RATE_WINDOW_MS = 60_000;
export const CLOUD_RETRY_MS = 5_000;

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

export type Outcome = Pick<CsrDecision, 'decision' | 'reason' | 'message'> & {
  nodeName?: string;
  /** Final: nothing that happens later can change the answer, stop looking at this CSR. */
  final: boolean;
};

export type Plan =
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

export const isFinished = (csr: CsrObject) =>
  (csr.status?.conditions ?? []).some(
    (c) =>
      (c.type === 'Approved' || c.type === 'Denied' || c.type === 'Failed') && c.status === 'True',
  );

// client-node types creationTimestamp as Date; over a watch it arrives as the RFC 3339 string.
const createdAt = (o: KubernetesObject) => new Date(o.metadata?.creationTimestamp ?? 0).getTime();
const stamp = (o: KubernetesObject) => new Date(createdAt(o)).toISOString();

export type Judgement =
  { approve: true } | { approve: false; outcome: Outcome; retryInMs?: number };

/** What can be said of a CSR from the CSR and the NodeClaims alone. */
export function planCsr(csr: CsrObject, nodeClaims: readonly NodeClaimObject[]): Plan {
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
      outcome: denied('InvalidSignature', 'the request is not signed by the key it carries', true),
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

/**
 * What the cloud's verdicts mean for a CSR, given the approvals of the last minute (`recent`,
 * timestamps in ms, already inside the window). `retryInMs`: when to look at it again.
 */
export function judgeCsr(input: {
  csr: CsrObject;
  plan: Exclude<Plan, { kind: 'decided' }>;
  nodeClaims: readonly NodeClaimObject[];
  verdicts: readonly NodeIdentityVerdict[];
  recent: readonly number[];
  approvalsPerMinute: number;
  now: number;
}): Judgement {
  const { csr, plan, nodeClaims, verdicts, recent, approvalsPerMinute, now } = input;
  const { nodeName } = plan;
  const index = verdicts.findIndex((v) => v.verified);
  if (index < 0) {
    const failed = verdicts.find((v) => !v.verified && v.reason === 'CloudLookupFailed');
    if (failed && !failed.verified) {
      return {
        approve: false,
        outcome: ignored('CloudLookupFailed', failed.message, false, nodeName),
        retryInMs: CLOUD_RETRY_MS,
      };
    }
    if (plan.kind === 'client') {
      return {
        approve: false,
        outcome: ignored(
          'UnknownNodeName',
          `no instance of the ${nodeClaims.length} NodeClaim(s) awaiting a node is named ${nodeName}`,
          false,
          nodeName,
        ),
      };
    }
    const verdict = verdicts[0];
    return {
      approve: false,
      outcome: denied(
        verdict && !verdict.verified ? verdict.reason : 'NodeNameMismatch',
        verdict && !verdict.verified ? verdict.message : `node ${nodeName} could not be verified`,
        false,
        nodeName,
      ),
    };
  }
  const nodeClaim = nodeClaims[index]!;
  if (createdAt(csr) < createdAt(nodeClaim)) {
    return {
      approve: false,
      outcome: denied(
        'CreatedBeforeNodeClaim',
        `CSR created ${stamp(csr)} before NodeClaim ${nodeClaim.metadata?.name} (${stamp(nodeClaim)}); a machine cannot ask before it exists`,
        true,
        nodeName,
      ),
    };
  }
  if (recent.length >= approvalsPerMinute) {
    return {
      approve: false,
      outcome: ignored(
        'RateLimited',
        `${recent.length} approvals in the last minute (cap ${approvalsPerMinute}); retried when the window frees`,
        false,
        nodeName,
      ),
      retryInMs: recent[0]! + RATE_WINDOW_MS - now + 10,
    };
  }
  return { approve: true };
}

/** The approvals still inside the rate window at `now`, oldest first. */
export function approvalWindow(approvals: readonly number[], now: number): number[] {
  return approvals.filter((t) => t > now - RATE_WINDOW_MS);
}
