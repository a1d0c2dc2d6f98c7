import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CAPI_OPERAND_NAME,
  CAPI_OPERAND_NAMESPACE,
  NODE_GROUP_SIZES_BACKUP,
} from '@fleet/cloud-provider';
import { CAPI_CLUSTER } from '../support/capi-aws-workload.js';
import { deployDocuments } from '../support/deploy-manifests.js';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { grantedPermissions } from '../support/rbac-usage.js';
import { GENERAL_NODEPOOL, startCapiHarness, until, type CapiHarness } from './harness.js';
import { ClusterApiProviderSimulator } from './provider-simulator.js';

const V1B1 = 'cluster.x-k8s.io/v1beta1';
const NS = CAPI_CLUSTER.namespace;
const OWNED = 'fleet.karpenter.sh/managed-by';
const MIN = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const MAX = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
const CSR = ['certificates.k8s.io/v1', 'CertificateSigningRequest'] as const;
const BINDING = ['rbac.authorization.k8s.io/v1', 'RoleBinding', 'karpenter-fleet-sidecar'] as const;
const KARPENTER_CRDS = ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh'];
/**
 * A worker MachineSet of its own (no MachineDeployment above it) that the Cluster Autoscaler
 * manages: DISABLE patches MachineSets too.
 */
const STANDALONE_MACHINE_SET = {
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'MachineSet',
  metadata: {
    name: 'capi-east-edge-us-east-1c',
    namespace: NS,
    labels: { 'cluster.x-k8s.io/cluster-name': CAPI_CLUSTER.name },
    annotations: { [MIN]: '0', [MAX]: '4' },
  },
  spec: {
    clusterName: CAPI_CLUSTER.name,
    replicas: 0,
    selector: { matchLabels: { 'cluster.x-k8s.io/set-name': 'capi-east-edge-us-east-1c' } },
    template: {
      metadata: { labels: { 'cluster.x-k8s.io/set-name': 'capi-east-edge-us-east-1c' } },
      spec: {
        clusterName: CAPI_CLUSTER.name,
        version: 'v1.33.4',
        failureDomain: 'us-east-1c',
        bootstrap: {
          configRef: {
            apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
            kind: 'KubeadmConfigTemplate',
            name: 'capi-east-workers',
          },
        },
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
          kind: 'AWSMachineTemplate',
          name: 'capi-east-c6i-us-east-1a',
        },
      },
    },
  },
};

/** deploy/sidecar/capi's documents of one file. */
const capiRbac = (file: 'rbac.yaml' | 'management-rbac.yaml'): KubeObject[] =>
  deployDocuments()
    .filter((f) => f.file === `sidecar/capi/${file}`)
    .flatMap((f) => f.docs as KubeObject[]);

/**
 * The sidecar of a Cluster API workload cluster whose management cluster is another one, run as
 * deploy/sidecar/capi makes it: on the workload API server as the service account of rbac.yaml,
 * on the management API server as the service account of management-rbac.yaml, each holding
 * exactly those rules. Every authorization decision either server makes for it is recorded: a
 * refusal means deploy/ grants too little, a grant never used means it grants too much.
 */
