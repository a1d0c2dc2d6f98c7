import { describe, expect, it } from '@jest/globals';
import { KARPENTER_CRD_DIRECTORY } from '@fleet/crd-schema';
import { KarpenterSpecValidator } from './karpenter-spec.validator.js';

/** NodeClass overrides are judged by the NodeClass CRD of the cluster's platform and topology. */
describe('KarpenterSpecValidator: NodeClass overrides by platform', () => {
  const validator = KarpenterSpecValidator.fromDirectory(KARPENTER_CRD_DIRECTORY);

  it("checks an AZURE cluster's overrides against the OpenShift fork's AKSNodeClass CRD", () => {
    expect(
      validator.validateNodeClassOverrides('AZURE', {
        tags: { env: 'prod' },
        kubelet: { cpuCFSQuota: true },
      }),
    ).toEqual([]);
    // The CRD's CEL rule on tag keys, and a kubelet field AKSNodeClass does not have.
    expect(validator.validateNodeClassOverrides('AZURE', { tags: { 'a<b': 'x' } })).toEqual([
      expect.objectContaining({ field: 'tags' }),
    ]);
    expect(validator.validateNodeClassOverrides('AZURE', { kubelet: { maxPods: 10 } })).toEqual([
      { field: 'kubelet.maxPods', reason: expect.stringContaining('unknown field') },
    ]);
    // What only an EC2NodeClass has is unknown to the AKSNodeClass.
    expect(
      validator.validateNodeClassOverrides('AZURE', {
        metadataOptions: { httpTokens: 'required' },
      }),
    ).toEqual([{ field: 'metadataOptions', reason: expect.stringContaining('unknown field') }]);
    // The provider's own rule: Karpenter's own tag keys.
    expect(
      validator.validateNodeClassOverrides('AZURE', {
        tags: { 'karpenter.azure.com_cluster': 'x' },
      }),
    ).toEqual([
      {
        field: 'tags["karpenter.azure.com_cluster"]',
        reason: expect.stringContaining('karpenter-provider-azure sets it'),
      },
    ]);
  });

  it("refuses, naming the field, a kubelet setting the NodeClass has but the MCO refuses in a pool's KubeletConfig", () => {
    expect(
      validator.validateNodeClassOverrides('AZURE', { kubelet: { failSwapOn: false } }),
    ).toEqual([
      { field: 'kubelet.failSwapOn', reason: expect.stringContaining('Machine Config Operator') },
    ]);
    expect(
      validator.validateNodeClassOverrides('AWS', { kubelet: { clusterDNS: ['10.0.0.10'] } }),
    ).toEqual([
      { field: 'kubelet.clusterDNS', reason: expect.stringContaining('Machine Config Operator') },
    ]);
  });

  it('still checks an AWS cluster against the EC2NodeClass CRD', () => {
    expect(
      validator.validateNodeClassOverrides('AWS', { metadataOptions: { httpTokens: 'required' } }),
    ).toEqual([]);
    expect(
      validator.validateNodeClassOverrides('AWS', { tags: { 'karpenter.azure.com_cluster': 'x' } }),
    ).toEqual([]);
  });
});
