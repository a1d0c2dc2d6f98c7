import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { RealHyperShiftStandIn } from '../support/control-plane/hosted-clusters.js';
import { refusedRequests } from '../support/control-plane/scenario.js';
import { ROLE, hasCondition, startHostedFleet, type HostedFleet } from './hosted-fleet.js';

// The hosted headline scenario (test/hosted/autonode) on real servers, the management cluster's
// and the guest's, through the fleet: the sidecar process, with only deploy/sidecar/hosted's Roles
// on the management cluster, sets spec.autoNode; HyperShift (a stand-in: it cannot be built here)
// runs Karpenter, whose Deployments the real controllers run; the fleet's NodePool and
// OpenshiftEC2NodeClass land in the guest; the management server's audit log shows nothing refused.

const HC_API = 'hypershift.openshift.io/v1beta1';

describe('hosted control plane in AutoNode mode, on real management and guest servers', () => {
  let fleet: HostedFleet;
  let hypershift: RealHyperShiftStandIn | undefined;

  beforeAll(async () => {
    fleet = await startHostedFleet('AutoNode', (cluster) => {
      hypershift = new RealHyperShiftStandIn(cluster).start();
    });
  }, 180_000);
  afterAll(async () => {
    hypershift?.stop();
    await fleet?.stop();
  });

  it('enabling sets spec.autoNode; the NodePool and OpenshiftEC2NodeClass land in the guest; status is HyperShift’s; nothing refused', async () => {
    const { cluster } = fleet;
    await fleet.status(
      await fleet.setKarpenter({ clusterAutoscalerMode: 'KEEP' }),
      (cs) => hasCondition(cs, 'AutoNodeEnabled', 'False', 'AutoNodeNotConfigured'),
      'AutoNodeNotConfigured while Karpenter is disabled',
    );
    await fleet.upsertGeneralNodePool();
    const ready = await fleet.status(
      await fleet.setKarpenter({ enabled: true, webIdentityRoleArn: ROLE }),
      (cs) => hasCondition(cs, 'Available', 'True', 'AsExpected'),
      'Available from HyperShift’s AutoNodeEnabled',
    );
    expect(ready).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'AutoNodeEnabled', status: 'True', reason: 'AsExpected' }),
        expect.objectContaining({ type: 'HostedMode', status: 'True', reason: 'AutoNode' }),
        expect.objectContaining({ type: 'Degraded', status: 'False' }),
      ]),
    );
    expect(
      (await cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters'))?.spec,
    ).toEqual(
      expect.objectContaining({
        autoNode: {
          provisionerConfig: {
            name: 'Karpenter',
            karpenter: { platform: 'AWS', aws: { roleARN: ROLE } },
          },
        },
      }),
    );
    expect(
      await cluster.guest.get(
        'karpenter.hypershift.openshift.io/v1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      ),
    ).toBeDefined();
    const pool = await cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general');
    expect(
      (pool?.spec as { template: { spec: { nodeClassRef: unknown } } }).template.spec.nodeClassRef,
    ).toEqual({
      group: 'karpenter.hypershift.openshift.io',
      kind: 'OpenshiftEC2NodeClass',
      name: 'karpenter-fleet',
    });
    expect(refusedRequests(cluster.management, cluster.sidecarUser)).toEqual([]);
  }, 120_000);
});
