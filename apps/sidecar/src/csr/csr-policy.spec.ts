import { describe, expect, it } from '@jest/globals';
import type { NodeIdentityVerdict } from '@fleet/cloud-provider';
import {
  createCertificateRequestPem,
  kubeletCsrRequest,
  type CertificateRequestSans,
} from '@fleet/testing';
import {
  CLIENT_SIGNER,
  CLOUD_RETRY_MS,
  NODE_BOOTSTRAPPER,
  RATE_WINDOW_MS,
  SERVING_SIGNER,
  approvalWindow,
  judgeCsr,
  planCsr,
  type CsrObject,
  type NodeClaimObject,
  type Plan,
} from './csr-policy.js';

const NODE = 'node-a.internal';
const at = (iso: string) => ({ creationTimestamp: iso as unknown as Date });

const clientCsr = (over: Partial<NonNullable<CsrObject['spec']>> = {}): CsrObject => ({
  metadata: { name: 'csr-client', ...at('2026-01-01T00:00:10Z') },
  spec: {
    signerName: CLIENT_SIGNER,
    username: NODE_BOOTSTRAPPER,
    request: kubeletCsrRequest(NODE),
    usages: ['digital signature', 'client auth'],
    ...over,
  },
});
const OWN_SANS = { dnsNames: [NODE], ipAddresses: ['10.0.1.5'] };
const servingCsr = (
  username = `system:node:${NODE}`,
  sans: CertificateRequestSans = OWN_SANS,
  usages = ['digital signature', 'server auth'],
): CsrObject => ({
  metadata: { name: 'csr-serving', ...at('2026-01-01T00:00:10Z') },
  spec: {
    signerName: SERVING_SIGNER,
    username,
    groups: ['system:nodes', 'system:authenticated'],
    request: kubeletCsrRequest(NODE, sans),
    usages,
  },
});
const waiting: NodeClaimObject = {
  metadata: { name: 'claim-1', ...at('2026-01-01T00:00:00Z') },
  status: { providerID: 'cloud:///zone/i-1' },
};
const joined: NodeClaimObject = {
  metadata: { name: 'claim-2', ...at('2026-01-01T00:00:00Z') },
  status: { providerID: 'cloud:///zone/i-2', nodeName: NODE },
};
const verified: NodeIdentityVerdict = {
  nodeName: NODE,
  providerID: 'cloud:///zone/i-1',
  verified: true,
  instanceID: 'i-1',
  addresses: { dnsNames: [NODE], ipAddresses: ['10.0.1.5'] },
};
const NOW = Date.parse('2026-01-01T00:01:00Z');

const work = (plan: Plan) => {
  if (plan.kind === 'decided') throw new Error(`decided: ${plan.outcome.reason}`);
  return plan;
};

