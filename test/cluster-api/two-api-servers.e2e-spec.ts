import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CAPI_OPERAND_NAME,
  CAPI_OPERAND_NAMESPACE,
  OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
  NODE_GROUP_SIZES_BACKUP,
} from '@fleet/cloud-provider';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { RequestLogEntry } from '@fleet/testing';
import { CAPI_CLUSTER } from '../support/capi-aws-workload.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startCapiHarness, until, type CapiHarness } from './harness.js';
import { ClusterApiProviderSimulator } from './provider-simulator.js';

const V1B1 = 'cluster.x-k8s.io/v1beta1';
const NS = CAPI_CLUSTER.namespace;
const MIN = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const MAX = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
const CSR = ['certificates.k8s.io/v1', 'CertificateSigningRequest'] as const;
const ALLOWED = ['c6i.2xlarge', 'm6i.xlarge'];

describe('Cluster API: a workload cluster of a separate management cluster (two API servers + EC2)', () => {
  let h: CapiHarness;
  let provider: ClusterApiProviderSimulator;
  let original: Record<string, Record<string, string> | undefined>;

  const fleetMachineDeployments = () =>
    h.pair.management
      .list(V1B1, 'MachineDeployment', NS)
      .filter((md) => md.metadata?.labels?.['fleet.karpenter.sh/managed-by']);
  const workerAnnotations = () =>
    Object.fromEntries(
      [
        ...h.pair.management.list(V1B1, 'MachineDeployment', NS),
        ...h.pair.management.list(V1B1, 'MachineSet', NS),
      ]
        .filter((g) => !g.metadata?.labels?.['fleet.karpenter.sh/managed-by'])
        .map((g) => [`${g.kind}/${g.metadata?.name}`, g.metadata?.annotations]),
    );
  const condition = (type: string) =>
    h.runtime.lastResult()?.result.conditions.find((c) => c.type === type);

  beforeAll(async () => {
    h = await startCapiHarness();
    provider = new ClusterApiProviderSimulator(h.pair);
    original = workerAnnotations();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('enable with DISABLE: MachineDeployments per allowed type and zone on the management cluster, the operand and default ClusterAPINodeClass on the workload; the Cluster Autoscaler keeps its groups until Karpenter is ready', async () => {
    const result = await h.runtime.apply(
      h.order({
        enabled: true,
        clusterAutoscalerMode: 'DISABLE',
        nodePools: [GENERAL_NODEPOOL],
        allowedInstanceTypes: ALLOWED,
      }),
    );
    expect(condition('Degraded')).toMatchObject({ status: 'False' });
    expect(result.applied).toBeGreaterThan(0);
    const mds = fleetMachineDeployments();
    const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
    expect(mds.map((md) => md.metadata?.name).sort()).toEqual(
      ALLOWED.flatMap((t) =>
        zones.map((z) => `${CAPI_CLUSTER.name}-karpenter-${t.replace('.', '-')}-${z}`),
      ).sort(),
    );
    for (const md of mds) {
      expect((md.spec as { replicas: number }).replicas).toBe(0);
      const annotations = md.metadata?.annotations ?? {};
      expect(annotations[MIN]).toBeUndefined();
      expect(annotations[MAX]).toBeUndefined();
    }
    const m6i = mds.find((md) => md.metadata?.name?.endsWith('m6i-xlarge-us-east-1b'))!;
    expect(m6i.metadata?.annotations).toEqual({
      'capacity.cluster-autoscaler.kubernetes.io/cpu': '4',
      'capacity.cluster-autoscaler.kubernetes.io/memory': '16384Mi',
      'capacity.cluster-autoscaler.kubernetes.io/maxPods': '110',
      'capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk': expect.stringMatching(/^\d+Gi$/),
      'capacity.cluster-autoscaler.kubernetes.io/labels':
        'topology.kubernetes.io/zone=us-east-1b,node.kubernetes.io/instance-type=m6i.xlarge,kubernetes.io/arch=amd64,kubernetes.io/os=linux',
    });
    // Capacities came from EC2, not a table.
    expect(
      h.pair.ec2.requestLog.filter((r) => r.action === 'DescribeInstanceTypes').length,
    ).toBeGreaterThan(0);
    expect(
      h.pair.workload.get('apps/v1', 'Deployment', CAPI_OPERAND_NAME, CAPI_OPERAND_NAMESPACE),
    ).toBeDefined();
    expect(
      h.pair.management.get('apps/v1', 'Deployment', CAPI_OPERAND_NAME, CAPI_OPERAND_NAMESPACE),
    ).toBeUndefined();
    expect(
      h.pair.workload.get('karpenter.cluster.x-k8s.io/v1alpha1', 'ClusterAPINodeClass', 'default')
        ?.spec,
    ).toEqual({
      scalableResourceSelector: {
        matchLabels: {
          'fleet.karpenter.sh/karpenter-node-group': NS,
          'cluster.x-k8s.io/cluster-name': CAPI_CLUSTER.name,
        },
      },
    });
    // Karpenter is not up yet: the worker groups keep their size annotations.
    expect(workerAnnotations()).toEqual(original);
    expect(condition('ClusterAutoscalerDisabled')).toMatchObject({
      status: 'False',
      reason: 'WaitingForKarpenter',
    });
  });

  it("the operand reaches the management cluster as its own ServiceAccount: a kubeconfig Secret on the workload cluster, with exactly the chart's rights", async () => {
    const secret = h.pair.workload.get(
      'v1',
      'Secret',
      OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
      CAPI_OPERAND_NAMESPACE,
    );
    const data = secret?.data as Record<string, string> | undefined;
    expect(Object.keys(data ?? {}).sort()).toEqual(['expires-at', 'kubeconfig']);
    const kc = new KubeConfig();
    kc.loadFromString(Buffer.from(data!.kubeconfig!, 'base64').toString('utf8'));
    const api = kc.makeApiClient(CustomObjectsApi);
    const mds = (await api.listNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: NS,
      plural: 'machinedeployments',
    })) as { items: unknown[] };
    expect(mds.items.length).toBeGreaterThan(0);
    await expect(
      api.deleteNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta1',
        namespace: NS,
        plural: 'machinedeployments',
        name: fleetMachineDeployments()[0]!.metadata!.name!,
      }),
    ).rejects.toMatchObject({ code: 403 });
    // Applying again keeps the token (it is renewed only once half its lifetime is gone).
    await h.runtime.apply(
      h.order({
        enabled: true,
        clusterAutoscalerMode: 'DISABLE',
        nodePools: [GENERAL_NODEPOOL],
        allowedInstanceTypes: ALLOWED,
      }),
    );
    expect(
      h.pair.workload.get(
        'v1',
        'Secret',
        OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
        CAPI_OPERAND_NAMESPACE,
      )?.data,
    ).toEqual(data);
  });

  it('once Karpenter is ready, DISABLE removes the size annotations from the worker groups only, with an exact copy on the management side', async () => {
    h.pair.workload.setDeploymentAvailable(CAPI_OPERAND_NAMESPACE, CAPI_OPERAND_NAME);
    provider.markNodeClassReady();
    await h.runtime.apply(
      h.order({
        enabled: true,
        clusterAutoscalerMode: 'DISABLE',
        nodePools: [GENERAL_NODEPOOL],
        allowedInstanceTypes: ALLOWED,
      }),
    );
    expect(condition('ClusterAutoscalerDisabled')).toMatchObject({
      status: 'True',
      reason: 'NodeGroupSizesRemoved',
    });
    for (const annotations of Object.values(workerAnnotations())) {
      expect(annotations?.[MIN]).toBeUndefined();
      expect(annotations?.[MAX]).toBeUndefined();
    }
    expect(h.pair.management.get('v1', 'ConfigMap', NODE_GROUP_SIZES_BACKUP, NS)).toBeDefined();
  });

  it('a NodeClaim: the provider picks a MachineDeployment by the ClusterAPINodeClass selector only, scales it, a Machine appears, its CSRs are approved and the Node joins; a later apply leaves replicas to Karpenter', async () => {
    // The SRE's worker MachineDeployments carry capacity annotations too, but no selector label.
    const candidates = provider.candidates().map((md) => md.metadata?.name);
    expect(candidates.sort()).toEqual(
      fleetMachineDeployments()
        .map((md) => md.metadata?.name)
        .sort(),
    );
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
    const launched = provider.launch('general', 'm6i.xlarge', 'us-east-1a');
    const kubelet = new NodeLaunchSimulator({ kube: h.pair.workload, ec2: h.pair.ec2 });
    const client = kubelet.submitCsr(launched.nodeName, 'client');
    await kubelet.approved(client);
    provider.registerNode(launched, 'general');
    const serving = kubelet.submitCsr(launched.nodeName, 'serving');
    await kubelet.approved(serving);
    expect(h.pair.workload.get(...CSR, serving)?.status).toMatchObject({
      conditions: [expect.objectContaining({ type: 'Approved', reason: 'KarpenterCSRApprove' })],
    });
    expect(h.pair.workload.get('v1', 'Node', launched.nodeName)).toBeDefined();

    // The fleet applies its MachineDeployments again: Karpenter's replica count stays.
    await h.runtime.apply(
      h.order({
        enabled: true,
        clusterAutoscalerMode: 'DISABLE',
        nodePools: [GENERAL_NODEPOOL],
        allowedInstanceTypes: ALLOWED,
      }),
    );
    expect(
      (
        h.pair.management.get(V1B1, 'MachineDeployment', launched.machineDeployment, NS)?.spec as {
          replicas: number;
        }
      ).replicas,
    ).toBe(1);
  });

  it('a CSR for a node no fleet Machine has is never approved', async () => {
    const kubelet = new NodeLaunchSimulator({ kube: h.pair.workload, ec2: h.pair.ec2 });
    const csr = kubelet.submitCsr('ip-10-9-9-9.ec2.internal', 'client');
    await until(
      () =>
        h.runtime.approver.unsentDecisions().find((d) => d.csrName === csr) ? true : undefined,
      `${csr} decided`,
    );
    expect(h.pair.workload.get(...CSR, csr)?.status ?? {}).not.toMatchObject({
      conditions: [expect.objectContaining({ type: 'Approved' })],
    });
  });

  it('KEEP gives the Cluster Autoscaler every annotation back exactly and drops the copy', async () => {
    await h.runtime.apply(
      h.order({
        enabled: true,
        clusterAutoscalerMode: 'KEEP',
        nodePools: [GENERAL_NODEPOOL],
        allowedInstanceTypes: ALLOWED,
      }),
    );
    expect(workerAnnotations()).toEqual(original);
    expect(h.pair.management.get('v1', 'ConfigMap', NODE_GROUP_SIZES_BACKUP, NS)).toBeUndefined();
  });

  it('an unknown instance type is refused naming the field, and nothing changes', async () => {
    const before = fleetMachineDeployments().length;
    await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        allowedInstanceTypes: ['m6i.xlarge', 'z9.nonexistent'],
      }),
    );
    expect(condition('Degraded')).toMatchObject({
      status: 'True',
      reason: 'InstanceTypeNotOffered',
      message: expect.stringMatching(/^allowedInstanceTypes: .*z9\.nonexistent/),
    });
    expect(fleetMachineDeployments()).toHaveLength(before);
  });
});

