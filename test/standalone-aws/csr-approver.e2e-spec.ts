import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CsrDecision } from '@fleet/contracts';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

const CSR = ['certificates.k8s.io/v1', 'CertificateSigningRequest'] as const;
const CAP = 6;

describe('standalone AWS: the karpenter-machine-approver', () => {
  let h: Harness;
  let sim: NodeLaunchSimulator;

  const decisionsFor = (csr: string): CsrDecision[] =>
    h.runtime.approver.unsentDecisions().filter((d) => d.csrName === csr);
  const decided = (csr: string, reason: string) =>
    until(() => decisionsFor(csr).find((d) => d.reason === reason), `${csr} decided ${reason}`);
  const conditionsOf = (csr: string) =>
    (
      h.cluster.kube.get(...CSR, csr)?.status as
        { conditions?: { type: string; reason: string; message: string }[] } | undefined
    )?.conditions ?? [];

  beforeAll(async () => {
    h = await startHarness({ approvalsPerMinute: CAP });
    await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    sim = new NodeLaunchSimulator({ kube: h.cluster.kube, ec2: h.cluster.ec2 }).start();
    await h.runtime.nodeClaims.whenSynced();
    await h.runtime.csrs.whenSynced();
  });
  afterAll(async () => {
    sim?.stop();
    await h?.stop();
  });

  it('approves the client and serving CSRs of a Karpenter node (latency: npm run bench)', async () => {
    const node = await sim.launch('general');
    for (const csr of [node.clientCsr, node.servingCsr]) {
      expect(conditionsOf(csr)).toEqual([
        expect.objectContaining({
          type: 'Approved',
          status: 'True',
          reason: 'KarpenterCSRApprove',
          message: 'Auto approved by karpenter-machine-approver',
        }),
      ]);
      // The serving CSR can race the NodeClaim watch (nodeName not seen yet): a waiting
      // NoNodeClaim may come first, but never a refusal, and the last word is the approval.
      await decided(csr, 'KarpenterCSRApprove');
      expect(decisionsFor(csr).at(-1)).toMatchObject({
        decision: 'Approved',
        reason: 'KarpenterCSRApprove',
        nodeName: node.nodeName,
      });
      expect(decisionsFor(csr).filter((d) => d.decision === 'Denied')).toEqual([]);
    }
    // One DescribeInstances per pass, by id.
    expect(
      h.cluster.ec2.requestLog.filter((r) => r.action === 'DescribeInstances').length,
    ).toBeGreaterThan(0);
  });

  it('ignores a client CSR whose node name no NodeClaim instance has', async () => {
    const claim = sim.createNodeClaim('general');
    const csr = sim.submitCsr('ip-10-9-9-9.ec2.internal', 'client');
    const d = await decided(csr, 'UnknownNodeName');
    expect(d).toMatchObject({ decision: 'Ignored', nodeName: 'ip-10-9-9-9.ec2.internal' });
    expect(conditionsOf(csr)).toEqual([]);
    h.cluster.kube.delete('karpenter.sh/v1', 'NodeClaim', claim.name);
  });

  it('refuses a serving CSR when the instance behind the NodeClaim has another PrivateDnsName', async () => {
    const claim = sim.createNodeClaim('general');
    // Karpenter recorded a node name that is not the instance's.
    h.cluster.kube.patchStatus('karpenter.sh/v1', 'NodeClaim', claim.name, undefined, {
      nodeName: 'ip-10-0-250-1.ec2.internal',
    });
    const csr = sim.submitCsr('ip-10-0-250-1.ec2.internal', 'serving');
    const d = await decided(csr, 'NodeNameMismatch');
    expect(d).toMatchObject({
      decision: 'Denied',
      message: expect.stringContaining(claim.nodeName) as unknown,
    });
    expect(conditionsOf(csr)).toEqual([]);
  });

  it('ignores CSRs of other signers and of unexpected users', async () => {
    const claim = sim.createNodeClaim('general');
    const wrongUser = sim.submitCsr(claim.nodeName, 'client', {
      username: 'system:admin',
      groups: ['system:masters'],
    });
    const wrongSigner = `csr-signer-${claim.name}`;
    h.cluster.kube.create({
      apiVersion: CSR[0],
      kind: CSR[1],
      metadata: { name: wrongSigner },
      spec: {
        request: (h.cluster.kube.get(...CSR, wrongUser)!.spec as { request: string }).request,
        signerName: 'example.com/custom',
        usages: ['client auth'],
      },
    });
    const servingNotNode = sim.submitCsr(claim.nodeName, 'serving', {
      username: `system:node:${claim.nodeName}`,
      groups: ['system:authenticated'],
    });
    expect(await decided(wrongUser, 'UnexpectedUsername')).toMatchObject({ decision: 'Ignored' });
    expect(await decided(wrongSigner, 'UnsupportedSigner')).toMatchObject({ decision: 'Ignored' });
    expect(await decided(servingNotNode, 'UnexpectedUsername')).toMatchObject({
      decision: 'Ignored',
    });
    for (const csr of [wrongUser, wrongSigner, servingNotNode])
      expect(conditionsOf(csr)).toEqual([]);
    // The legitimate CSR for the same node is still approved.
    const good = sim.submitCsr(claim.nodeName, 'client');
    await sim.approved(good);
  });

  it('leaves the serving CSR of a MachineSet node alone', async () => {
    const machine = h.cluster.ec2.addInstance({ AvailabilityZone: 'us-east-1b' });
    const csr = sim.submitCsr(machine.PrivateDnsName, 'serving');
    expect(await decided(csr, 'NoNodeClaim')).toMatchObject({
      decision: 'Ignored',
      nodeName: machine.PrivateDnsName,
    });
    expect(conditionsOf(csr)).toEqual([]);
  });

  it('never approves a CSR created before its NodeClaim', async () => {
    // The instance exists first (e.g. a stolen bootstrap token on a machine), its CSR is filed,
    // and only later does a NodeClaim point at that instance.
    const early = h.cluster.ec2.addInstance({ AvailabilityZone: 'us-east-1a' });
    const csr = sim.submitCsr(early.PrivateDnsName, 'client');
    await decided(csr, 'UnknownNodeName');
    await new Promise((r) => setTimeout(r, 1100)); // creationTimestamp has a resolution of 1 s
    const name = `general-late-${early.InstanceId.slice(-5)}`;
    h.cluster.kube.create({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name, labels: { 'karpenter.sh/nodepool': 'general' } },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        ],
      },
    });
    h.cluster.kube.patchStatus('karpenter.sh/v1', 'NodeClaim', name, undefined, {
      providerID: `aws:///us-east-1a/${early.InstanceId}`,
    });
    expect(await decided(csr, 'CreatedBeforeNodeClaim')).toMatchObject({
      decision: 'Denied',
      nodeName: early.PrivateDnsName,
    });
    expect(conditionsOf(csr)).toEqual([]);
    h.cluster.kube.delete('karpenter.sh/v1', 'NodeClaim', name);
  });

  it('caps approvals per minute and records the rest as RateLimited', async () => {
    const approvedSoFar = h.runtime.approver.counts.approved;
    const budget = CAP - approvedSoFar;
    expect(budget).toBeGreaterThan(0);
    const claims = Array.from({ length: budget + 3 }, () => sim.createNodeClaim('general'));
    const csrs = claims.map((c) => sim.submitCsr(c.nodeName, 'client'));
    await until(
      () => (csrs.every((csr) => decisionsFor(csr).length > 0) ? true : undefined),
      'a decision for every CSR of the flood',
    );
    const outcomes = csrs.map((csr) => decisionsFor(csr).at(-1)!.reason);
    expect(outcomes.filter((r) => r === 'KarpenterCSRApprove')).toHaveLength(budget);
    expect(outcomes.filter((r) => r === 'RateLimited')).toHaveLength(3);
    expect(h.runtime.approver.counts.approved).toBe(CAP);
  });

  it('reports decisions and counts until a report carrying them is accepted', async () => {
    const snapshot = (await h.runtime.snapshot())!;
    expect(snapshot.csrDecisions.length).toBeGreaterThan(5);
    expect(snapshot.metrics).toMatchObject({ csrApproved: CAP, nodes: 1, vcpus: 4 });
    expect(snapshot.metrics.csrIgnored).toBeGreaterThan(0);
    expect(snapshot.metrics.csrDenied).toBeGreaterThanOrEqual(2);
    expect(snapshot.metrics.nodeClaimsByState).toMatchObject({ Ready: 1 });
    h.runtime.approver.acknowledge(snapshot.csrDecisions);
    expect(
      h.runtime.approver.unsentDecisions().filter((d) => snapshot.csrDecisions.includes(d)),
    ).toEqual([]);
  });
});