describe('CSR policy: what a CSR is, from the CSR and the NodeClaims alone', () => {
  it('ignores, for good, CSRs of other signers and of unexpected requesters', () => {
    expect(planCsr(clientCsr({ signerName: 'example.com/other' }), [])).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Ignored', reason: 'UnsupportedSigner', final: true },
    });
    expect(planCsr(clientCsr({ username: 'system:serviceaccount:x:y' }), [waiting])).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Ignored', reason: 'UnexpectedUsername' },
    });
    expect(planCsr(servingCsr('system:admin'), [joined])).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Ignored', reason: 'UnexpectedUsername' },
    });
  });

  it('refuses a request that is not a valid PKCS#10 request', () => {
    expect(planCsr(clientCsr({ request: 'bm90IGEgcmVxdWVzdA==' }), [waiting])).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Denied', reason: 'InvalidCertificateRequest', final: true },
    });
  });

  it('waits on a client CSR while no NodeClaim awaits a node, then checks every candidate', () => {
    expect(planCsr(clientCsr(), [joined])).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Ignored', reason: 'UnknownNodeName', final: false, nodeName: NODE },
    });
    expect(planCsr(clientCsr(), [waiting, joined])).toEqual({
      kind: 'client',
      nodeName: NODE,
      candidates: [waiting],
    });
  });

  it('refuses a serving CSR whose subject is not its requester, and needs its NodeClaim', () => {
    expect(planCsr(servingCsr('system:node:someone-else'), [joined])).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Denied', reason: 'SubjectMismatch' },
    });
    expect(planCsr(servingCsr(), [waiting])).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Ignored', reason: 'NoNodeClaim', final: false },
    });
    expect(planCsr(servingCsr(), [waiting, joined])).toEqual({
      kind: 'serving',
      nodeName: NODE,
      nodeClaim: joined,
      subjectAltNames: { ...OWN_SANS, emailAddresses: [], uris: [], others: 0 },
    });
  });

  it('refuses usages other than those the kubelet asks for', () => {
    expect(
      planCsr(clientCsr({ usages: ['digital signature', 'server auth'] }), [waiting]),
    ).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Denied', reason: 'UnexpectedUsages', final: true },
    });
    expect(
      planCsr(
        servingCsr(undefined, OWN_SANS, ['digital signature', 'server auth', 'client auth']),
        [joined],
      ),
    ).toMatchObject({
      kind: 'decided',
      outcome: { decision: 'Denied', reason: 'UnexpectedUsages' },
    });
    // key encipherment is what a kubelet with an RSA key adds.
    expect(
      planCsr(
        servingCsr(undefined, OWN_SANS, ['key encipherment', 'digital signature', 'server auth']),
        [joined],
      ),
    ).toMatchObject({ kind: 'serving' });
    expect(planCsr(clientCsr({ usages: ['client auth'] }), [waiting])).toMatchObject({
      outcome: {
        reason: 'UnexpectedUsages',
        message: expect.stringContaining('missing digital signature') as unknown,
      },
    });
  });

  it('refuses a subject outside system:nodes', () => {
    const request = Buffer.from(
      createCertificateRequestPem({
        commonName: `system:node:${NODE}`,
        organizations: ['system:masters'],
      }),
    ).toString('base64');
    expect(planCsr(clientCsr({ request }), [waiting])).toMatchObject({
      outcome: { decision: 'Denied', reason: 'InvalidOrganization' },
    });
  });

  it('refuses email and URI SANs on a serving CSR, and any SAN on a client CSR', () => {
    expect(
      planCsr(servingCsr(undefined, { ...OWN_SANS, emailAddresses: ['root@example.com'] }), [
        joined,
      ]),
    ).toMatchObject({
      outcome: { decision: 'Denied', reason: 'UnexpectedSubjectAltNames', final: true },
    });
    expect(
      planCsr(servingCsr(undefined, { ...OWN_SANS, uris: ['spiffe://cluster/ns/kube-system'] }), [
        joined,
      ]),
    ).toMatchObject({ outcome: { decision: 'Denied', reason: 'UnexpectedSubjectAltNames' } });
    expect(planCsr(servingCsr(undefined, {}), [joined])).toMatchObject({
      outcome: { decision: 'Denied', reason: 'NoSubjectAltNames' },
    });
    expect(
      planCsr(clientCsr({ request: kubeletCsrRequest(NODE, { dnsNames: [NODE] }) }), [waiting]),
    ).toMatchObject({ outcome: { decision: 'Denied', reason: 'UnexpectedSubjectAltNames' } });
  });

  it('refuses a second client CSR for a node that already has an approved one', () => {
    const issued = {
      byNode: new Map([[NODE, 'csr-first']]),
      byInstance: new Map<string, string>(),
    };
    expect(planCsr(clientCsr(), [waiting], issued)).toMatchObject({
      kind: 'decided',
      outcome: {
        decision: 'Denied',
        reason: 'ClientCertificateAlreadyIssued',
        message: expect.stringContaining('csr-first') as unknown,
        final: true,
      },
    });
  });
});

