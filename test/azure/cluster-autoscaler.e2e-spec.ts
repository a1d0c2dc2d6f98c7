import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { KARPENTER_USER } from '../support/node-launch-simulator.js';
import {
  azureMarketplaceFixtureObjects,
  withClusterAutoscaler,
} from '../support/ocp-azure-standalone.js';
import { GENERAL_NODEPOOL, startAzureHarness, until, type AzureHarness } from './harness.js';

const CA = ['autoscaling.openshift.io/v1', 'ClusterAutoscaler'] as const;
const MA = ['autoscaling.openshift.io/v1beta1', 'MachineAutoscaler'] as const;
const AKS_NODE_CLASS = 'karpenter.azure.com/v1beta1';
const BACKUP = [
  'v1',
  'ConfigMap',
  'karpenter-fleet-cluster-autoscaler-backup',
  'openshift-config',
] as const;

/** What a restore must reproduce: the object minus what the API server sets. */
const essence = (o: KubeObject | undefined) =>
  o && {
    name: o.metadata?.name,
    namespace: o.metadata?.namespace,
    labels: o.metadata?.labels,
    annotations: o.metadata?.annotations,
    spec: o.spec,
  };

/**
 * The Cluster Autoscaler switch on a standalone Azure cluster, checked as on AWS
 * (test/standalone-aws/cluster-autoscaler-and-disable.e2e-spec.ts): DISABLE waits until Karpenter
 * can take over (the operand Available, the default AKSNodeClass Ready), then keeps an exact copy
 * and removes the ClusterAutoscaler and the MachineAutoscalers; KEEP puts back exactly what was.
 */
describe('Azure: the Cluster Autoscaler switch', () => {
  let h: AzureHarness;
  let original: ReturnType<typeof autoscalers>;

  const autoscalers = () => ({
    clusterAutoscaler: essence(h.cluster.kube.get(...CA, 'default')),
    machineAutoscalers: h.cluster.kube.list(...MA, 'openshift-machine-api').map(essence),
  });
  const waiting = (r: {
    conditions: { type: string; status: string; reason: string; message: string }[];
  }) => r.conditions.find((c) => c.type === 'ClusterAutoscalerDisabled');

  /** karpenter-provider-azure, as its service account, reports its AKSNodeClass resolved. */
  const markNodeClassReady = () => {
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = (type: string) => ({
      type,
      status: 'True',
      reason: type,
      message: '',
      lastTransitionTime: at,
      observedGeneration: 1,
    });
    h.cluster.kube
      .as(KARPENTER_USER)
      .patchStatus(AKS_NODE_CLASS, 'AKSNodeClass', 'default', undefined, {
        conditions: ['ImagesReady', 'KubernetesVersionReady', 'SubnetsReady', 'Ready'].map(
          condition,
        ),
      });
  };

  beforeAll(async () => {
    h = await startAzureHarness({
      objects: withClusterAutoscaler(azureMarketplaceFixtureObjects()),
      requeueMs: 500,
    });
    // Give the originals labels and annotations a careless restore would lose.
    h.cluster.kube.patch(...CA, 'default', undefined, {
      metadata: { labels: { team: 'sre' }, annotations: { 'example.com/owner': 'sre' } },
    });
    h.cluster.kube.patch(...MA, 'worker-eastus2', 'openshift-machine-api', {
      metadata: { annotations: { 'example.com/reviewed': '2026-11-30' } },
    });
    original = autoscalers();
    expect(original.clusterAutoscaler).toBeDefined();
    expect(original.machineAutoscalers).toHaveLength(3);
  });
  afterAll(async () => h?.stop());

  it('DISABLE keeps the Cluster Autoscaler until the operand is Available and the AKSNodeClass Ready', async () => {
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'DISABLE' }),
    );
    expect(result.requeue).toBe(true);
    expect(waiting(result)).toMatchObject({
      status: 'False',
      reason: 'WaitingForKarpenter',
      message: expect.stringMatching(
        /operand Deployment openshift-karpenter\/karpenter is not Available yet; AKSNodeClass default is not Ready yet/,
      ) as unknown,
    });
    expect(result.clusterAutoscaler).toEqual({
      mode: 'DISABLE',
      observed: 'Present',
      machineAutoscalers: 3,
    });
    expect(autoscalers()).toEqual(original);
    expect(h.cluster.kube.get(...BACKUP)).toBeUndefined();

    // The operand alone is not enough: the default AKSNodeClass must be Ready too.
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    await until(() => {
      const c = waiting(h.runtime.lastResult()!.result);
      return c?.reason === 'WaitingForKarpenter' && !c.message.includes('operand') ? c : undefined;
    }, 'the wait to name only the AKSNodeClass');
    expect(autoscalers()).toEqual(original);

    markNodeClassReady();
    await until(
      () => (h.cluster.kube.get(...CA, 'default') ? undefined : true),
      'the Cluster Autoscaler to be removed once Karpenter can take over',
    );
  });

  it('DISABLE then keeps an exact copy and removes ClusterAutoscaler/default and the MachineAutoscalers', async () => {
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'DISABLE' }),
    );
    expect(result.requeue).toBe(false);
    expect(h.cluster.kube.get(...CA, 'default')).toBeUndefined();
    expect(h.cluster.kube.list(...MA, 'openshift-machine-api')).toEqual([]);
    expect(h.cluster.kube.get(...BACKUP)).toBeDefined();
    expect(result.clusterAutoscaler).toEqual({
      mode: 'DISABLE',
      observed: 'Removed',
      machineAutoscalers: 0,
    });
    expect(result.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'ClusterAutoscalerDisabled',
          status: 'True',
          reason: 'DisabledByFleet',
        }),
      ]),
    );
    // The same order again does not overwrite the copy.
    const rv = h.cluster.kube.get(...BACKUP)?.metadata?.resourceVersion;
    await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'DISABLE' }),
    );
    expect(h.cluster.kube.get(...BACKUP)?.metadata?.resourceVersion).toBe(rv);
  });

  it('KEEP restores exactly what was there: spec, labels and annotations, object for object', async () => {
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'KEEP' }),
    );
    expect(autoscalers()).toEqual(original);
    expect(h.cluster.kube.get(...BACKUP)).toBeUndefined();
    expect(result.clusterAutoscaler).toEqual({
      mode: 'KEEP',
      observed: 'Present',
      machineAutoscalers: 3,
    });
  });
});
