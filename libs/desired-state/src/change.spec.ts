import { describe, expect, it } from '@jest/globals';
import { topologyRefusal } from './change.js';

describe('topologyRefusal', () => {
  it.each(['DISABLE', 'MIGRATE'] as const)(
    'refuses %s for a hosted cluster, naming the HyperShift NodePools',
    (mode) => {
      const reason = topologyRefusal(
        'HOSTED',
        { clusterAutoscalerMode: mode },
        { managementCluster: 'mgmt-1' },
      );
      expect(reason).toMatch(new RegExp(`^${mode} is not supported for HOSTED clusters`));
      expect(reason).toContain('hypershift.openshift.io/v1beta1 NodePool spec.autoScaling');
      expect(reason).toContain('management cluster mgmt-1');
    },
  );

  it('lets KEEP, other fields and standalone clusters through', () => {
    expect(topologyRefusal('HOSTED', { clusterAutoscalerMode: 'KEEP' })).toBeUndefined();
    expect(topologyRefusal('HOSTED', {})).toBeUndefined();
    expect(topologyRefusal('STANDALONE', { clusterAutoscalerMode: 'DISABLE' })).toBeUndefined();
  });
});
