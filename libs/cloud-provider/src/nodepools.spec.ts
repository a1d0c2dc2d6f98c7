import { describe, expect, it } from '@jest/globals';
import { AwsStandaloneCloudProvider } from './aws/provider.js';
import { findDriver } from './registry.js';
import { InvalidDesiredStateError } from './errors.js';
import { CRDS_DIR, desiredState, loadCrdValidator } from '@fleet/testing';

const provider = new AwsStandaloneCloudProvider();
const crd = loadCrdValidator(`${CRDS_DIR}karpenter/karpenter.sh_nodepools.yaml`);

const general = {
  name: 'general',
  spec: {
    template: {
      metadata: { labels: { team: 'platform' } },
      spec: {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        ],
        expireAfter: '720h',
      },
    },
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m' },
    limits: { cpu: '1000' },
    weight: 10,
  },
};

describe('NodePools', () => {
  it('points a NodePool without nodeClassRef at the default EC2NodeClass', () => {
    const [pool] = provider.renderNodePools(desiredState({ nodePools: [general] }));
    expect(pool?.target).toBe('workload');
    expect(pool?.object).toEqual({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: {
        name: 'general',
        labels: { 'fleet.karpenter.sh/managed-by': 'karpenter-fleet' },
      },
      spec: {
        ...general.spec,
        template: {
          ...general.spec.template,
          spec: {
            ...general.spec.template.spec,
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          },
        },
      },
    });
    expect(crd.validate(pool?.object).errors).toEqual([]);
  });

  it('keeps an explicit nodeClassRef', () => {
    const ref = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'gpu' };
    const gpu = {
      name: 'gpu',
      spec: { template: { spec: { ...general.spec.template.spec, nodeClassRef: ref } } },
    };
    const [pool] = provider.renderNodePools(desiredState({ nodePools: [gpu] }));
    expect((pool?.object.spec as { template: { spec: unknown } }).template.spec).toMatchObject({
      nodeClassRef: ref,
    });
    expect(crd.validate(pool?.object).errors).toEqual([]);
  });

  it('refuses a nodeClassRef of a kind Karpenter would ignore, on every platform', () => {
    const pool = (ref: Record<string, string>) => ({
      name: 'other',
      spec: { template: { spec: { ...general.spec.template.spec, nodeClassRef: ref } } },
    });
    const wrong = {
      group: 'karpenter.hypershift.openshift.io',
      kind: 'OpenshiftEC2NodeClass',
      name: 'x',
    };
    expect(() => provider.renderNodePools(desiredState({ nodePools: [pool(wrong)] }))).toThrow(
      new InvalidDesiredStateError([
        {
          field: 'nodePools[0].spec.template.spec.nodeClassRef',
          message:
            'must reference group karpenter.k8s.aws, kind EC2NodeClass (not karpenter.hypershift.openshift.io/OpenshiftEC2NodeClass): Karpenter manages only NodePools of the NodeClass kind its provider serves and would ignore this one',
        },
      ]),
    );
    // Hosted: the EC2NodeClass HyperShift derives, never the OpenshiftEC2NodeClass itself.
    const hosted = findDriver('AWS', 'HOSTED')!.rules;
    expect(hosted.nodeClassRefProblem(wrong)).toMatch(
      /EC2NodeClass HyperShift derives from the OpenshiftEC2NodeClass of the same name$/,
    );
    expect(
      hosted.nodeClassRefProblem({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'x' }),
    ).toBeUndefined();
    expect(hosted.nodeClassRefProblem(undefined)).toBeUndefined();
    expect(findDriver('CAPI', 'STANDALONE')!.rules.nodeClassRefProblem(wrong)).toMatch(
      /^must reference group karpenter\.cluster\.x-k8s\.io, kind ClusterAPINodeClass/,
    );
    expect(findDriver('AZURE', 'STANDALONE')!.rules.nodeClassRefProblem(wrong)).toMatch(
      /^must reference group karpenter\.azure\.com, kind AKSNodeClass/,
    );
  });

  it('rejects duplicate names naming the field', () => {
    expect(() =>
      provider.renderNodePools(desiredState({ nodePools: [general, { ...general }] })),
    ).toThrow(
      new InvalidDesiredStateError([
        {
          field: 'nodePools[1].name',
          message: 'duplicate NodePool name "general" (also nodePools[0])',
        },
      ]),
    );
  });

  it('renders the same bytes whatever the key order of the stored spec', () => {
    const shuffled = {
      name: 'general',
      spec: {
        weight: 10,
        limits: { cpu: '1000' },
        disruption: { consolidateAfter: '1m', consolidationPolicy: 'WhenEmptyOrUnderutilized' },
        template: {
          spec: { expireAfter: '720h', requirements: general.spec.template.spec.requirements },
          metadata: general.spec.template.metadata,
        },
      },
    };
    expect(JSON.stringify(provider.renderNodePools(desiredState({ nodePools: [shuffled] })))).toBe(
      JSON.stringify(provider.renderNodePools(desiredState({ nodePools: [general] }))),
    );
  });
});
