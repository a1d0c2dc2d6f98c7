import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CAPI_OPERAND_NAME,
  CAPI_OPERAND_NAMESPACE,
  OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
} from '@fleet/cloud-provider';
import { OPENSHIFT_CLUSTER_API } from '../support/capi-aws-workload.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startCapiHarness, until, type CapiHarness } from './harness.js';
import { ClusterApiProviderSimulator } from './provider-simulator.js';

const V1B1 = 'cluster.x-k8s.io/v1beta1';
const NS = OPENSHIFT_CLUSTER_API.namespace;
const OWNED = 'fleet.karpenter.sh/managed-by';

/**
 * OpenShift's own Cluster API: one API server, the Cluster API objects in openshift-cluster-api
 * (a release that serves MachineDeployments without a denying policy). The sidecar gets no
 * MANAGEMENT_KUBECONFIG; the operand's Cluster API rights are bound on the same cluster.
 */
describe("Cluster API on OpenShift's own Cluster API (one API server)", () => {
  let h: CapiHarness;
  let provider: ClusterApiProviderSimulator;
  let original: Record<string, Record<string, string> | undefined>;
  const kube = () => h.pair.workload;
  const owned = (kind: string, apiVersion = V1B1) =>
    kube()
      .list(apiVersion, kind, NS)
      .filter((o) => o.metadata?.labels?.[OWNED]);
  const workerAnnotations = () =>
    Object.fromEntries(
      [...kube().list(V1B1, 'MachineDeployment', NS), ...kube().list(V1B1, 'MachineSet', NS)]
        .filter((g) => !g.metadata?.labels?.[OWNED])
        .map((g) => [`${g.kind}/${g.metadata?.name}`, g.metadata?.annotations]),
    );
  const enabled = {
    enabled: true,
    clusterAutoscalerMode: 'DISABLE' as const,
    nodePools: [GENERAL_NODEPOOL],
  };

  beforeAll(async () => {
    h = await startCapiHarness({ openshift: true });
    provider = new ClusterApiProviderSimulator(h.pair);
    original = workerAnnotations();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("enable: MachineDeployments of the worker template's type in openshift-cluster-api, the operand with in-cluster Cluster API access", async () => {
    await h.runtime.apply(h.order(enabled));
    expect(h.runtime.lastResult()?.result.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Degraded', status: 'False' })]),
    );
    // No allowedInstanceTypes: the type of the worker the fleet copies.
    expect(
      owned('MachineDeployment')
        .map((md) => md.metadata?.name)
        .sort(),
    ).toEqual([
      'capi-east-karpenter-c6i-2xlarge-us-east-1a',
      'capi-east-karpenter-c6i-2xlarge-us-east-1b',
      'capi-east-karpenter-c6i-2xlarge-us-east-1c',
    ]);
    const deployment = kube().get(
      'apps/v1',
      'Deployment',
      CAPI_OPERAND_NAME,
      CAPI_OPERAND_NAMESPACE,
    )!;
    const env = (
      deployment.spec as { template: { spec: { containers: { env: { name: string }[] }[] } } }
    ).template.spec.containers[0]!.env.map((e) => e.name);
    expect(env).not.toContain('CLUSTER_API_KUBECONFIG');
    expect(
      kube().get('v1', 'Secret', OPERAND_MANAGEMENT_KUBECONFIG_SECRET, CAPI_OPERAND_NAMESPACE),
    ).toBeUndefined();
    // The chart's cluster.x-k8s.io rule is bound to the operand's own ServiceAccount.
    const bindings = kube()
      .list('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding')
      .filter((b) => b.metadata?.labels?.[OWNED]);
    expect(
      bindings.some(
        (b) =>
          (b.subjects as { name: string; namespace: string }[]).some(
            (s) => s.name === 'karpenter' && s.namespace === CAPI_OPERAND_NAMESPACE,
          ) && (b.roleRef as { name: string }).name.startsWith('karpenter-fleet:cluster-api:'),
      ),
    ).toBe(true);
  });

  it('a node launched through the provider joins with its CSRs approved', async () => {
    kube().setDeploymentAvailable(CAPI_OPERAND_NAMESPACE, CAPI_OPERAND_NAME);
    provider.markNodeClassReady();
    await h.runtime.apply(h.order(enabled));
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
    const launched = provider.launch('general', 'c6i.2xlarge', 'us-east-1b');
    const kubelet = new NodeLaunchSimulator({ kube: kube(), ec2: h.pair.ec2 });
    await kubelet.approved(kubelet.submitCsr(launched.nodeName, 'client'));
    provider.registerNode(launched, 'general');
    await kubelet.approved(kubelet.submitCsr(launched.nodeName, 'serving'));
    expect(kube().get('v1', 'Node', launched.nodeName)).toBeDefined();
  });

  it("disabling Karpenter: NodePools first, the fleet's MachineDeployments only once no NodeClaim is left, the Cluster Autoscaler's groups restored", async () => {
    expect(workerAnnotations()).not.toEqual(original);
    const result = await h.runtime.apply(h.order({ ...enabled, enabled: false }));
    expect(result.requeue).toBe(true);
    expect(kube().list('karpenter.sh/v1', 'NodePool')).toEqual([]);
    // Karpenter still has a NodeClaim: its MachineDeployments stay (it scales them down).
    expect(owned('MachineDeployment')).toHaveLength(3);
    expect(workerAnnotations()).toEqual(original);
    // Karpenter's termination: the Machine goes, then the NodeClaim.
    for (const claim of kube().list('karpenter.sh/v1', 'NodeClaim'))
      kube().delete('karpenter.sh/v1', 'NodeClaim', claim.metadata!.name!);
    await until(
      () => (owned('MachineDeployment').length === 0 ? true : undefined),
      "the fleet's MachineDeployments removed",
      15_000,
    );
    await until(
      () =>
        owned('AWSMachineTemplate', 'infrastructure.cluster.x-k8s.io/v1beta2').length === 0
          ? true
          : undefined,
      'their templates removed',
    );
    // The operand goes last, after everything Karpenter needed it for.
    await until(
      () =>
        kube().get('apps/v1', 'Deployment', CAPI_OPERAND_NAME, CAPI_OPERAND_NAMESPACE)
          ? undefined
          : true,
      'the operand removed',
    );
    expect(workerAnnotations()).toEqual(original);
  });
});