describe('Cluster API: the sidecar RBAC in deploy/sidecar/capi is exactly what the sidecar uses, on both API servers', () => {
  let h: CapiHarness;
  let provider: ClusterApiProviderSimulator;
  let original: Record<string, Record<string, string> | undefined>;

  const fleetMachineDeployments = () =>
    h.pair.management
      .list(V1B1, 'MachineDeployment', NS)
      .filter((md) => md.metadata?.labels?.[OWNED]);
  const workerAnnotations = () =>
    Object.fromEntries(
      [
        ...h.pair.management.list(V1B1, 'MachineDeployment', NS),
        ...h.pair.management.list(V1B1, 'MachineSet', NS),
      ]
        .filter((g) => !g.metadata?.labels?.[OWNED])
        .map((g) => [`${g.kind}/${g.metadata?.name}`, g.metadata?.annotations]),
    );
  const condition = (type: string) =>
    h.runtime.lastResult()?.result.conditions.find((c) => c.type === type);
  const refused = () => ({
    workload: h.sidecar!.workload.access.refused(),
    management: h.sidecar!.management.access.refused(),
  });
  const enabled = (mode: 'DISABLE' | 'KEEP') =>
    h.order({ enabled: true, clusterAutoscalerMode: mode, nodePools: [GENERAL_NODEPOOL] });

  beforeAll(async () => {
    const management = capiRbac('management-rbac.yaml');
    const sa = management.find((d) => d.kind === 'ServiceAccount')!;
    h = await startCapiHarness({
      requeueMs: 1_000,
      rbac: {
        workload: capiRbac('rbac.yaml'),
        management,
        managementServiceAccount: {
          namespace: sa.metadata!.namespace!,
          name: sa.metadata!.name!,
        },
      },
    });
    // A workload cluster that never had Karpenter: the sidecar installs the CRDs itself.
    for (const crd of KARPENTER_CRDS)
      h.pair.workload.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd);
    h.pair.management.create(STANDALONE_MACHINE_SET);
    provider = new ClusterApiProviderSimulator(h.pair);
    original = workerAnnotations();
    expect(original[`MachineSet/${STANDALONE_MACHINE_SET.metadata.name}`]).toEqual({
      [MIN]: '0',
      [MAX]: '4',
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("deploy/'s management service account lives in the Cluster's namespace", () => {
    expect(h.sidecar!.management.user).toBe(`system:serviceaccount:${NS}:karpenter-fleet-sidecar`);
  });

  it('enables (DISABLE), launches a node, KEEP, DISABLE, disables, enables again and deletes the Cluster: nothing refused on either API server, nothing granted in vain', async () => {
    // First order: nothing enabled.
    await h.runtime.apply(h.order({}));
    // Enable with the Cluster Autoscaler to be taken out of play once Karpenter is ready.
    await h.runtime.apply(enabled('DISABLE'));
    expect(condition('Degraded')).toMatchObject({ status: 'False' });
    expect(fleetMachineDeployments()).toHaveLength(3);
    // The binding the sidecar gave itself in the operand namespace (gone with the namespace).
    const access = h.pair.workload.get(...BINDING, CAPI_OPERAND_NAMESPACE);
    expect(access).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'karpenter-fleet-sidecar-operand' },
      subjects: [
        { kind: 'ServiceAccount', name: 'karpenter-fleet-sidecar', namespace: 'karpenter-fleet' },
      ],
    });
    h.pair.workload.setDeploymentAvailable(CAPI_OPERAND_NAMESPACE, CAPI_OPERAND_NAME);
    provider.markNodeClassReady();
    await h.runtime.apply(enabled('DISABLE'));
    expect(condition('ClusterAutoscalerDisabled')).toMatchObject({
      status: 'True',
      reason: 'NodeGroupSizesRemoved',
    });
    for (const annotations of Object.values(workerAnnotations())) {
      expect(annotations?.[MIN]).toBeUndefined();
      expect(annotations?.[MAX]).toBeUndefined();
    }
    expect(h.pair.management.get('v1', 'ConfigMap', NODE_GROUP_SIZES_BACKUP, NS)).toBeDefined();

    // A node through the provider: its CSRs approved from the Machine's identity, the Node joins.
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
    const launched = provider.launch('general', 'c6i.2xlarge', 'us-east-1a');
    const kubelet = new NodeLaunchSimulator({ kube: h.pair.workload, ec2: h.pair.ec2 });
    await kubelet.approved(kubelet.submitCsr(launched.nodeName, 'client'));
    provider.registerNode(launched, 'general');
    const serving = kubelet.submitCsr(launched.nodeName, 'serving');
    await kubelet.approved(serving);
    expect(h.pair.workload.get(...CSR, serving)?.status).toMatchObject({
      conditions: [expect.objectContaining({ type: 'Approved' })],
    });
    expect(h.pair.workload.get('v1', 'Node', launched.nodeName)).toBeDefined();
    await h.runtime.idle();
    // A report: the metrics come from the watch caches.
    expect((await h.runtime.snapshot())?.metrics).toMatchObject({ nodes: expect.any(Number) });

    // KEEP: every annotation back exactly, the copy dropped; then DISABLE once more.
    await h.runtime.apply(enabled('KEEP'));
    expect(workerAnnotations()).toEqual(original);
    expect(h.pair.management.get('v1', 'ConfigMap', NODE_GROUP_SIZES_BACKUP, NS)).toBeUndefined();
    await h.runtime.apply(enabled('DISABLE'));
    expect(condition('ClusterAutoscalerDisabled')).toMatchObject({ status: 'True' });

    // Disable: NodePools, then (once Karpenter's NodeClaims are gone) the MachineDeployments,
    // the operand last, and the Cluster Autoscaler's groups back.
    await h.runtime.apply(h.order({ enabled: false, clusterAutoscalerMode: 'KEEP' }));
    for (const claim of h.pair.workload.list('karpenter.sh/v1', 'NodeClaim'))
      h.pair.workload.delete('karpenter.sh/v1', 'NodeClaim', claim.metadata!.name!);
    await until(
      () =>
        condition('Available')?.reason === 'KarpenterDisabled' &&
        fleetMachineDeployments().length === 0 &&
        !h.pair.workload.get('apps/v1', 'Deployment', CAPI_OPERAND_NAME, CAPI_OPERAND_NAMESPACE)
          ? true
          : undefined,
      'Karpenter to be disabled',
      30_000,
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)}; conditions ${JSON.stringify(h.runtime.lastResult()?.result.conditions)}; refused ${JSON.stringify(refused())}`,
      );
    });
    await h.runtime.idle();
    expect(workerAnnotations()).toEqual(original);
    expect(h.pair.workload.get(...BINDING, CAPI_OPERAND_NAMESPACE)).toBeUndefined();

    // Enabled again, with a NodeClaim, and the Cluster deleted: the finalizer the sidecar holds
    // lets the Cluster go only once NodePools, NodeClaims and the MachineDeployments are gone.
    await h.runtime.apply(enabled('KEEP'));
    h.pair.workload.setDeploymentAvailable(CAPI_OPERAND_NAMESPACE, CAPI_OPERAND_NAME);
    provider.markNodeClassReady();
    await h.runtime.watches.nodeClaims.whenSynced();
    const claimed = provider.launch('general', 'c6i.2xlarge', 'us-east-1a');
    h.pair.management.delete('cluster.x-k8s.io/v1beta1', 'Cluster', NS, NS);
    await until(
      () =>
        !h.pair.management.get('cluster.x-k8s.io/v1beta1', 'Cluster', NS, NS) &&
        !h.pair.workload.get('karpenter.sh/v1', 'NodeClaim', claimed.nodeClaim) &&
        fleetMachineDeployments().length === 0
          ? true
          : undefined,
      'the Cluster to be cleaned up and deleted',
      30_000,
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)}; conditions ${JSON.stringify(h.runtime.lastResult()?.result.conditions)}; refused ${JSON.stringify(refused())}`,
      );
    });

    const granted = {
      workload: grantedPermissions([...capiRbac('rbac.yaml'), access!], h.sidecar!.workload.user),
      management: grantedPermissions(capiRbac('management-rbac.yaml'), h.sidecar!.management.user),
    };
    expect(granted.workload.length).toBeGreaterThan(0);
    expect(granted.management.length).toBeGreaterThan(0);
    if (process.env.PRINT_RBAC_USAGE)
      for (const side of ['workload', 'management'] as const)
        console.log(`${side}:\n${h.sidecar![side].access.used().sort().join('\n')}`);
    expect({ refused: refused() }).toEqual({ refused: { workload: [], management: [] } });
    expect({
      unused: {
        workload: h.sidecar!.workload.access.unused(granted.workload),
        management: h.sidecar!.management.access.unused(granted.management),
      },
    }).toEqual({ unused: { workload: [], management: [] } });
  }, 120_000);
});
