import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { deployDocuments } from '../support/deploy-manifests.js';
import { KARPENTER_USER, NODE_BOOTSTRAPPER } from '../support/node-launch-simulator.js';
import { kubeletCsrRequest } from '../support/pkcs10.js';
import {
  azureFixtureInfrastructure,
  azureMarketplaceFixtureObjects,
  withClusterAutoscaler,
} from '../support/ocp-azure-standalone.js';
import { grantedPermissions } from '../support/rbac-usage.js';
import { GENERAL_NODEPOOL, startAzureHarness, until, type AzureHarness } from './harness.js';

const CSR = ['certificates.k8s.io/v1', 'CertificateSigningRequest'] as const;
const AKS_NODE_CLASS = ['karpenter.azure.com/v1beta1', 'AKSNodeClass'] as const;
const CLUSTER_OPERATOR = ['config.openshift.io/v1', 'ClusterOperator', 'karpenter'] as const;
const BINDING = ['rbac.authorization.k8s.io/v1', 'RoleBinding', 'karpenter-fleet-sidecar'] as const;
const KARPENTER_CRDS = [
  'nodepools.karpenter.sh',
  'nodeclaims.karpenter.sh',
  'nodeoverlays.karpenter.sh',
  'aksnodeclasses.karpenter.azure.com',
];
const infra = azureFixtureInfrastructure();

interface Condition {
  type: string;
  status: string;
  reason: string;
}
const conditionsOf = (o: KubeObject | undefined): Condition[] =>
  (o?.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];

/**
 * The sidecar's whole life on a standalone Azure cluster, as test/standalone-aws/sidecar-rbac
 * does on AWS, with every authorization decision recorded: what it was refused means
 * deploy/sidecar/azure grants too little, what it never used means it grants too much. And the
 * `karpenter` ClusterOperator OpenShift's console and `oc get co` show, kept from the first order.
 */
