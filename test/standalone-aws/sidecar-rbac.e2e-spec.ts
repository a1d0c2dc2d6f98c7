import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { deployDocuments } from '../support/deploy-manifests.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { grantedPermissions } from '../support/rbac-usage.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

const CSR = ['certificates.k8s.io/v1', 'CertificateSigningRequest'] as const;
const NODE_CLASS = ['karpenter.k8s.aws/v1', 'EC2NodeClass'] as const;
const BINDING = ['rbac.authorization.k8s.io/v1', 'RoleBinding', 'karpenter-fleet-sidecar'] as const;
const KARPENTER_CRDS = [
  'nodepools.karpenter.sh',
  'nodeclaims.karpenter.sh',
  'ec2nodeclasses.karpenter.k8s.aws',
  'nodeoverlays.karpenter.sh',
  'capacitybuffers.autoscaling.x-k8s.io',
];
const approved = (h: Harness, name: string) =>
  (
    h.cluster.kube.get(...CSR, name)?.status as { conditions?: { type: string }[] } | undefined
  )?.conditions?.some((c) => c.type === 'Approved');

/**
 * The sidecar's whole life on one cluster, with every authorization decision the API server
 * makes for its service account recorded: what it was refused means deploy/ grants too little,
 * what it never used means deploy/ grants too much.
 */
describe('standalone AWS: the sidecar RBAC in deploy/ is exactly what the sidecar uses', () => {
  let h: Harness;
  let sim: NodeLaunchSimulator;

  beforeAll(async () => {
    h = await startHarness({ requeueMs: 1_000 });
    // A cluster that never had Karpenter: the sidecar installs the CRDs itself.
    for (const crd of KARPENTER_CRDS)
      h.cluster.kube.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd);
  });
  afterAll(async () => {
    sim?.stop();
    await h?.stop();
  });

  it('enables, approves, enforces, disables: nothing refused, nothing granted in vain', async () => {
    // A cluster behind a proxy with its own CA: the operand's trusted CA bundle is written.
    const proxy = h.cluster.kube.create({
      apiVersion: 'config.openshift.io/v1',
      kind: 'Proxy',
      metadata: { name: 'cluster' },
      spec: { httpsProxy: 'http://proxy.corp.example.com:3128', trustedCA: { name: 'user-ca' } },
    });
    h.cluster.kube.updateStatus({
      ...proxy,
      status: { httpsProxy: 'http://proxy.corp.example.com:3128', noProxy: '.svc' },
    });
    // First order: the ClusterOperator, nothing enabled.
    await h.runtime.apply(h.order({}));
    // Enable with the Cluster Autoscaler removed, a node launched and its CSRs approved.
    // Kubelet settings too, so the pools' KubeletConfigs are written and pruned.
    await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        clusterAutoscalerMode: 'DISABLE',
        nodeClassOverrides: { kubelet: { maxPods: 50 } },
      }),
    );
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    // Karpenter (played by the simulator) once its CRDs are there.
    sim = new NodeLaunchSimulator({
      kube: h.cluster.kube,
      ec2: h.cluster.ec2,
      terminationDelayMs: 300,
    }).start();
    // The binding the sidecar gave itself in the operand namespace (gone with the namespace).
    const access = h.cluster.kube.get(...BINDING, OPERAND_NAMESPACE);
    expect(access).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'karpenter-fleet-sidecar-operand' },
      subjects: [
        { kind: 'ServiceAccount', name: 'karpenter-fleet-sidecar', namespace: 'karpenter-fleet' },
      ],
    });
    // Karpenter makes its NodeClass Ready: only now is the Cluster Autoscaler removed.
    sim.markNodeClassReady('default');
    await until(
      () =>
        h.cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default')
          ? undefined
          : true,
      'the Cluster Autoscaler to be removed',
    );
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
    const node = await sim.launch('general');
    await until(
      () => approved(h, node.clientCsr) && approved(h, node.servingCsr),
      'both CSRs approved',
    );
    // A user's NodeClass gets the enforced fields.
    h.cluster.kube.create({
      apiVersion: NODE_CLASS[0],
      kind: NODE_CLASS[1],
      metadata: { name: 'users' },
      spec: {
        amiFamily: 'AL2023',
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        role: 'KarpenterNodeRole',
        subnetSelectorTerms: [{ tags: { team: 'a' } }],
        securityGroupSelectorTerms: [{ tags: { team: 'a' } }],
      },
    });
    await until(
      () =>
        (h.cluster.kube.get(...NODE_CLASS, 'users')?.spec as { amiFamily?: string }).amiFamily ===
        'Custom',
      'the user NodeClass enforced',
    );
    // The proxy's CA removed: the bundle is pruned, by the watch on the Proxy alone.
    h.cluster.kube.update({
      ...h.cluster.kube.get('config.openshift.io/v1', 'Proxy', 'cluster')!,
      spec: {},
    });
    await until(
      () =>
        !h.cluster.kube.get('v1', 'ConfigMap', 'trusted-ca-bundle', OPERAND_NAMESPACE) || undefined,
      'the trusted CA bundle pruned',
    );
    await h.runtime.idle();
    // A report: metrics read Nodes and pending Pods.
    expect((await h.runtime.snapshot())?.metrics).toMatchObject({ nodes: expect.any(Number) });
    // Disable: NodePools, NodeClaims, NodeClasses, operand, and the Cluster Autoscaler back.
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

    expect(h.cluster.kube.get(...BINDING, OPERAND_NAMESPACE)).toBeUndefined();
    const granted = grantedPermissions(
      [
        ...deployDocuments()
          .filter((f) => f.file === 'sidecar/standalone/rbac.yaml')
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
