import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';

import { GENERAL_NODEPOOL, startAzureSidecarRuntime, type AzureHarness } from '../azure/harness.js';
import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import {
  SIDECAR_USER,
  startRealOpenShiftAzureCluster,
  type RealOpenShiftAzureCluster,
} from '../support/control-plane/openshift-cluster.js';
import {
  conditionOf,
  deploymentAvailable,
  refusedRequests,
} from '../support/control-plane/scenario.js';
import {
  azureMarketplaceFixtureObjects,
  withClusterAutoscaler,
} from '../support/ocp-azure-standalone.js';
import { eventually } from '../support/processes.js';

// The Azure headline scenario (test/azure/cluster-autoscaler) on a real kube-apiserver,
// kube-controller-manager and kube-scheduler: Karpenter (the OpenShift fork of
// karpenter-provider-azure) enabled with the Cluster Autoscaler disabled, the sidecar as its
// service account with exactly deploy/sidecar/azure's RBAC, nothing refused.

const CA = ['autoscaling.openshift.io/v1', 'ClusterAutoscaler'] as const;
const MA = ['autoscaling.openshift.io/v1beta1', 'MachineAutoscaler'] as const;
const AKS_NODE_CLASS = 'karpenter.azure.com/v1beta1';

describe('Azure on a real control plane: Karpenter on, the Cluster Autoscaler off', () => {
  let cluster: RealOpenShiftAzureCluster;
  let sidecar: Omit<AzureHarness, 'cluster'>;
  let kubelets: SimulatedKubelets;
  const get = (apiVersion: string, kind: string, name: string, namespace?: string) =>
    cluster.plane.get(apiVersion, kind, name, namespace);
  const refused = () => refusedRequests(cluster.plane, SIDECAR_USER);

  beforeAll(async () => {
    cluster = await startRealOpenShiftAzureCluster(
      withClusterAutoscaler(azureMarketplaceFixtureObjects()),
    );
    kubelets = new SimulatedKubelets(cluster.plane);
    await kubelets.register('master-0');
    kubelets.start();
    sidecar = await startAzureSidecarRuntime(cluster, { requeueMs: 500 });
  }, 180_000);
  afterAll(async () => {
    kubelets?.stop();
    await sidecar?.stop();
    await cluster?.stop();
  });

  it('installs Karpenter (CRDs, operand, RBAC, AKSNodeClass, NodePool) and keeps the Cluster Autoscaler until it can take over', async () => {
    const result = await sidecar.runtime.apply(
      sidecar.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        clusterAutoscalerMode: 'DISABLE',
      }),
    );
    expect(conditionOf(result, 'ClusterAutoscalerDisabled')).toMatchObject({
      status: 'False',
      reason: 'WaitingForKarpenter',
    });
    for (const crd of [
      'nodepools.karpenter.sh',
      'nodeclaims.karpenter.sh',
      'aksnodeclasses.karpenter.azure.com',
    ]) {
      expect(await get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd)).toBeDefined();
    }
    expect(await get('karpenter.sh/v1', 'NodePool', 'general')).toBeDefined();
    expect(await get(AKS_NODE_CLASS, 'AKSNodeClass', 'default')).toBeDefined();
    expect(await get('apps/v1', 'Deployment', OPERAND_NAME, OPERAND_NAMESPACE)).toBeDefined();
    expect(await get(...CA, 'default')).toBeDefined();
    expect(refused()).toEqual([]);
  });

  it("the real Deployment controller makes the operand Available once the node's kubelet runs its pods", async () => {
    await deploymentAvailable(cluster.plane, OPERAND_NAMESPACE, OPERAND_NAME);
  });

  it('removes the Cluster Autoscaler once the AKSNodeClass is Ready, keeping a copy; nothing was refused', async () => {
    // karpenter-provider-azure's AKSNodeClass status, as its service account (the operand's RBAC
    // the sidecar granted must allow it).
    const karpenterToken = await cluster.plane.serviceAccountToken(OPERAND_NAMESPACE, OPERAND_NAME);
    const live = (await get(AKS_NODE_CLASS, 'AKSNodeClass', 'default'))!;
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await cluster.plane.patch(
      AKS_NODE_CLASS,
      'AKSNodeClass',
      'default',
      undefined,
      {
        status: {
          conditions: ['ImagesReady', 'KubernetesVersionReady', 'SubnetsReady', 'Ready'].map(
            (type) => ({
              type,
              status: 'True',
              reason: type,
              message: '',
              lastTransitionTime: at,
              observedGeneration: live.metadata?.generation ?? 1,
            }),
          ),
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
    expect(
      conditionOf(sidecar.runtime.lastResult()?.result, 'ClusterAutoscalerDisabled'),
    ).toMatchObject({
      status: 'True',
      reason: 'DisabledByFleet',
    });
    expect(refused()).toEqual([]);
  });
});
