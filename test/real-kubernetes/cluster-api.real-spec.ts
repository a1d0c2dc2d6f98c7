import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CAPI_OPERAND_NAME, CAPI_OPERAND_NAMESPACE } from '@fleet/cloud-provider';

import {
  GENERAL_NODEPOOL,
  startCapiSidecarRuntime,
  type CapiHarness,
} from '../cluster-api/harness.js';
import { CAPI_CLUSTER } from '../support/capi-aws-workload.js';
import {
  WORKLOAD_SIDECAR_USER,
  startRealCapiClusters,
  type RealCapiClusters,
} from '../support/control-plane/capi-clusters.js';
import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import {
  conditionOf,
  deploymentAvailable,
  refusedRequests,
} from '../support/control-plane/scenario.js';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { eventually } from '../support/processes.js';

// The Cluster API headline scenario (test/cluster-api/sidecar-rbac) on two real control planes,
// the management cluster's and the workload cluster's: Karpenter enabled with the Cluster
// Autoscaler disabled. The sidecar is the workload server's service account of
// deploy/sidecar/capi/rbac.yaml and the management server's of management-rbac.yaml, holding
// exactly those rules; neither server's audit log may show a request refused.

const V1B1 = 'cluster.x-k8s.io/v1beta1';
const NS = CAPI_CLUSTER.namespace;
const OWNED = 'fleet.karpenter.sh/managed-by';
const MIN = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const NODE_CLASS = 'karpenter.cluster.x-k8s.io/v1alpha1';

describe('Cluster API on two real control planes: Karpenter on, the Cluster Autoscaler off', () => {
  let clusters: RealCapiClusters;
  let sidecar: Omit<CapiHarness, 'pair' | 'sidecar'>;
  let kubelets: SimulatedKubelets;
  const refused = () => ({
    workload: refusedRequests(clusters.workload, WORKLOAD_SIDECAR_USER),
    management: refusedRequests(clusters.management, clusters.managementSidecarUser),
  });
  const machineDeployments = async () => {
    const { json } = await clusters.management.request(
      'GET',
      await clusters.management.resourcePath(V1B1, 'MachineDeployment', undefined, NS),
    );
    return (json as { items: KubeObject[] }).items;
  };
  const enabled = () =>
    sidecar.order({
      enabled: true,
      clusterAutoscalerMode: 'DISABLE',
      nodePools: [GENERAL_NODEPOOL],
    });

  beforeAll(async () => {
    clusters = await startRealCapiClusters();
    kubelets = new SimulatedKubelets(clusters.workload);
    await kubelets.register('ip-10-0-0-10.ec2.internal');
    kubelets.start();
    sidecar = await startCapiSidecarRuntime(
      {
        kubeconfigs: clusters.kubeconfigs,
        cloudEnv: clusters.cloudEnv,
        location: CAPI_CLUSTER,
        openshift: false,
      },
      { requeueMs: 500 },
    );
  }, 180_000);
  afterAll(async () => {
    kubelets?.stop();
    await sidecar?.stop();
    await clusters?.stop();
  });

  it("installs Karpenter on the workload cluster and its MachineDeployments on the management cluster, with deploy/'s RBAC alone", async () => {
    // The Cluster Autoscaler's node group sizes on the cluster's own MachineDeployments.
    expect(
      (await machineDeployments()).filter((md) => md.metadata?.annotations?.[MIN]),
    ).toHaveLength(3);
    await sidecar.runtime.apply(sidecar.order({}));
    const result = await sidecar.runtime.apply(enabled());
    expect(conditionOf(result, 'Degraded')).toMatchObject({ status: 'False' });
    for (const crd of [
      'nodepools.karpenter.sh',
      'nodeclaims.karpenter.sh',
      'clusterapinodeclasses.karpenter.cluster.x-k8s.io',
    ]) {
      expect(
        await clusters.workload.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd),
      ).toBeDefined();
    }
    expect(await clusters.workload.get('karpenter.sh/v1', 'NodePool', 'general')).toBeDefined();
    expect(await clusters.workload.get(NODE_CLASS, 'ClusterAPINodeClass', 'default')).toBeDefined();
    expect(
      await clusters.workload.get(
        'apps/v1',
        'Deployment',
        CAPI_OPERAND_NAME,
        CAPI_OPERAND_NAMESPACE,
      ),
    ).toBeDefined();
    expect((await machineDeployments()).filter((md) => md.metadata?.labels?.[OWNED])).toHaveLength(
      3,
    );
    expect(refused()).toEqual({ workload: [], management: [] });
  });

  it('the operand runs (the real Deployment controller, the kubelet simulated) and, its NodeClass Ready, the node group sizes go', async () => {
    await deploymentAvailable(clusters.workload, CAPI_OPERAND_NAMESPACE, CAPI_OPERAND_NAME);
    // karpenter-provider-cluster-api's NodeClass status, as its service account.
    const token = await clusters.workload.serviceAccountToken(
      CAPI_OPERAND_NAMESPACE,
      CAPI_OPERAND_NAME,
    );
    await clusters.workload.patch(
      NODE_CLASS,
      'ClusterAPINodeClass',
      'default',
      undefined,
      {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Ready',
              message: '',
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
        },
      },
      'merge',
      'status',
      token,
    );
    await eventually(
      async () => {
        await sidecar.runtime.apply(enabled());
        const c = conditionOf(sidecar.runtime.lastResult()?.result, 'ClusterAutoscalerDisabled');
        return c?.status === 'True' ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the Cluster Autoscaler taken out of play' },
    );
    for (const md of await machineDeployments()) {
      expect(md.metadata?.annotations?.[MIN]).toBeUndefined();
    }
    expect(refused()).toEqual({ workload: [], management: [] });
  });
});
