import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';

import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import {
  SIDECAR_USER,
  startRealOpenShiftAwsCluster,
  type RealOpenShiftAwsCluster,
} from '../support/control-plane/openshift-cluster.js';
import {
  conditionOf,
  deploymentAvailable,
  refusedRequests,
} from '../support/control-plane/scenario.js';
import { eventually } from '../support/processes.js';
import { GENERAL_NODEPOOL, startSidecarRuntime, type Harness } from '../standalone-aws/harness.js';

// The standalone AWS headline scenario (test/standalone-aws/cluster-autoscaler-and-disable) on a
// real kube-apiserver, kube-controller-manager and kube-scheduler: Karpenter enabled with the
// Cluster Autoscaler disabled. The sidecar acts as its service account with exactly
// deploy/sidecar/standalone's RBAC; the API server's audit log must show no request refused.

const CA = ['autoscaling.openshift.io/v1', 'ClusterAutoscaler'] as const;
const MA = ['autoscaling.openshift.io/v1beta1', 'MachineAutoscaler'] as const;
const NODECLASS = 'karpenter.k8s.aws/v1';

describe('standalone AWS on a real control plane: Karpenter on, the Cluster Autoscaler off', () => {
  let cluster: RealOpenShiftAwsCluster;
  let sidecar: Omit<Harness, 'cluster'>;
  let kubelets: SimulatedKubelets;
  const get = (apiVersion: string, kind: string, name: string, namespace?: string) =>
    cluster.plane.get(apiVersion, kind, name, namespace);
  const refused = () => refusedRequests(cluster.plane, SIDECAR_USER);

  beforeAll(async () => {
    cluster = await startRealOpenShiftAwsCluster();
    kubelets = new SimulatedKubelets(cluster.plane);
    await kubelets.register('master-0');
    kubelets.start();
    sidecar = await startSidecarRuntime(cluster, { requeueMs: 500 });
  }, 180_000);
  afterAll(async () => {
    kubelets?.stop();
    await sidecar?.stop();
    await cluster?.stop();
  });

  it('installs Karpenter (CRDs, operand, RBAC, NodeClass, NodePool) and keeps the Cluster Autoscaler until Karpenter can take over', async () => {
    const result = await sidecar.runtime.apply(
      sidecar.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        clusterAutoscalerMode: 'DISABLE',
      }),
    );
    // Against the whole list, so that a failure shows every condition the pass ended with.
    expect(result.conditions).toContainEqual(
      expect.objectContaining({
        type: 'ClusterAutoscalerDisabled',
        status: 'False',
        reason: 'WaitingForKarpenter',
      }),
    );
    for (const crd of [
      'nodepools.karpenter.sh',
      'nodeclaims.karpenter.sh',
      'ec2nodeclasses.karpenter.k8s.aws',
    ]) {
      expect(await get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd)).toBeDefined();
    }
    expect(await get('karpenter.sh/v1', 'NodePool', 'general')).toMatchObject({
      spec: { limits: { cpu: '64' } },
    });
    expect(await get(NODECLASS, 'EC2NodeClass', 'default')).toBeDefined();
    expect(await get('apps/v1', 'Deployment', OPERAND_NAME, OPERAND_NAMESPACE)).toBeDefined();
    expect(await get(...CA, 'default')).toBeDefined();
    expect(refused()).toEqual([]);
  });

  it("the real Deployment controller makes the operand Available once the node's kubelet runs its pods", async () => {
    await deploymentAvailable(cluster.plane, OPERAND_NAMESPACE, OPERAND_NAME);
  });

  it('removes the Cluster Autoscaler once the NodeClass is Ready, keeping a copy; nothing was refused', async () => {
    // Karpenter's EC2NodeClass status controller, as Karpenter's own service account (so the
    // operand's RBAC, which the sidecar granted, must allow it). Real Karpenter does this in the
    // issue that runs karpenter-provider-aws here.
    const karpenterToken = await cluster.plane.serviceAccountToken(OPERAND_NAMESPACE, OPERAND_NAME);
    const live = (await get(NODECLASS, 'EC2NodeClass', 'default'))!;
    const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const spec = live.spec as { amiSelectorTerms?: { id?: string }[]; instanceProfile?: string };
    await cluster.plane.patch(
      NODECLASS,
      'EC2NodeClass',
      'default',
      undefined,
      {
        status: {
          subnets: [{ id: 'subnet-0a1b2c3d4e5f60001', zone: 'us-east-1a' }],
          securityGroups: [{ id: 'sg-0a1b2c3d4e5f60001' }],
          amis: (spec.amiSelectorTerms ?? []).flatMap((term) =>
            term.id
              ? [
                  {
                    id: term.id,
                    requirements: [
                      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
                    ],
                  },
                ]
              : [],
          ),
          ...(spec.instanceProfile ? { instanceProfile: spec.instanceProfile } : {}),
          conditions: [
            'AMIsReady',
            'InstanceProfileReady',
            'SecurityGroupsReady',
            'SubnetsReady',
            'ValidationSucceeded',
            'Ready',
          ].map((type) => ({
            type,
            status: 'True',
            reason: type,
            message: '',
            lastTransitionTime: t,
          })),
        },
      },
      'merge',
      'status',
      karpenterToken,
    );
    await eventually(async () => ((await get(...CA, 'default')) ? undefined : true), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'ClusterAutoscaler/default to be removed',
    });
    const { json } = await cluster.plane.request(
      'GET',
      await cluster.plane.resourcePath(MA[0], MA[1], undefined, 'openshift-machine-api'),
    );
    expect((json as { items: unknown[] }).items).toEqual([]);
    expect(
      await get('v1', 'ConfigMap', 'karpenter-fleet-cluster-autoscaler-backup', 'openshift-config'),
    ).toBeDefined();
    // The pass that removed it records its result when it ends, which a loaded machine can
    // take a moment after the deletion is visible.
    const last = await eventually(
      () => {
        const result = sidecar.runtime.lastResult()?.result;
        return conditionOf(result, 'ClusterAutoscalerDisabled')?.status === 'True'
          ? result
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the pass that removed it to end' },
    ).catch(() => sidecar.runtime.lastResult()?.result);
    expect(conditionOf(last, 'ClusterAutoscalerDisabled')).toMatchObject({
      status: 'True',
      reason: 'DisabledByFleet',
    });
    expect(refused()).toEqual([]);
  });
});
