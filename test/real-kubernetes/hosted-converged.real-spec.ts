import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { deploymentAvailable, refusedRequests } from '../support/control-plane/scenario.js';
import { HOSTED } from '../support/hcp-aws-hosted.js';
import { eventually } from '../support/processes.js';
import { ROLE, hasCondition, startHostedFleet, type HostedFleet } from './hosted-fleet.js';

// The converged hosted scenario (test/hosted/converged) on real servers, the management cluster's
// and the guest's, through the fleet: the sidecar process, with only deploy/sidecar/hosted's and
// hosted-converged's Roles on the management cluster, runs the operand in the HCP namespace (the
// real Deployment controller runs it) and everything else in the guest; the management server's
// audit log shows nothing refused.

const HC_API = 'hypershift.openshift.io/v1beta1';
const OPERAND = 'karpenter-fleet-operand';
const FINALIZER = 'fleet.karpenter.sh/hosted-karpenter-cleanup';

describe('hosted control plane in converged mode, on real management and guest servers', () => {
  let fleet: HostedFleet;

  beforeAll(async () => {
    fleet = await startHostedFleet('Converged');
  }, 180_000);
  afterAll(async () => fleet?.stop());

  it('runs the operand in the HCP namespace and the rest in the guest, with the Roles of deploy/ alone', async () => {
    const { cluster } = fleet;
    await fleet.upsertGeneralNodePool();
    const generation = await fleet.setKarpenter({ enabled: true, webIdentityRoleArn: ROLE });
    await eventually(
      () => cluster.management.get('apps/v1', 'Deployment', OPERAND, HOSTED.hcpNamespace),
      { timeoutMs: 60_000, what: 'the operand Deployment in the HCP namespace' },
    );
    await deploymentAvailable(cluster.management, HOSTED.hcpNamespace, OPERAND);
    const ready = await fleet.status(
      generation,
      (cs) => hasCondition(cs, 'Available', 'True', 'AsExpected'),
      'Available once the operand runs and the NodeClass is derived',
    );
    expect(ready).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'HostedMode', status: 'True', reason: 'Converged' }),
        expect.objectContaining({ type: 'Degraded', status: 'False' }),
      ]),
    );
    expect(
      (await cluster.management.get(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace))
        ?.metadata?.finalizers,
    ).toContain(FINALIZER);
    for (const crd of [
      'nodepools.karpenter.sh',
      'nodeclaims.karpenter.sh',
      'ec2nodeclasses.karpenter.k8s.aws',
      'openshiftec2nodeclasses.karpenter.hypershift.openshift.io',
    ]) {
      expect(
        await cluster.guest.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd),
      ).toBeDefined();
    }
    expect(await cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')).toBeDefined();
    expect(
      (await cluster.guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet'))?.spec,
    ).toEqual(
      expect.objectContaining({
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-0rhcos4213west2001' }],
      }),
    );
    expect(refusedRequests(cluster.management, cluster.sidecarUser)).toEqual([]);
  }, 120_000);
});
