import { describe, expect, it } from '@jest/globals';
import { proposeDesiredState, unsupportedChange } from './change.js';

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

  it('admits on hosted clusters only the role ARN partitions HyperShift accepts (issue 42, point 13)', () => {
    for (const partition of ['aws', 'aws-cn', 'aws-us-gov'])
      expect(
        unsupportedChange(hosted, {
          webIdentityRoleArn: `arn:${partition}:iam::111122223333:role/karpenter`,
        }),
      ).toBeUndefined();
    const iso = 'arn:aws-iso:iam::111122223333:role/karpenter';
    expect(unsupportedChange(hosted, { webIdentityRoleArn: iso })).toMatchObject({
      field: 'webIdentityRoleArn',
      reason: expect.stringContaining(
        'only in the aws, aws-cn and aws-us-gov partitions',
      ) as unknown,
    });
    // IAM's other partitions stay valid where the operand assumes the role itself.
    expect(unsupportedChange(aws, { webIdentityRoleArn: iso })).toBeUndefined();
  });

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

describe('proposeDesiredState', () => {
  const current = {
    enabled: true,
    paused: false,
    clusterAutoscalerMode: 'KEEP',
    logLevel: 'info',
    featureGates: { Drift: true },
    nodePools: [
      { name: 'b', spec: { weight: 1 } },
      { name: 'd', spec: { weight: 2 } },
    ],
  };

  it('applies settings, replaces the feature gates and upserts a NodePool in name order', () => {
    const next = proposeDesiredState(current, {
      logLevel: 'debug',
      featureGates: { SpotToSpotConsolidation: true },
      upsertNodePool: { name: 'c', spec: { weight: 3 } },
    });
    expect(next).toEqual({
      ...current,
      logLevel: 'debug',
      featureGates: { SpotToSpotConsolidation: true },
      nodePools: [
        { name: 'b', spec: { weight: 1 } },
        { name: 'c', spec: { weight: 3 } },
        { name: 'd', spec: { weight: 2 } },
      ],
    });
    expect(current.nodePools).toHaveLength(2);
    expect(current.logLevel).toBe('info');
  });

  it('replaces an existing NodePool whole and deletes one', () => {
    expect(
      proposeDesiredState(current, { upsertNodePool: { name: 'd', spec: { weight: 9 } } })
        .nodePools,
    ).toEqual([
      { name: 'b', spec: { weight: 1 } },
      { name: 'd', spec: { weight: 9 } },
    ]);
    expect(proposeDesiredState(current, { deleteNodePool: 'b' }).nodePools).toEqual([
      { name: 'd', spec: { weight: 2 } },
    ]);
  });
});