describe('standalone Azure: the sidecar RBAC in deploy/ is exactly what the sidecar uses', () => {
  let h: AzureHarness;

  beforeAll(async () => {
    h = await startAzureHarness({
      objects: withClusterAutoscaler(azureMarketplaceFixtureObjects()),
      requeueMs: 1_000,
    });
    // A cluster that never had Karpenter: the sidecar installs the CRDs itself.
    for (const crd of KARPENTER_CRDS)
      h.cluster.kube.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd);
  });
  afterAll(async () => h?.stop());

  it('keeps the karpenter ClusterOperator from the first order, as on AWS', async () => {
    await h.runtime.apply(h.order({}));
    const operator = await until(
      () => h.cluster.kube.get(...CLUSTER_OPERATOR),
      'the karpenter ClusterOperator',
    );
    expect(conditionsOf(operator).map((c) => c.type)).toEqual(
      expect.arrayContaining(['Available', 'Progressing', 'Degraded', 'Upgradeable']),
    );
    expect((operator.status as { relatedObjects?: unknown[] }).relatedObjects).toContainEqual({
      group: 'karpenter.azure.com',
      resource: 'aksnodeclasses',
      name: '',
    });
  });

  it('enables, approves, enforces, disables: nothing refused, nothing granted in vain', async () => {
    // Enable with the Cluster Autoscaler removed, kubelet settings (the pool's KubeletConfig).
    await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        clusterAutoscalerMode: 'DISABLE',
        nodeClassOverrides: { kubelet: { imageGCHighThresholdPercent: 85 } },
      }),
    );
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    const access = h.cluster.kube.get(...BINDING, OPERAND_NAMESPACE);
    expect(access).toBeDefined();
    // karpenter-provider-azure, as its service account, reports its AKSNodeClass resolved.
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    h.cluster.kube
      .as(KARPENTER_USER)
      .patchStatus(AKS_NODE_CLASS[0], AKS_NODE_CLASS[1], 'default', undefined, {
        conditions: ['ImagesReady', 'KubernetesVersionReady', 'SubnetsReady', 'Ready'].map(
          (type) => ({
            type,
            status: 'True',
            reason: type,
            message: '',
            lastTransitionTime: at,
            observedGeneration: 1,
          }),
        ),
      });
    await until(
      () =>
        h.cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default')
          ? undefined
          : true,
      'the Cluster Autoscaler to be removed',
    );
    // A node Karpenter launched: its NodeClaim, its VM and NIC in ARM, its client CSR approved.
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
    const vmName = 'aks-general-rbac01';
    h.cluster.kube.as(KARPENTER_USER).create(
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: {
          name: 'general-rbac01',
          labels: {
            'karpenter.sh/nodepool': 'general',
            'karpenter.azure.com/aksnodeclass': 'default',
          },
        },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [],
        },
      },
      { fieldManager: 'karpenter' },
    );
    h.cluster.arm.addVirtualMachine(
      {
        resourceGroup: infra.resourceGroup,
        name: vmName,
        location: 'eastus',
        computerName: vmName,
        powerState: 'running',
        networkInterfaces: [vmName],
        tags: {
          'karpenter.azure.com_cluster': infra.infraID,
          'karpenter.sh_nodepool': 'general',
          'compute.aks.billing': 'linux',
        },
      },
      [{ resourceGroup: infra.resourceGroup, name: vmName, privateIPAddresses: ['10.0.2.77'] }],
    );
    h.cluster.kube.patchStatus('karpenter.sh/v1', 'NodeClaim', 'general-rbac01', undefined, {
      providerID: `azure:///subscriptions/${infra.credentials.subscriptionID}/resourceGroups/${infra.resourceGroup.toLowerCase()}/providers/Microsoft.Compute/virtualMachines/${vmName}`,
      conditions: [
        {
          type: 'Launched',
          status: 'True',
          reason: 'Launched',
          message: '',
          lastTransitionTime: at,
        },
      ],
    });
    h.cluster.kube.create(
      {
        apiVersion: CSR[0],
        kind: CSR[1],
        metadata: { name: 'csr-rbac01' },
        spec: {
          request: kubeletCsrRequest(vmName),
          signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
          usages: ['digital signature', 'client auth'],
        },
      },
      {
        fieldManager: 'kubelet',
        user: {
          username: NODE_BOOTSTRAPPER,
          groups: [
            'system:serviceaccounts',
            'system:serviceaccounts:openshift-machine-config-operator',
            'system:authenticated',
          ],
        },
      },
    );
    await until(
      () =>
        conditionsOf(h.cluster.kube.get(...CSR, 'csr-rbac01')).some((c) => c.type === 'Approved') ||
        undefined,
      'the client CSR approved',
    );
    // Its serving CSR once the node registered, naming the NIC's IP.
    h.cluster.kube.patchStatus('karpenter.sh/v1', 'NodeClaim', 'general-rbac01', undefined, {
      nodeName: vmName,
    });
    h.cluster.kube.create(
      {
        apiVersion: CSR[0],
        kind: CSR[1],
        metadata: { name: 'csr-rbac02' },
        spec: {
          request: kubeletCsrRequest(vmName, { dnsNames: [vmName], ipAddresses: ['10.0.2.77'] }),
          signerName: 'kubernetes.io/kubelet-serving',
          usages: ['digital signature', 'server auth'],
        },
      },
      {
        fieldManager: 'kubelet',
        user: {
          username: `system:node:${vmName}`,
          groups: ['system:nodes', 'system:authenticated'],
        },
      },
    );
    await until(
      () =>
        conditionsOf(h.cluster.kube.get(...CSR, 'csr-rbac02')).some((c) => c.type === 'Approved') ||
        undefined,
      'the serving CSR approved',
    );
    // A user's AKSNodeClass gets the worker image and its pool's Ignition pointer.
    h.cluster.kube.create({
      apiVersion: AKS_NODE_CLASS[0],
      kind: AKS_NODE_CLASS[1],
      metadata: { name: 'users' },
      spec: { vnetSubnetID: infra.vnetSubnetID },
    });
    await until(
      () =>
        (h.cluster.kube.get(...AKS_NODE_CLASS, 'users')?.spec as { userData?: string }).userData,
      'the user NodeClass enforced',
    );
    await h.runtime.idle();
    expect((await h.runtime.snapshot())?.metrics).toMatchObject({ nodes: expect.any(Number) });
    // Karpenter removes its node before the operand may go (as the simulator does on AWS).
    h.cluster.kube.delete('karpenter.sh/v1', 'NodeClaim', 'general-rbac01');
    // Disable: NodePools, NodeClasses, operand go; the Cluster Autoscaler comes back.
    await h.runtime.apply(h.order({ enabled: false, clusterAutoscalerMode: 'KEEP' }));
    await until(
      () =>
        h.runtime
          .lastResult()
          ?.result.conditions.find(
            (c) => c.type === 'Available' && c.reason === 'KarpenterDisabled',
          ),
      'Karpenter to be disabled',
      30_000,
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)}; conditions ${JSON.stringify(h.runtime.lastResult()?.result.conditions)}; refused ${JSON.stringify(h.cluster.sidecarAccess.refused())}`,
      );
    });
    await h.runtime.idle();

    const granted = grantedPermissions(
      [
        ...deployDocuments()
          .filter((f) => f.file === 'sidecar/azure/rbac.yaml')
          .flatMap((f) => f.docs as KubeObject[]),
        access!,
      ],
      h.cluster.sidecarUser,
    );
    expect(granted.length).toBeGreaterThan(0);
    if (process.env.PRINT_RBAC_USAGE) console.log(h.cluster.sidecarAccess.used().sort().join('\n'));
    expect({ refused: h.cluster.sidecarAccess.refused() }).toEqual({ refused: [] });
    expect({ unused: h.cluster.sidecarAccess.unused(granted) }).toEqual({ unused: [] });
  });
});
