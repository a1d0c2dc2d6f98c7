import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  NODECLASS_ENFORCER_FIELD_MANAGER,
  OPERAND_NAME,
  OPERAND_NAMESPACE,
} from '@fleet/cloud-provider';
import { clone, loadCrdSchema } from '@fleet/crd-schema';
import { join } from 'node:path';
import { CRDS_DIR } from '../support/fixtures.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

const CO = ['config.openshift.io/v1', 'ClusterOperator', 'karpenter'] as const;
const NODECLASS = 'karpenter.k8s.aws/v1';
const nodeClassSchema = loadCrdSchema(
  join(CRDS_DIR, 'karpenter', 'karpenter.k8s.aws_ec2nodeclasses.yaml'),
  'v1',
);

interface Cond {
  type: string;
  status: string;
  reason: string;
}
const conditionsOf = (o: Record<string, unknown> | undefined) =>
  (o?.status as { conditions?: Cond[] } | undefined)?.conditions ?? [];
/** The table row: Degraded or Progressing when True, else Available (True in every row). */
const headline = (o: Record<string, unknown> | undefined) => {
  const trueOf = (type: string) =>
    conditionsOf(o).find((c) => c.type === type && c.status === 'True');
  return trueOf('Degraded') ?? trueOf('Progressing') ?? trueOf('Available');
};
/** Available never goes False: a rollout or a restart of the operand is not an outage. */
const availableOf = (o: Record<string, unknown> | undefined) =>
  conditionsOf(o).find((c) => c.type === 'Available')?.status;

