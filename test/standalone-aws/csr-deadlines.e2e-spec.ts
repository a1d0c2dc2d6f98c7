import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

/**
 * No call without a deadline: a DescribeInstances or an API-server request that is accepted and
 * never answered fails after its timeout, and the approver goes on (the next pass, the next CSR).
 * Without deadlines the one approval pass in flight waits forever and no CSR is approved again.
 */
describe('standalone AWS: the approver under calls that never return', () => {
  let h: Harness;
  let sim: NodeLaunchSimulator;

  beforeAll(async () => {
    h = await startHarness({ timeouts: { apiServerSeconds: 2, ec2RequestSeconds: 2 } });
    // With 2 s API-server deadlines a loaded machine can cut an apply short (the sidecar then
    // applies again at its next order); here the next order is this loop.
    const order = h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] });
    let conditions = '';
    await until(
      async () => {
        const result = await h.runtime.apply(order);
        conditions = JSON.stringify(result.conditions);
        h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
        return true;
      },
      'the operand applied',
      45_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last apply: ${conditions}`);
    });
    // Waiting out a deadline (and the 5 s retry after a failed pass) takes longer than a launch.
    sim = new NodeLaunchSimulator({
      kube: h.cluster.kube,
      ec2: h.cluster.ec2,
      approvalTimeoutMs: 30_000,
    }).start();
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
  });
  afterAll(async () => {
    sim?.stop();
    await h?.stop();
  });

  it('approves the next CSRs while a DescribeInstances hangs', async () => {
    const held = h.cluster.ec2.stall('DescribeInstances', 1);
    const first = sim.createNodeClaim('general');
    const firstCsr = sim.submitCsr(first.nodeName, 'client');
    await until(() => (held() === 1 ? true : undefined), 'the DescribeInstances held');
    const second = sim.createNodeClaim('general');
    const secondCsr = sim.submitCsr(second.nodeName, 'client');
    await sim.approved(secondCsr);
    await sim.approved(firstCsr);
    // The hung request is still open: it was given up on, not answered.
    expect(held()).toBe(1);
  }, 60_000);

  it('approves the next CSRs while an API-server read hangs', async () => {
    const claim = sim.createNodeClaim('general');
    // The approver reads the Node of a client CSR before approving it.
    const held = h.cluster.kube.stallRequests('GET', `/api/v1/nodes/${claim.nodeName}`, 1);
    const csr = sim.submitCsr(claim.nodeName, 'client');
    await until(() => (held() === 1 ? true : undefined), 'the Node read held');
    const other = sim.createNodeClaim('general');
    const otherCsr = sim.submitCsr(other.nodeName, 'client');
    await sim.approved(otherCsr);
    await sim.approved(csr);
  }, 60_000);
});
