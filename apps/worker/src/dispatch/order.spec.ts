import { describe, expect, it } from '@jest/globals';
import { KARPENTER_RELEASES } from '@fleet/contracts';
import { buildOrder, type DesiredRow } from './order.js';

const MIRROR =
  'mirror.example.com/karpenter/controller@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const row = (over: Partial<DesiredRow> = {}): DesiredRow => ({
  clusterId: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
  generation: 3,
  platform: 'AWS',
  topology: 'STANDALONE',
  enabled: true,
  paused: false,
  clusterAutoscalerMode: 'KEEP',
  logLevel: 'info',
  featureGates: { Drift: true },
  nodeClassOverrides: {},
  nodePools: [],
  ...over,
});

describe('buildOrder: the operand release', () => {
  it('follows the fleet default, with its mirror image, when the cluster names none', () => {
    expect(buildOrder(row()).spec.operand).toEqual({
      version: '1.14.1',
      image: KARPENTER_RELEASES['1.14.1'].image,
    });
    expect(buildOrder(row(), { version: '1.13.1', image: MIRROR }).spec.operand).toEqual({
      version: '1.13.1',
      image: MIRROR,
    });
  });

  it("takes the cluster's version with that release's image, not the fleet default's mirror", () => {
    const order = buildOrder(row({ karpenterVersion: '1.13.1' }), {
      version: '1.14.1',
      image: MIRROR,
    });
    expect(order.spec.operand).toEqual({
      version: '1.13.1',
      image: KARPENTER_RELEASES['1.13.1'].image,
    });
    expect(
      buildOrder(row({ karpenterVersion: '1.13.1', operandImage: MIRROR })).spec.operand,
    ).toEqual({ version: '1.13.1', image: MIRROR });
  });

  it('carries the interruption queue when set', () => {
    expect(buildOrder(row({ interruptionQueue: 'ocp-east-spot' })).spec.interruptionQueue).toBe(
      'ocp-east-spot',
    );
    expect(buildOrder(row()).spec).not.toHaveProperty('interruptionQueue');
  });

  it('carries the web-identity role when set', () => {
    const role = 'arn:aws:iam::123456789012:role/prod-east-karpenter';
    expect(buildOrder(row({ webIdentityRoleArn: role })).spec.webIdentityRoleArn).toBe(role);
    expect(buildOrder(row()).spec).not.toHaveProperty('webIdentityRoleArn');
  });

  it('names no Karpenter AWS release on other platforms', () => {
    expect(buildOrder(row({ platform: 'CAPI' })).spec).not.toHaveProperty('operand');
  });

  it('refuses a stored version the fleet ships no CRDs for, naming the field', () => {
    expect(() => buildOrder(row({ karpenterVersion: '0.37.0' }))).toThrow(/version/);
  });
});