describe('standalone AWS: ClusterOperator and NodeClasses, watch-driven', () => {
  let h: Harness;
  const reasons: string[] = [];
  const availability = new Set<string>();
  let stopWatch: () => void;

  beforeAll(async () => {
    h = await startHarness();
    // Every ClusterOperator write, as an admin's `oc get co -w` would see it.
    stopWatch = h.cluster.kube.watch(CO[0], CO[1], (type, o) => {
      const reason = headline(o)?.reason;
      if (type !== 'DELETED' && reason && reasons.at(-1) !== reason) reasons.push(reason);
      const available = availableOf(o);
      if (type !== 'DELETED' && available) availability.add(available);
    });
  });
  afterAll(async () => {
    stopWatch?.();
    await h?.stop();
  });

  it('writes ClusterOperator karpenter before anything is enabled: Available, KarpenterNotFound', async () => {
    await until(() => h.cluster.kube.get(...CO), 'ClusterOperator karpenter');
    await until(
      () =>
        headline(h.cluster.kube.get(...CO))?.reason === 'KarpenterNotFound' ? true : undefined,
      'KarpenterNotFound',
    );
    expect(headline(h.cluster.kube.get(...CO))).toMatchObject({
      type: 'Available',
      status: 'True',
    });
    const status = h.cluster.kube.get(...CO)?.status as {
      versions: unknown[];
      relatedObjects: { resource: string }[];
    };
    expect(status.versions).toEqual([{ name: 'operator', version: '0.1.0-test' }]);
    expect(status.relatedObjects.map((r) => r.resource)).toEqual(
      expect.arrayContaining([
        'namespaces',
        'deployments',
        'nodepools',
        'nodeclaims',
        'ec2nodeclasses',
      ]),
    );
    // /status was written by server-side apply under the fleet's field manager.
    type Managed = {
      managedFields?: { manager: string; operation: string; subresource?: string }[];
    };
    await until(
      () =>
        ((h.cluster.kube.get(...CO)?.metadata as Managed).managedFields ?? []).some(
          (m) =>
            m.manager === 'karpenter-fleet' &&
            m.operation === 'Apply' &&
            m.subresource === 'status',
        )
          ? true
          : undefined,
      'an Apply of /status by karpenter-fleet',
    );
  });

  it('enabling Karpenter creates the default EC2NodeClass with the cluster-derived fields, valid against the CRD', async () => {
    const result = await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(result.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'True', reason: 'AsExpected' }),
        // Which worker MachineSet the NodeClass is copied from, and why the others were not.
        expect.objectContaining({
          type: 'WorkerMachineSetSelected',
          status: 'True',
          message:
            'the default EC2NodeClass is copied from MachineSet openshift-machine-api/prod-east-7xk2p-worker-us-east-1a; passed over: prod-east-7xk2p-infra-us-east-1a (role infra)',
        }),
      ]),
    );
    const nodeClass = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'default')!;
    expect(nodeClass.spec).toMatchObject({
      amiFamily: 'Custom',
      amiSelectorTerms: [{ id: expect.stringMatching(/^ami-/) as unknown }],
      instanceProfile: expect.any(String) as unknown,
      subnetSelectorTerms: [
        {
          tags: {
            'kubernetes.io/cluster/prod-east-7xk2p': '*',
            'kubernetes.io/role/internal-elb': '1',
          },
        },
      ],
      blockDeviceMappings: [expect.objectContaining({ rootVolume: true })],
      userData: expect.stringContaining('ignition') as unknown,
    });
    const spec = nodeClass.spec as {
      securityGroupSelectorTerms: unknown[];
      tags?: Record<string, string>;
    };
    expect(spec.securityGroupSelectorTerms.length).toBeGreaterThan(0);
    expect(
      Object.keys(spec.tags ?? {}).filter((k) => k.startsWith('kubernetes.io/cluster')),
    ).toEqual([]);
    expect(nodeClassSchema.validate(clone(nodeClass))).toEqual([]);
  });

  it('goes OperandNotReady → AsExpected as the Deployment becomes available, without another order', async () => {
    await until(
      () => (headline(h.cluster.kube.get(...CO))?.reason === 'OperandNotReady' ? true : undefined),
      'OperandNotReady',
    );
    expect(headline(h.cluster.kube.get(...CO))?.type).toBe('Progressing');
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    await until(
      () => (headline(h.cluster.kube.get(...CO))?.reason === 'AsExpected' ? true : undefined),
      'AsExpected',
    );
    expect(headline(h.cluster.kube.get(...CO))?.type).toBe('Available');
    const snapshot = await h.runtime.snapshot();
    expect(snapshot?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'OperandReady', status: 'True', reason: 'AsExpected' }),
      ]),
    );
  });

  it('goes OperandNotYetCreated when the Deployment is deleted, and back through OperandNotReady to AsExpected', async () => {
    h.cluster.kube.delete('apps/v1', 'Deployment', OPERAND_NAME, OPERAND_NAMESPACE);
    await until(
      () =>
        headline(h.cluster.kube.get(...CO))?.reason === 'OperandNotYetCreated' ? true : undefined,
      'OperandNotYetCreated',
    );
    expect((await h.runtime.snapshot())?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'OperandReady',
          status: 'False',
          reason: 'OperandNotYetCreated',
        }),
      ]),
    );
    await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    await until(
      () => (headline(h.cluster.kube.get(...CO))?.reason === 'OperandNotReady' ? true : undefined),
      'OperandNotReady',
    );
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    await until(
      () => (headline(h.cluster.kube.get(...CO))?.reason === 'AsExpected' ? true : undefined),
      'AsExpected',
    );
    expect(reasons).toEqual([
      'KarpenterNotFound',
      ...(reasons.includes('OperandNotYetCreated') && reasons.indexOf('OperandNotYetCreated') === 1
        ? ['OperandNotYetCreated']
        : []),
      'OperandNotReady',
      'AsExpected',
      'OperandNotYetCreated',
      'OperandNotReady',
      'AsExpected',
    ]);
    // Through every row above (not yet created, not ready, deleted), Available stayed True.
    expect([...availability]).toEqual(['True']);
  });

  it('recreates the default EC2NodeClass when it is deleted', async () => {
    const before = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'default')!;
    h.cluster.kube.delete(NODECLASS, 'EC2NodeClass', 'default');
    const after = await until(() => {
      const o = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'default');
      return o && o.metadata?.uid !== before.metadata?.uid ? o : undefined;
    }, 'the default EC2NodeClass to come back');
    expect(after.spec).toEqual(before.spec);
  });

  it('puts amiFamily, amiSelectorTerms and userData back on any EC2NodeClass, leaving the rest alone', async () => {
    const reference = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'default')!.spec as Record<
      string,
      unknown
    >;
    // Each NodeClass boots from its own MachineConfigPool: the default's pointer, moved.
    const gpuUserData = String(reference.userData).replace(
      '/config/karpenter-default',
      '/config/karpenter-gpu',
    );
    h.cluster.kube.create(
      {
        apiVersion: NODECLASS,
        kind: 'EC2NodeClass',
        metadata: { name: 'gpu' },
        spec: {
          amiFamily: 'AL2023',
          amiSelectorTerms: [{ alias: 'al2023@latest' }],
          role: 'KarpenterNodeRole',
          subnetSelectorTerms: [{ id: 'subnet-0123456789abcdef0' }],
          securityGroupSelectorTerms: [{ id: 'sg-0123456789abcdef0' }],
          userData: 'not ignition',
        },
      },
      { fieldManager: 'kubectl' },
    );
    const fixed = await until(() => {
      const o = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'gpu');
      return (o?.spec as { amiFamily?: string } | undefined)?.amiFamily === 'Custom'
        ? o
        : undefined;
    }, 'the user NodeClass to be corrected');
    expect(fixed.spec).toMatchObject({
      amiFamily: 'Custom',
      amiSelectorTerms: reference.amiSelectorTerms,
      userData: gpuUserData,
      role: 'KarpenterNodeRole',
      subnetSelectorTerms: [{ id: 'subnet-0123456789abcdef0' }],
    });
    const managers = (
      (fixed.metadata as { managedFields?: { manager: string }[] }).managedFields ?? []
    ).map((m) => m.manager);
    expect(managers).toEqual(expect.arrayContaining([NODECLASS_ENFORCER_FIELD_MANAGER, 'kubectl']));
    expect(nodeClassSchema.validate(clone(fixed))).toEqual([]);
    // Created without blockDeviceMappings: it gets the default NodeClass's root volume.
    const defaultRoot = (reference.blockDeviceMappings as { rootVolume?: boolean }[]).filter(
      (m) => m.rootVolume,
    );
    await until(
      () =>
        JSON.stringify(
          (h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'gpu')?.spec as Record<string, unknown>)
            .blockDeviceMappings,
        ) === JSON.stringify(defaultRoot)
          ? true
          : undefined,
      'the default root volume on the user NodeClass',
    );

    // A later edit of an enforced field is refused at admission (the fleet's
    // ValidatingAdmissionPolicy); an edit of another field is kept.
    expect(() =>
      h.cluster.kube.patch(NODECLASS, 'EC2NodeClass', 'gpu', undefined, {
        spec: { userData: 'tampered', tags: { team: 'ml' } },
      }),
    ).toThrow(
      /karpenter-fleet-ec2nodeclass-enforced-fields.*spec.userData is set by the Karpenter fleet/,
    );
    h.cluster.kube.patch(NODECLASS, 'EC2NodeClass', 'gpu', undefined, {
      spec: { tags: { team: 'ml' } },
    });
    const again = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'gpu')!;
    expect((again.spec as { userData?: string }).userData).toBe(gpuUserData);
    expect((again.spec as { tags?: unknown }).tags).toEqual({ team: 'ml' });
    // The tags edit did not drop the root volume it was given.
    expect((again.spec as { blockDeviceMappings?: unknown }).blockDeviceMappings).toEqual(
      defaultRoot,
    );
  });

  it('refuses an invalid NodeClass override with a Degraded reason and applies nothing', async () => {
    const rv = (k: string, n: string, ns?: string) =>
      h.cluster.kube.get(
        k === 'NodePool' ? 'karpenter.sh/v1' : k === 'Deployment' ? 'apps/v1' : NODECLASS,
        k,
        n,
        ns,
      )?.metadata?.resourceVersion;
    const before = [
      rv('EC2NodeClass', 'default'),
      rv('NodePool', 'general'),
      rv('Deployment', OPERAND_NAME, OPERAND_NAMESPACE),
    ];
    const bad = await h.runtime.apply(
      h.order({
        enabled: true,
        logLevel: 'debug', // would change the Deployment, were anything applied
        nodePools: [GENERAL_NODEPOOL],
        nodeClassOverrides: { metadataOptions: { httpTokens: 'sometimes' } },
      }),
    );
    expect(bad.applied).toBe(0);
    expect(bad.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'Degraded',
          status: 'True',
          reason: 'InvalidNodeClassOverrides',
          message: expect.stringContaining('spec.metadataOptions.httpTokens') as unknown,
        }),
      ]),
    );
    const restricted = await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        nodeClassOverrides: { tags: { 'kubernetes.io/cluster/x': 'owned' } },
      }),
    );
    expect(restricted.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Degraded', reason: 'InvalidNodeClassOverrides' }),
      ]),
    );
    const unknownField = await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        nodeClassOverrides: { kubelet: { maxPodz: 20 } },
      }),
    );
    expect(unknownField.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'Degraded',
          reason: 'InvalidNodeClassOverrides',
          message: expect.stringContaining('maxPodz') as unknown,
        }),
      ]),
    );
    await h.runtime.idle();
    expect([
      rv('EC2NodeClass', 'default'),
      rv('NodePool', 'general'),
      rv('Deployment', OPERAND_NAME, OPERAND_NAMESPACE),
    ]).toEqual(before);

    const good = await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        nodeClassOverrides: {
          metadataOptions: { httpTokens: 'required' },
          tags: { team: 'platform' },
        },
      }),
    );
    expect(good.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Degraded', status: 'False' })]),
    );
    const nodeClass = h.cluster.kube.get(NODECLASS, 'EC2NodeClass', 'default')!;
    expect(nodeClass.spec).toMatchObject({
      metadataOptions: { httpTokens: 'required' },
      tags: { team: 'platform' },
    });
    expect(nodeClassSchema.validate(clone(nodeClass))).toEqual([]);
  });
});
