import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { KARPENTER_RELEASES } from '@fleet/contracts';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import { CRDS_DIR } from '../support/fixtures.js';
import { readYamlFile, type KubeObject } from '../support/kube-apiserver/index.js';
import { GENERAL_NODEPOOL, startHarness, type Harness } from './harness.js';

const CRD = ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'] as const;
const RELEASE_1_13 = { version: '1.13.1' as const, image: KARPENTER_RELEASES['1.13.1'].image };
const RELEASE_1_14 = { version: '1.14.1' as const, image: KARPENTER_RELEASES['1.14.1'].image };

/** NodePool consolidation policy `Balanced` is new in Karpenter 1.14. */
const BALANCED_NODEPOOL = {
  name: 'balanced',
  spec: {
    ...GENERAL_NODEPOOL.spec,
    disruption: { consolidationPolicy: 'Balanced', consolidateAfter: '1m' },
  },
};

const BALANCED_DOCUMENTED = String.raw`Valid values: \"WhenEmpty\", \"WhenEmptyOrUnderutilized\", \"Balanced\"`;
const specOf = (o: KubeObject | undefined) => JSON.stringify(o?.spec);
const shippedSpec = (file: string) => specOf(readYamlFile(join(CRDS_DIR, file))[0]);

describe('standalone AWS: the Karpenter release is desired state', () => {
  let h: Harness;
  const deployment = () =>
    h.cluster.kube.get('apps/v1', 'Deployment', OPERAND_NAME, OPERAND_NAMESPACE) as
      | (KubeObject & {
          spec: {
            template: {
              metadata: { annotations: Record<string, string> };
              spec: { containers: { image: string }[] };
            };
          };
        })
      | undefined;
  const nodePoolCrd = () => specOf(h.cluster.kube.get(...CRD, 'nodepools.karpenter.sh'));

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('installs the CRDs and image of the release the order names (1.13.1), pod pinned to restricted-v2', async () => {
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], operand: RELEASE_1_13 }),
    );
    expect(result.conditions).toContainEqual(
      expect.objectContaining({ type: 'Degraded', status: 'False' }),
    );
    // The two releases' NodePool CRDs differ in `Balanced` (1.14), in the enum and in the
    // description that documents it.
    expect(shippedSpec('karpenter-releases/v1.13.1/karpenter.sh_nodepools.yaml')).not.toContain(
      'Balanced',
    );
    expect(shippedSpec('karpenter/karpenter.sh_nodepools.yaml')).toContain('"Balanced"');
    expect(nodePoolCrd()).not.toContain('Balanced');
    const pod = deployment()!.spec.template;
    expect(pod.spec.containers[0]!.image).toBe(RELEASE_1_13.image);
    expect(pod.spec.containers[0]!.image).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(pod.metadata.annotations['openshift.io/required-scc']).toBe('restricted-v2');
  });

  it('refuses what the installed release does not know, and applies nothing', async () => {
    const rv = deployment()?.metadata?.resourceVersion;
    const result = await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL, BALANCED_NODEPOOL],
        operand: RELEASE_1_13,
      }),
    );
    const degraded = result.conditions.find((c) => c.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'InvalidDesiredState' });
    expect(degraded?.message).toMatch(/NodePool balanced.*consolidationPolicy/);
    expect(h.cluster.kube.get('karpenter.sh/v1', 'NodePool', 'balanced')).toBeUndefined();
    expect(deployment()?.metadata?.resourceVersion).toBe(rv);
  });

  it('upgrades to 1.14.1: the new CRDs first, then the image, and what 1.14 allows applies', async () => {
    const result = await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL, BALANCED_NODEPOOL],
        operand: RELEASE_1_14,
      }),
    );
    expect(result.conditions).toContainEqual(
      expect.objectContaining({ type: 'Degraded', status: 'False' }),
    );
    expect(nodePoolCrd()).toContain(BALANCED_DOCUMENTED);
    expect(deployment()!.spec.template.spec.containers[0]!.image).toBe(RELEASE_1_14.image);
    expect(h.cluster.kube.get('karpenter.sh/v1', 'NodePool', 'balanced')).toBeDefined();
  });
});