describe('Cluster API: MachineDeploymentsDenied (a real ValidatingAdmissionPolicy on the management cluster)', () => {
  let h: CapiHarness;
  const VAP = 'admissionregistration.k8s.io/v1';
  const POLICY = 'deny-machinedeployments';

  beforeAll(async () => {
    h = await startCapiHarness();
    h.pair.management.seed([
      {
        apiVersion: VAP,
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: POLICY },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: ['cluster.x-k8s.io'],
                apiVersions: ['*'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['machinedeployments'],
              },
            ],
          },
          validations: [
            {
              expression: `object.metadata.namespace != '${NS}'`,
              message: `MachineDeployments are not supported in ${NS}`,
            },
          ],
        },
      },
      {
        apiVersion: VAP,
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: POLICY },
        spec: { policyName: POLICY, validationActions: ['Deny'] },
      },
    ]);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('reports MachineDeploymentsDenied quoting the policy and binding, writes nothing; once the binding is gone the next order proceeds', async () => {
    const writes: RequestLogEntry[] = [];
    const record = (e: RequestLogEntry) => {
      if (e.method !== 'GET' && !e.query.includes('dryRun=All')) writes.push(e);
    };
    const offs = [h.pair.management.onRequest(record), h.pair.workload.onRequest(record)];
    const order = () =>
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'DISABLE' });
    await h.runtime.apply(order());
    for (const off of offs) off();
    const degraded = h.runtime.lastResult()?.result.conditions.find((c) => c.type === 'Degraded');
    expect(degraded).toMatchObject({
      status: 'True',
      reason: 'MachineDeploymentsDenied',
      message: expect.stringContaining(
        `ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request`,
      ),
    });
    // Only the CRDs (installed before any order is looked at) were written.
    expect(
      writes.filter((w) => !w.path.includes('/customresourcedefinitions')).map((w) => w.path),
    ).toEqual([]);
    expect(h.pair.management.list(V1B1, 'MachineDeployment', NS).length).toBe(3);

    h.pair.management.delete(VAP, 'ValidatingAdmissionPolicyBinding', POLICY);
    await h.runtime.apply(order());
    expect(
      h.runtime.lastResult()?.result.conditions.find((c) => c.type === 'Degraded'),
    ).toMatchObject({ status: 'False' });
    expect(
      h.pair.management
        .list(V1B1, 'MachineDeployment', NS)
        .filter((md) => md.metadata?.labels?.['fleet.karpenter.sh/managed-by']).length,
    ).toBe(3);
  });
});
