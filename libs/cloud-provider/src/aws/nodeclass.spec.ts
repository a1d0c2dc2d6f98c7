import { describe, expect, it } from '@jest/globals';
import { InvalidDesiredStateError } from '../errors.js';
import { CRDS_DIR, fixtureInfrastructure, loadCrdValidator } from '@fleet/testing';
import type { KubeObject } from '../types.js';
import { poolIgnitionPointer } from '../openshift/machine-config.js';
import { enforceEC2NodeClass, renderDefaultEC2NodeClass } from './nodeclass.js';

/** The worker's pointer moved to the NodeClass's own pool. */
const poolPointer = (userData: string, nodeClass: string) =>
  userData.replace('/config/worker', `/config/karpenter-${nodeClass}`);

const ec2NodeClassCrd = loadCrdValidator(
  `${CRDS_DIR}karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml`,
);

const expectValid = (object: unknown) => {
  const result = ec2NodeClassCrd.validate(object);
  expect(result.errors).toEqual([]);
  // The tag and selector rules are the ones that matter here; they must have been evaluated.
  expect(result.skippedRules.filter((r) => /tags|securityGroup|subnet/.test(r))).toEqual([]);
};

describe('default EC2NodeClass', () => {
  const infra = fixtureInfrastructure();

  it('has exactly the fields derived from the fixture cluster', () => {
    expect(renderDefaultEC2NodeClass(infra, {})).toEqual({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: {
        name: 'default',
        labels: { 'fleet.karpenter.sh/managed-by': 'karpenter-fleet' },
      },
      spec: {
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-0c6f2a5e3d1b7a901' }],
        instanceProfile: 'prod-east-7xk2p-worker-profile',
        subnetSelectorTerms: [
          {
            tags: {
              'kubernetes.io/cluster/prod-east-7xk2p': '*',
              'kubernetes.io/role/internal-elb': '1',
            },
          },
        ],
        securityGroupSelectorTerms: [
          { tags: { Name: 'prod-east-7xk2p-node' } },
          { tags: { Name: 'prod-east-7xk2p-lb' } },
        ],
        blockDeviceMappings: [
          {
            deviceName: '/dev/xvda',
            rootVolume: true,
            ebs: {
              deleteOnTermination: true,
              volumeSize: '120Gi',
              volumeType: 'gp3',
              encrypted: true,
            },
          },
        ],
        userData: poolPointer(infra.userData, 'default'),
        tags: { 'cost-center': '4411', team: 'platform' },
      },
    });
  });

  it('validates against the real EC2NodeClass CRD', () => {
    expectValid(renderDefaultEC2NodeClass(infra, {}));
  });

  it('selects security groups by id when the MachineSet names them by id, and sets the KMS key', () => {
    const spec = renderDefaultEC2NodeClass(
      {
        ...infra,
        worker: {
          ...infra.worker,
          securityGroups: [{ id: 'sg-0n0de000000000001' }, { name: 'prod-east-7xk2p-lb' }],
          rootVolume: {
            encrypted: true,
            volumeSize: 200,
            volumeType: 'io1',
            iops: 6000,
            kmsKeyID: 'arn:aws:kms:us-east-1:111122223333:key/abcd',
          },
        },
      },
      {},
    );
    expect(spec.spec.securityGroupSelectorTerms).toEqual([
      { id: 'sg-0n0de000000000001' },
      { tags: { Name: 'prod-east-7xk2p-lb' } },
    ]);
    expect(spec.spec.blockDeviceMappings).toEqual([
      {
        deviceName: '/dev/xvda',
        rootVolume: true,
        ebs: {
          deleteOnTermination: true,
          volumeSize: '200Gi',
          volumeType: 'io1',
          encrypted: true,
          iops: 6000,
          kmsKeyID: 'arn:aws:kms:us-east-1:111122223333:key/abcd',
        },
      },
    ]);
    expectValid(spec);
  });

  it('maps the MachineSet volumes as machine-api-provider-aws launches them: root under the AMI root device, absent fields left to EC2, data volumes by name', () => {
    const spec = renderDefaultEC2NodeClass(
      {
        ...infra,
        rootDeviceName: '/dev/sda1',
        worker: {
          ...infra.worker,
          // No encrypted, no type: the provider sends neither, EC2 decides; so must Karpenter.
          rootVolume: { volumeSize: 150 },
          dataVolumes: [
            { deviceName: '/dev/sdf', volumeSize: 500, volumeType: 'gp3', throughputMiB: 250 },
          ],
        },
      },
      {},
    );
    expect(spec.spec.blockDeviceMappings).toEqual([
      {
        deviceName: '/dev/sda1',
        rootVolume: true,
        ebs: { deleteOnTermination: true, volumeSize: '150Gi' },
      },
      {
        deviceName: '/dev/sdf',
        ebs: { deleteOnTermination: true, volumeSize: '500Gi', volumeType: 'gp3', throughput: 250 },
      },
    ]);
    expectValid(spec);
  });

  it('uses the installer default root volume (120Gi gp3 encrypted) when the MachineSet describes none', () => {
    const { rootVolume: _none, ...worker } = infra.worker;
    const spec = renderDefaultEC2NodeClass({ ...infra, worker }, {});
    expect(spec.spec.blockDeviceMappings).toEqual([
      {
        deviceName: '/dev/xvda',
        rootVolume: true,
        ebs: { deleteOnTermination: true, volumeSize: '120Gi', volumeType: 'gp3', encrypted: true },
      },
    ]);
  });

  it('drops restricted keys from the cluster resource tags', () => {
    const spec = renderDefaultEC2NodeClass(
      {
        ...infra,
        resourceTags: {
          ...infra.resourceTags,
          'kubernetes.io/cluster/prod-east-7xk2p': 'owned',
          'karpenter.sh/nodepool': 'x',
        },
      },
      {},
    );
    expect(spec.spec.tags).toEqual({ 'cost-center': '4411', team: 'platform' });
    expectValid(spec);
  });

  it('merges override tags over cluster tags and replaces the other overridable fields', () => {
    const blockDeviceMappings = [
      { deviceName: '/dev/xvda', ebs: { volumeSize: '300Gi', volumeType: 'gp3', encrypted: true } },
    ];
    const metadataOptions = { httpTokens: 'required', httpPutResponseHopLimit: 2 };
    const kubelet = { maxPods: 110 };
    const nodeClass = renderDefaultEC2NodeClass(infra, {
      tags: { team: 'sre', env: 'prod' },
      blockDeviceMappings,
      metadataOptions,
      kubelet,
    });
    expect(nodeClass.spec.tags).toEqual({ 'cost-center': '4411', env: 'prod', team: 'sre' });
    expect(Object.keys(nodeClass.spec.tags as object)).toEqual(['cost-center', 'env', 'team']);
    expect(nodeClass.spec.blockDeviceMappings).toEqual(blockDeviceMappings);
    expect(nodeClass.spec.metadataOptions).toEqual(metadataOptions);
    expect(nodeClass.spec.kubelet).toEqual(kubelet);
    expectValid(nodeClass);
  });

  it('rejects restricted override tags with an error naming each field', () => {
    const render = () =>
      renderDefaultEC2NodeClass(infra, {
        tags: {
          ok: 'yes',
          'kubernetes.io/cluster/other': 'owned',
          'karpenter.sh/nodepool': 'x',
          'karpenter.k8s.aws/ec2nodeclass': 'y',
        },
      });
    expect(render).toThrow(InvalidDesiredStateError);
    try {
      render();
    } catch (error) {
      expect((error as InvalidDesiredStateError).causes.map((c) => c.field)).toEqual([
        'nodeClassOverrides.tags["karpenter.k8s.aws/ec2nodeclass"]',
        'nodeClassOverrides.tags["karpenter.sh/nodepool"]',
        'nodeClassOverrides.tags["kubernetes.io/cluster/other"]',
      ]);
      expect((error as Error).message).toContain(
        'nodeClassOverrides.tags["kubernetes.io/cluster/other"]: tag key "kubernetes.io/cluster/other" is restricted',
      );
    }
  });

  it('rejects an empty blockDeviceMappings override', () => {
    expect(() => renderDefaultEC2NodeClass(infra, { blockDeviceMappings: [] })).toThrow(
      'nodeClassOverrides.blockDeviceMappings: must not be empty',
    );
  });

  it('renders byte-identical output whatever the key order of its input', () => {
    const reversed = (record: Record<string, string>) =>
      Object.fromEntries(Object.entries(record).reverse());
    const a = renderDefaultEC2NodeClass(infra, { tags: { b: '2', a: '1' } });
    const b = renderDefaultEC2NodeClass(
      { ...infra, resourceTags: reversed(infra.resourceTags) },
      { tags: { a: '1', b: '2' } },
    );
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(renderDefaultEC2NodeClass(infra, {}))).toBe(
      JSON.stringify(renderDefaultEC2NodeClass(fixtureInfrastructure(), {})),
    );
  });
});

