import type { CsrDecision } from '@fleet/contracts';
import type { NodeIdentityVerdict } from '@fleet/cloud-provider';
import type { KubernetesObject } from '@kubernetes/client-node';
import { canonicalIp, parseCsrRequestField, type SubjectAltNames } from './pkcs10.js';

// The approver's policy, without a cluster: what a CSR is (plan) and what the cloud's verdicts
// make of it (judge). The loop in csr-approver.ts feeds it from watches and acts on the answers.

export const APPROVER_NAME = 'karpenter-machine-approver';
export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const NODE_BOOTSTRAPPER =
  'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
export const APPROVE_REASON = 'KarpenterCSRApprove';
/** Upstream's literal, underscores and all (karpenter-operator's machine approver). */
export const APPROVE_MESSAGE = 'Auto approved by karpenter_machine_approver';
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
    usages?: string[];
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
  | {
      kind: 'serving';
      nodeName: string;
      nodeClaim: NodeClaimObject;
      subjectAltNames: SubjectAltNames;
    };

/** What the cluster already holds that a client CSR must not repeat. */
export interface IssuedClientCertificates {
  /** Node name → the approved client CSR for it (approved here or by anyone else). */
  byNode: ReadonlyMap<string, string>;
  /** Instance id → the client CSR this approver approved for it. */
  byInstance: ReadonlyMap<string, string>;
}

const NONE_ISSUED: IssuedClientCertificates = { byNode: new Map(), byInstance: new Map() };

/**
 * The usages a kubelet asks for (k8s.io/kubernetes pkg/apis/certificates IsKubeletClientCSR and
 * IsKubeletServingCSR): exactly these, key encipherment optional (RSA keys), nothing more.
 */
const USAGES: Record<string, { required: string[]; optional: string[] }> = {
  [CLIENT_SIGNER]: {
    required: ['digital signature', 'client auth'],
    optional: ['key encipherment'],
  },
  [SERVING_SIGNER]: {
    required: ['digital signature', 'server auth'],
    optional: ['key encipherment'],
  },
};

function usageProblem(signer: string, usages: readonly string[]): string | undefined {
  const rule = USAGES[signer]!;
  const missing = rule.required.filter((u) => !usages.includes(u));
  const extra = usages.filter((u) => !rule.required.includes(u) && !rule.optional.includes(u));
  if (missing.length === 0 && extra.length === 0 && new Set(usages).size === usages.length)
    return undefined;
  return `spec.usages [${usages.join(', ')}] must be exactly [${rule.required.join(', ')}] (optionally with ${rule.optional.join(', ')})${missing.length ? `; missing ${missing.join(', ')}` : ''}${extra.length ? `; not allowed ${extra.join(', ')}` : ''}`;
}

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
  { approve: true; instanceID: string } | { approve: false; outcome: Outcome; retryInMs?: number };

/**
 * What can be said of a CSR from the CSR, the NodeClaims and the client certificates already
 * issued, without the cloud.
 */
