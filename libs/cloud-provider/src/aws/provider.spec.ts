import { describe, expect, it } from '@jest/globals';
import { FIELD_MANAGER } from '@fleet/contracts';
import { loadCustomResourceDefinitions } from '../crds.js';
import { InvalidDesiredStateError } from '../errors.js';
import { NODECLASS_ENFORCER_FIELD_MANAGER, OWNED_BY_SELECTOR } from '../labels.js';
import { renderDesiredObjects } from '../render.js';
import { poolIgnitionPointer } from '../openshift/machine-config.js';
import { CRDS_DIR, desiredState, fixtureInfrastructure, loadCrdValidator } from '@fleet/testing';
import { AwsStandaloneCloudProvider } from './provider.js';

const provider = new AwsStandaloneCloudProvider();
const infra = fixtureInfrastructure();
const nodePools = [
  {
    name: 'general',
    spec: {
      template: {
        spec: { requirements: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] },
      },
    },
  },
];

describe('AwsStandaloneCloudProvider', () => {
  it('identifies itself and its NodeClass kind', () => {
    expect(provider.name).toBe('aws');
    expect(provider.topology).toBe('STANDALONE');
    expect(provider.nodeClass).toEqual({
      apiVersion: 'karpenter.k8s.aws/v1',
      group: 'karpenter.k8s.aws',
      version: 'v1',
      kind: 'EC2NodeClass',
      plural: 'ec2nodeclasses',
      namespaced: false,
    });
    expect(OWNED_BY_SELECTOR).toBe('fleet.karpenter.sh/managed-by=karpenter-fleet');
    expect(NODECLASS_ENFORCER_FIELD_MANAGER).not.toBe(FIELD_MANAGER);
  });

  it('loads the CRDs its operand needs from the upstream directory and its own', async () => {
    const crds = await loadCustomResourceDefinitions(
      provider.customResourceDefinitions(),
      CRDS_DIR,
    );
    expect(crds.map((c) => `${c.target}:${c.object.metadata.name}`)).toEqual([
      'workload:nodepools.karpenter.sh',
      'workload:nodeclaims.karpenter.sh',
      'workload:ec2nodeclasses.karpenter.k8s.aws',
      'workload:nodeoverlays.karpenter.sh',
      'workload:capacitybuffers.autoscaling.x-k8s.io',
      'workload:karpenters.autoscaling.openshift.io',
    ]);
  });

  it('fails clearly when a CRD file is not the CRD it should be', async () => {
    const [nodePoolSource] = provider.customResourceDefinitions();
    await expect(
      loadCustomResourceDefinitions(
        [{ ...nodePoolSource!, path: 'karpenter/karpenter.sh_nodeclaims.yaml' }],
        CRDS_DIR,
      ),
    ).rejects.toThrow('not the CustomResourceDefinition nodepools.karpenter.sh');
  });

  it("renders operand, the default NodeClass's pool, default NodeClass and NodePools in apply order", () => {
    const objects = renderDesiredObjects(
      provider,
      infra,
      desiredState({ nodePools, nodeClassOverrides: { kubelet: { maxPods: 50 } } }),
    );
    expect(objects.map((o) => o.object.kind).slice(-6)).toEqual([
      'PodDisruptionBudget',
      'Secret',
      'MachineConfigPool',
      'KubeletConfig',
      'EC2NodeClass',
      'NodePool',
    ]);
    expect(objects.every((o) => o.target === 'workload')).toBe(true);
  });

  it('owns (and so can prune) every kind it renders, each carrying the ownership label', () => {
    const owned = [...provider.ownedKinds(), ...provider.nodeClassConfigKinds()];
    for (const { object } of renderDesiredObjects(provider, infra, desiredState({ nodePools }))) {
      const [group, version] = object.apiVersion.includes('/')
        ? object.apiVersion.split('/')
        : ['', object.apiVersion];
      const kind = owned.find(
        (k) => k.group === group && k.version === version && k.kind === object.kind,
      );
      expect([object.kind, kind !== undefined]).toEqual([object.kind, true]);
      if (kind?.namespaced) expect(kind.namespaces).toContain(object.metadata.namespace);
      expect(object.metadata.labels?.['fleet.karpenter.sh/managed-by']).toBe('karpenter-fleet');
    }
  });

  it('renders nothing for a disabled cluster, so pruning removes what it owns', () => {
    expect(
      renderDesiredObjects(provider, infra, desiredState({ enabled: false, nodePools })),
    ).toEqual([]);
  });

  it('renders nothing of an order with invalid overrides', () => {
    expect(() =>
      renderDesiredObjects(
        provider,
        infra,
        desiredState({ nodeClassOverrides: { tags: { 'karpenter.sh/nodeclaim': 'x' } } }),
      ),
    ).toThrow(InvalidDesiredStateError);
  });

  it('renders objects the real CRDs accept', () => {
    const validators = new Map(
      [
        'karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml',
        'karpenter/karpenter.sh_nodepools.yaml',
      ].map((file) => {
        const v = loadCrdValidator(`${CRDS_DIR}${file}`);
        return [v.kind, v] as const;
      }),
    );
    for (const { object } of renderDesiredObjects(provider, infra, desiredState({ nodePools }))) {
      const validator = validators.get(object.kind);
      if (validator) expect(validator.validate(object).errors).toEqual([]);
    }
  });

  it('is deterministic: the same order renders byte-identical objects', () => {
    const render = () =>
      JSON.stringify(
        renderDesiredObjects(provider, fixtureInfrastructure(), desiredState({ nodePools })),
      );
    expect(render()).toBe(render());
  });

  it('enforces the cluster-derived fields of any NodeClass', () => {
    const { drifted } = provider.enforceNodeClass(
      {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: 'custom' },
        spec: {
          amiFamily: 'Custom',
          amiSelectorTerms: [{ id: 'ami-0old' }],
          userData: poolIgnitionPointer(infra.userData, 'custom'),
        },
      },
      infra,
      desiredState(),
    );
    // Without blockDeviceMappings it also gets the default root volume (upstream applyDefaults).
    expect(drifted).toEqual(['spec.amiSelectorTerms', 'spec.blockDeviceMappings']);
  });
});