describe('EC2NodeClass enforcement', () => {
  const infra = fixtureInfrastructure();
  const userNodeClass = (spec: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'gpu', resourceVersion: '42', uid: 'u-1' } as KubeObject['metadata'],
    spec: {
      role: 'my-role',
      subnetSelectorTerms: [{ id: 'subnet-0aa11111111111111' }],
      securityGroupSelectorTerms: [{ id: 'sg-0n0de000000000001' }],
      blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '500Gi' } }],
      ...spec,
    },
  });

  it('patches only amiFamily, amiSelectorTerms and userData of any NodeClass', () => {
    const { patch, drifted } = enforceEC2NodeClass(
      userNodeClass({ amiFamily: 'AL2023', amiSelectorTerms: [{ alias: 'al2023@latest' }] }),
      infra,
    );
    expect(patch).toEqual({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'gpu' },
      spec: {
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-0c6f2a5e3d1b7a901' }],
        userData: poolPointer(infra.userData, 'gpu'),
      },
    });
    expect(drifted).toEqual(['spec.amiFamily', 'spec.amiSelectorTerms', 'spec.userData']);
  });

  it('reports no drift on a consistent NodeClass, whatever its key order', () => {
    const { drifted } = enforceEC2NodeClass(
      userNodeClass({
        userData: poolPointer(infra.userData, 'gpu'),
        amiSelectorTerms: [{ id: 'ami-0c6f2a5e3d1b7a901' }],
        amiFamily: 'Custom',
      }),
      infra,
    );
    expect(drifted).toEqual([]);
    expect(enforceEC2NodeClass(renderDefaultEC2NodeClass(infra, {}), infra).drifted).toEqual([]);
    // The pointer is derived, not pattern-replaced: only the path moves.
    expect(poolIgnitionPointer(infra.userData, 'gpu')).toBe(poolPointer(infra.userData, 'gpu'));
  });

  it('puts spec.kubelet back to the desired kubelet settings, taking away what a user added', () => {
    const desired = { nodeClassOverrides: { kubelet: { maxPods: 50 } } };
    const consistent = {
      amiFamily: 'Custom',
      amiSelectorTerms: [{ id: 'ami-0c6f2a5e3d1b7a901' }],
      userData: poolPointer(infra.userData, 'gpu'),
    };
    const edited = enforceEC2NodeClass(
      userNodeClass({ ...consistent, kubelet: { maxPods: 200, podsPerCore: 4 } }),
      infra,
      desired,
    );
    expect(edited.drifted).toEqual(['spec.kubelet']);
    expect(edited.mergePatch).toEqual({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'gpu' },
      spec: { kubelet: { maxPods: 50, podsPerCore: null } },
    });
    // No kubelet settings desired: a hand-set spec.kubelet is removed.
    const removed = enforceEC2NodeClass(
      userNodeClass({ ...consistent, kubelet: { maxPods: 200 } }),
      infra,
      { nodeClassOverrides: {} },
    );
    expect(removed.mergePatch?.spec).toEqual({ kubelet: null });
    const kept = enforceEC2NodeClass(
      userNodeClass({ ...consistent, kubelet: { maxPods: 50 } }),
      infra,
      desired,
    );
    expect([kept.drifted, kept.mergePatch]).toEqual([[], undefined]);
  });

  it('gives a NodeClass without blockDeviceMappings the default root volume, as upstream applyDefaults does, and leaves a set one alone', () => {
    const bare = userNodeClass({ blockDeviceMappings: undefined });
    delete (bare.spec as Record<string, unknown>).blockDeviceMappings;
    const { patch, drifted } = enforceEC2NodeClass(bare, infra);
    const defaultRoot = (
      renderDefaultEC2NodeClass(infra, {}).spec.blockDeviceMappings as unknown[]
    )[0];
    expect((patch.spec as Record<string, unknown>).blockDeviceMappings).toEqual([defaultRoot]);
    expect(drifted).toContain('spec.blockDeviceMappings');
    expectValid({ ...bare, spec: { ...(bare.spec as object), ...(patch.spec as object) } });

    const own = enforceEC2NodeClass(userNodeClass(), infra);
    expect(own.patch.spec).not.toHaveProperty('blockDeviceMappings');
    expect(own.drifted).not.toContain('spec.blockDeviceMappings');
    // Still holding the default it was given: kept in the patch, so no apply drops it.
    const given = enforceEC2NodeClass(userNodeClass({ blockDeviceMappings: [defaultRoot] }), infra);
    expect((given.patch.spec as Record<string, unknown>).blockDeviceMappings).toEqual([
      defaultRoot,
    ]);
    expect(given.drifted).not.toContain('spec.blockDeviceMappings');
  });

  it('applied over the live object yields a NodeClass the CRD accepts', () => {
    const live = userNodeClass({ amiSelectorTerms: [{ alias: 'al2023@latest' }] });
    const { patch } = enforceEC2NodeClass(live, infra);
    expectValid({
      ...live,
      metadata: { name: 'gpu' },
      spec: { ...(live.spec as object), ...(patch.spec as object) },
    });
  });
});