export function planCsr(
  csr: CsrObject,
  nodeClaims: readonly NodeClaimObject[],
  issued: IssuedClientCertificates = NONE_ISSUED,
): Plan {
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
  const usages = usageProblem(signer, csr.spec?.usages ?? []);
  if (usages) {
    return { kind: 'decided', outcome: denied('UnexpectedUsages', usages, true) };
  }
  if (subject.organizations.length !== 1 || subject.organizations[0] !== NODES_GROUP) {
    return {
      kind: 'decided',
      outcome: denied(
        'InvalidOrganization',
        `subject O [${subject.organizations.join(', ')}] must be exactly [${NODES_GROUP}]`,
        true,
      ),
    };
  }
  const sans = subject.subjectAltNames;

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
    const names = describeSans(sans);
    if (names) {
      return {
        kind: 'decided',
        outcome: denied(
          'UnexpectedSubjectAltNames',
          `a client certificate names no host, but the request has ${names}`,
          true,
          nodeName,
        ),
      };
    }
    const earlier = issued.byNode.get(nodeName);
    if (earlier !== undefined) {
      return {
        kind: 'decided',
        outcome: denied(
          'ClientCertificateAlreadyIssued',
          `client CSR ${earlier} for node ${nodeName} was already approved; a node bootstraps once`,
          true,
          nodeName,
        ),
      };
    }
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
  const foreign = describeSans({ ...sans, dnsNames: [], ipAddresses: [] });
  if (foreign) {
    return {
      kind: 'decided',
      outcome: denied(
        'UnexpectedSubjectAltNames',
        `a serving certificate names only DNS names and IP addresses, but the request has ${foreign}`,
        true,
        nodeName,
      ),
    };
  }
  if (sans.dnsNames.length === 0 && sans.ipAddresses.length === 0) {
    return {
      kind: 'decided',
      outcome: denied(
        'NoSubjectAltNames',
        'a serving certificate must name at least one DNS name or IP address of its node',
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
  return { kind: 'serving', nodeName, nodeClaim, subjectAltNames: sans };
}

/** `email address(s) a@b, c@d; URI(s) …`, or undefined when the request has no SAN of these kinds. */
function describeSans(sans: SubjectAltNames): string | undefined {
  const parts = [
    ['DNS name', sans.dnsNames],
    ['IP address', sans.ipAddresses],
    ['email address', sans.emailAddresses],
    ['URI', sans.uris],
  ] as const;
  const found = parts
    .filter(([, list]) => list.length > 0)
    .map(([what, list]) => `${what}(s) ${list.join(', ')}`);
  if (sans.others > 0) found.push(`${sans.others} other name(s)`);
  return found.length > 0 ? found.join('; ') : undefined;
}

/** The outcome for a client CSR naming a node that has already joined. */
export function nodeAlreadyExists(nodeName: string): Outcome {
  return denied(
    'NodeAlreadyExists',
    `node ${nodeName} already exists; its kubelet renews its certificate as the node, not through the bootstrapper`,
    true,
    nodeName,
  );
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
  issued?: IssuedClientCertificates;
}): Judgement {
  const { csr, plan, nodeClaims, verdicts, recent, approvalsPerMinute, now } = input;
  const issued = input.issued ?? NONE_ISSUED;
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
  const verdict = verdicts[index]!;
  if (verdict.verified && plan.kind === 'client') {
    const earlier = issued.byInstance.get(verdict.instanceID);
    if (earlier !== undefined) {
      return {
        approve: false,
        outcome: denied(
          'ClientCertificateAlreadyIssued',
          `client CSR ${earlier} for instance ${verdict.instanceID} (NodeClaim ${nodeClaim.metadata?.name}) was already approved; one per instance`,
          true,
          nodeName,
        ),
      };
    }
  }
  if (verdict.verified && plan.kind === 'serving') {
    const foreign = sansNotOwned(plan.subjectAltNames, verdict.addresses);
    if (foreign.length > 0) {
      return {
        approve: false,
        outcome: denied(
          'SubjectAltNameNotOwned',
          `${foreign.join(', ')} ${foreign.length > 1 ? 'do' : 'does'} not belong to instance ${verdict.instanceID} of node ${nodeName} (it has ${[...verdict.addresses.dnsNames, ...verdict.addresses.ipAddresses].join(', ') || 'no private names or addresses'})`,
          true,
          nodeName,
        ),
      };
    }
  }
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
  return { approve: true, instanceID: verdict.verified ? verdict.instanceID : '' };
}

/** The SANs of the request that are none of the machine's names or addresses. */
export function sansNotOwned(
  sans: Pick<SubjectAltNames, 'dnsNames' | 'ipAddresses'>,
  owned: { dnsNames: readonly string[]; ipAddresses: readonly string[] },
): string[] {
  // DNS names compare case-insensitively (RFC 4343); IPs in one canonical spelling.
  const dns = new Set(owned.dnsNames.map((n) => n.toLowerCase()));
  const ips = new Set(owned.ipAddresses.map(canonicalIp));
  return [
    ...sans.dnsNames.filter((n) => !dns.has(n.toLowerCase())).map((n) => `DNS name ${n}`),
    ...sans.ipAddresses.filter((ip) => !ips.has(canonicalIp(ip))).map((ip) => `IP address ${ip}`),
  ];
}

/** The approvals still inside the rate window at `now`, oldest first. */
export function approvalWindow(approvals: readonly number[], now: number): number[] {
  return approvals.filter((t) => t > now - RATE_WINDOW_MS);
}
