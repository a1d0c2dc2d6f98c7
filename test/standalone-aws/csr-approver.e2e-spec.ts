import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CsrDecision } from '@fleet/contracts';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

const CSR = ['certificates.k8s.io/v1', 'CertificateSigningRequest'] as const;
const CAP = 10;

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
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
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
          message: 'Auto approved by karpenter_machine_approver',
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

  it('refuses a serving CSR that names another node or anything but DNS names and IPs', async () => {
    const node = await sim.launch('general');
    const other = h.cluster.ec2.addInstance({ AvailabilityZone: 'us-east-1a' });
    const own = h.cluster.ec2.getInstance(node.instanceId)!;
    const asNode = { username: `system:node:${node.nodeName}`, groups: ['system:nodes'] };
    const forgedDns = sim.submitCsr(node.nodeName, 'serving', asNode, {
      subjectAltNames: { dnsNames: [node.nodeName, other.PrivateDnsName] },
    });
    const forgedIp = sim.submitCsr(node.nodeName, 'serving', asNode, {
      subjectAltNames: { dnsNames: [node.nodeName], ipAddresses: [other.PrivateIpAddress] },
    });
    const email = sim.submitCsr(node.nodeName, 'serving', asNode, {
      subjectAltNames: { dnsNames: [node.nodeName], emailAddresses: ['admin@example.com'] },
    });
    const usages = sim.submitCsr(node.nodeName, 'serving', asNode, {
      usages: ['digital signature', 'server auth', 'client auth'],
    });
    expect(await decided(forgedDns, 'SubjectAltNameNotOwned')).toMatchObject({
      decision: 'Denied',
      message: expect.stringContaining(`DNS name ${other.PrivateDnsName}`) as unknown,
    });
    expect(await decided(forgedIp, 'SubjectAltNameNotOwned')).toMatchObject({
      decision: 'Denied',
      message: expect.stringContaining(`IP address ${other.PrivateIpAddress}`) as unknown,
    });
    expect(await decided(email, 'UnexpectedSubjectAltNames')).toMatchObject({ decision: 'Denied' });
    expect(await decided(usages, 'UnexpectedUsages')).toMatchObject({ decision: 'Denied' });
    for (const csr of [forgedDns, forgedIp, email, usages]) expect(conditionsOf(csr)).toEqual([]);
    // Its own names and addresses, as the kubelet asks for them, are still approved.
    const honest = sim.submitCsr(node.nodeName, 'serving', asNode, {
      subjectAltNames: { dnsNames: [node.nodeName], ipAddresses: [own.PrivateIpAddress] },
    });
    await sim.approved(honest);
  });

  it('approves one client CSR per node: never a second, never for a node that has joined', async () => {
    const claim = sim.createNodeClaim('general');
    const first = sim.submitCsr(claim.nodeName, 'client');
    await sim.approved(first);
    const second = sim.submitCsr(claim.nodeName, 'client');
    expect(await decided(second, 'ClientCertificateAlreadyIssued')).toMatchObject({
      decision: 'Denied',
      nodeName: claim.nodeName,
      message: expect.stringContaining(first) as unknown,
    });
    sim.registerNode(claim, 'general');
    const joined = claim.nodeName;
    const third = sim.submitCsr(joined, 'client');
    // The approved CSR still names the node; once it is gone the Node itself refuses.
    expect(await decided(third, 'ClientCertificateAlreadyIssued')).toMatchObject({
      decision: 'Denied',
    });
    h.cluster.kube.delete('certificates.k8s.io/v1', 'CertificateSigningRequest', first);
    const fourth = sim.submitCsr(joined, 'client');
    expect(await decided(fourth, 'NodeAlreadyExists')).toMatchObject({ decision: 'Denied' });
    for (const csr of [second, third, fourth]) expect(conditionsOf(csr)).toEqual([]);
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
    // Three nodes joined: the first test's, the SAN test's and the one-client-CSR test's.
    expect(snapshot.metrics).toMatchObject({ csrApproved: CAP, nodes: 3, vcpus: 12 });
    expect(snapshot.metrics.csrIgnored).toBeGreaterThan(0);
    expect(snapshot.metrics.csrDenied).toBeGreaterThanOrEqual(2);
    expect(snapshot.metrics.nodeClaimsByState).toMatchObject({ Ready: 3 });
    h.runtime.approver.acknowledge(snapshot.csrDecisions);
    expect(
      h.runtime.approver.unsentDecisions().filter((d) => snapshot.csrDecisions.includes(d)),
    ).toEqual([]);
  });
});