describe('CSR policy: what the cloud verdicts make of it', () => {
  const judge = (over: Partial<Parameters<typeof judgeCsr>[0]> = {}) =>
    judgeCsr({
      csr: clientCsr(),
      plan: work(planCsr(clientCsr(), [waiting])),
      nodeClaims: [waiting],
      verdicts: [verified],
      recent: [],
      approvalsPerMinute: 2,
      now: NOW,
      ...over,
    });

  it('approves a CSR whose node the cloud verified', () => {
    expect(judge()).toEqual({ approve: true, instanceID: 'i-1' });
  });

  it('refuses a second client CSR for an instance that already got one', () => {
    const issued = {
      byNode: new Map<string, string>(),
      byInstance: new Map([['i-1', 'csr-first']]),
    };
    expect(judge({ issued })).toMatchObject({
      approve: false,
      outcome: { decision: 'Denied', reason: 'ClientCertificateAlreadyIssued', final: true },
    });
  });

  it('approves a serving CSR only when every DNS and IP SAN belongs to the instance', () => {
    const serve = (sans: CertificateRequestSans) => {
      const csr = servingCsr(undefined, sans);
      return judge({ csr, plan: work(planCsr(csr, [joined])), nodeClaims: [joined] });
    };
    expect(serve(OWN_SANS)).toEqual({ approve: true, instanceID: 'i-1' });
    expect(serve({ dnsNames: [NODE.toUpperCase()] })).toEqual({ approve: true, instanceID: 'i-1' });
    // Another node's name or address: the certificate would let this node impersonate it.
    expect(serve({ dnsNames: [NODE, 'node-b.internal'], ipAddresses: ['10.0.1.5'] })).toMatchObject(
      {
        approve: false,
        outcome: {
          decision: 'Denied',
          reason: 'SubjectAltNameNotOwned',
          message: expect.stringContaining('DNS name node-b.internal') as unknown,
          final: true,
        },
      },
    );
    expect(serve({ dnsNames: [NODE], ipAddresses: ['10.0.1.6'] })).toMatchObject({
      approve: false,
      outcome: {
        reason: 'SubjectAltNameNotOwned',
        message: expect.stringContaining('IP address 10.0.1.6') as unknown,
      },
    });
  });

  it('compares IPv6 SANs in one spelling', () => {
    const v6: NodeIdentityVerdict = {
      ...verified,
      addresses: { dnsNames: [NODE], ipAddresses: ['2600:1f18:0:0::a'] },
    };
    const csr = servingCsr(undefined, { ipAddresses: ['2600:1f18::a'] });
    expect(
      judge({ csr, plan: work(planCsr(csr, [joined])), nodeClaims: [joined], verdicts: [v6] }),
    ).toEqual({ approve: true, instanceID: 'i-1' });
  });

  it('retries after a failed cloud lookup instead of deciding', () => {
    const failed: NodeIdentityVerdict = {
      nodeName: NODE,
      providerID: 'cloud:///zone/i-1',
      verified: false,
      reason: 'CloudLookupFailed',
      message: 'throttled',
    };
    expect(judge({ verdicts: [failed] })).toEqual({
      approve: false,
      outcome: expect.objectContaining({ decision: 'Ignored', reason: 'CloudLookupFailed' }),
      retryInMs: CLOUD_RETRY_MS,
    });
  });

  it('denies a serving CSR with the verdict reason, and ignores an unmatched client CSR', () => {
    const mismatch: NodeIdentityVerdict = {
      nodeName: NODE,
      providerID: 'cloud:///zone/i-2',
      verified: false,
      reason: 'NodeNameMismatch',
      message: 'instance i-2 is named other.internal',
    };
    const serving = work(planCsr(servingCsr(), [joined]));
    expect(
      judge({ csr: servingCsr(), plan: serving, nodeClaims: [joined], verdicts: [mismatch] }),
    ).toMatchObject({
      approve: false,
      outcome: { decision: 'Denied', reason: 'NodeNameMismatch', final: false },
    });
    expect(judge({ verdicts: [{ ...mismatch, providerID: 'cloud:///zone/i-1' }] })).toMatchObject({
      approve: false,
      outcome: { decision: 'Ignored', reason: 'UnknownNodeName' },
    });
  });

  it('never approves a CSR created before its NodeClaim', () => {
    const early = clientCsr();
    early.metadata = { name: 'csr-early', ...at('2025-12-31T23:59:59Z') };
    expect(judge({ csr: early })).toMatchObject({
      approve: false,
      outcome: { decision: 'Denied', reason: 'CreatedBeforeNodeClaim', final: true },
    });
  });

  it('holds approvals over the cap until the oldest leaves the window', () => {
    const recent = [NOW - 50_000, NOW - 1_000];
    expect(judge({ recent })).toEqual({
      approve: false,
      outcome: expect.objectContaining({ decision: 'Ignored', reason: 'RateLimited' }),
      retryInMs: 10_000 + 10,
    });
    expect(approvalWindow([NOW - RATE_WINDOW_MS, NOW - 50_000, NOW - 1_000], NOW)).toEqual(recent);
  });
});
