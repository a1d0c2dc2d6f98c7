import { describe, expect, it } from '@jest/globals';
import { unsupportedChange } from './change.js';

const hosted = { platform: 'AWS', topology: 'HOSTED', managementCluster: 'mgmt-1' };
const capi = { platform: 'CAPI', topology: 'STANDALONE' };
const aws = { platform: 'AWS', topology: 'STANDALONE' };

describe('unsupportedChange', () => {
  it.each(['DISABLE', 'MIGRATE'] as const)(
    'refuses %s for a hosted cluster, naming the HyperShift NodePools',
    (mode) => {
      const refusal = unsupportedChange(hosted, { clusterAutoscalerMode: mode });
      expect(refusal?.field).toBe('clusterAutoscalerMode');
      expect(refusal?.reason).toMatch(new RegExp(`^${mode} is not supported for HOSTED clusters`));
      expect(refusal?.reason).toContain(
        'hypershift.openshift.io/v1beta1 NodePool spec.autoScaling',
      );
      expect(refusal?.reason).toContain('management cluster mgmt-1');
    },
  );

  it('accepts either drift policy on every topology (the hosted sidecar watches its guest objects)', () => {
    expect(unsupportedChange(hosted, { driftPolicy: 'REPORT' })).toBeUndefined();
    expect(unsupportedChange(hosted, { driftPolicy: 'CORRECT' })).toBeUndefined();
    expect(unsupportedChange(aws, { driftPolicy: 'REPORT' })).toBeUndefined();
    expect(unsupportedChange(capi, { driftPolicy: 'REPORT' })).toBeUndefined();
  });

  it('refuses a Karpenter release or operand image where the fleet does not run the operand', () => {
    expect(unsupportedChange(hosted, { karpenterVersion: '1.13.1' })).toMatchObject({
      field: 'karpenterVersion',
      reason: expect.stringContaining('HyperShift runs its own') as unknown,
    });
    expect(
      unsupportedChange(capi, { operandImage: 'quay.io/x/y@sha256:' + 'a'.repeat(64) }),
    ).toMatchObject({
      field: 'operandImage',
      reason: expect.stringContaining('karpenter-provider-cluster-api') as unknown,
    });
    expect(unsupportedChange(aws, { karpenterVersion: '1.13.1' })).toBeUndefined();
  });

  it('lets KEEP, other fields and standalone clusters through', () => {
    expect(unsupportedChange(hosted, { clusterAutoscalerMode: 'KEEP' })).toBeUndefined();
    expect(unsupportedChange(hosted, {})).toBeUndefined();
    expect(unsupportedChange(capi, { clusterAutoscalerMode: 'DISABLE' })).toBeUndefined();
    expect(unsupportedChange(aws, { clusterAutoscalerMode: 'DISABLE' })).toBeUndefined();
  });
});
