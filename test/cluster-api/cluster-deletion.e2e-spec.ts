import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CAPI_OPERAND_NAME,
  CAPI_OPERAND_NAMESPACE,
  CLUSTER_CLEANUP_FINALIZER,
} from '@fleet/cloud-provider';
import { CAPI_CLUSTER } from '../support/capi-aws-workload.js';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startCapiHarness, until, type CapiHarness } from './harness.js';
import { ClusterApiProviderSimulator, type LaunchedMachine } from './provider-simulator.js';

const V1B1 = 'cluster.x-k8s.io/v1beta1';
const TEMPLATES = 'infrastructure.cluster.x-k8s.io/v1beta2';
const NODECLAIM = 'karpenter.sh/v1';
const NS = CAPI_CLUSTER.namespace;
const OWNED = 'fleet.karpenter.sh/managed-by';
const TERMINATION = 'karpenter.sh/termination';
const DELETE_MACHINE = 'cluster.x-k8s.io/delete-machine';

/**
 * Deleting the workload Cluster on the management cluster: the sidecar's finalizer holds it
 * while Karpenter removes, in order, the NodePools, the NodeClaims (the provider deletes their
 * Machines), then the fleet's MachineDeployments and templates; then the finalizer goes and the
 * Cluster with it. The order is read from the watch events of both API servers.
 */
describe('Cluster API: deleting the workload Cluster (two API servers)', () => {
  let h: CapiHarness;
  let provider: ClusterApiProviderSimulator;
  const events: string[] = [];
  const offs: (() => void)[] = [];
  const enabled = {
    enabled: true,
    clusterAutoscalerMode: 'KEEP' as const,
    nodePools: [GENERAL_NODEPOOL],
  };
  const cluster = () => h.pair.management.get(V1B1, 'Cluster', CAPI_CLUSTER.name, NS);
  const fleet = (apiVersion: string, kind: string) =>
    h.pair.management.list(apiVersion, kind, NS).filter((o) => o.metadata?.labels?.[OWNED]);
  const workers = () =>
    h.pair.management
      .list(V1B1, 'MachineDeployment', NS)
      .filter((o) => !o.metadata?.labels?.[OWNED])
      .map((o) => o.metadata?.name)
      .sort();
  const conditions = () => h.runtime.lastResult()?.result.conditions ?? [];
  const at = (what: string, from = 0) => events.findIndex((e, i) => i >= from && e === what);
  const lastAt = (prefix: string) => events.findLastIndex((e) => e.startsWith(prefix));
  const firstAt = (prefix: string, from = 0) =>
    events.findIndex((e, i) => i >= from && e.startsWith(prefix));

  beforeAll(async () => {
    h = await startCapiHarness({ requeueMs: 500 });
    provider = new ClusterApiProviderSimulator(h.pair);
    const record =
      (server: 'management' | 'workload', apiVersion: string, kind: string, owned = false) =>
      () =>
        h.pair[server].watch(apiVersion, kind, (type, o: KubeObject) => {
          if (owned && !o.metadata?.labels?.[OWNED]) return;
          const name = `${kind}/${o.metadata?.name}`;
          if (type === 'DELETED') events.push(`-${name}`);
          else if (type === 'ADDED') events.push(`+${name}`);
          else if (o.metadata?.deletionTimestamp && !events.includes(`~${name}`))
            events.push(`~${name}`);
        });
    for (const start of [
      record('management', V1B1, 'Cluster'),
      record('management', V1B1, 'MachineDeployment', true),
      record('management', TEMPLATES, 'AWSMachineTemplate', true),
      record('management', V1B1, 'Machine'),
      record('workload', NODECLAIM, 'NodePool'),
      record('workload', NODECLAIM, 'NodeClaim'),
      record('workload', 'apps/v1', 'Deployment'),
    ])
      offs.push(start());
  });
  afterAll(async () => {
    for (const off of offs) off();
    await h?.stop();
  });

  it('holds the finalizer while Karpenter is enabled, by a patch of metadata.finalizers alone, and lets go once disabling has removed everything', async () => {
    const before = cluster()!;
    await h.runtime.apply(h.order(enabled));
    expect(conditions()).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Degraded', status: 'False' })]),
    );
    const held = cluster()!;
    expect(held.metadata?.finalizers).toEqual([CLUSTER_CLEANUP_FINALIZER]);
    // The Cluster's spec is not rewritten (no new generation, same content).
    expect(held.spec).toEqual(before.spec);
    expect(held.metadata?.generation).toBe(before.metadata?.generation);
    expect(fleet(V1B1, 'MachineDeployment')).toHaveLength(3);

    // Disabling Karpenter (no NodeClaim to wait for): everything goes, then the finalizer.
    const result = await h.runtime.apply(h.order({ ...enabled, enabled: false }));
    expect(result.requeue).toBe(false);
    expect(fleet(V1B1, 'MachineDeployment')).toEqual([]);
    expect(cluster()?.metadata?.finalizers ?? []).toEqual([]);
  });

  let launched: LaunchedMachine;
  it('enabled again: the finalizer is back and a node joins through the provider', async () => {
    await h.runtime.apply(h.order(enabled));
    expect(cluster()?.metadata?.finalizers).toEqual([CLUSTER_CLEANUP_FINALIZER]);
    h.pair.workload.setDeploymentAvailable(CAPI_OPERAND_NAMESPACE, CAPI_OPERAND_NAME);
    provider.markNodeClassReady();
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
    launched = provider.launch('general', 'c6i.2xlarge', 'us-east-1b');
    // Karpenter's termination finalizer: the NodeClaim stays until Karpenter has let its node go.
    h.pair.workload.patch(NODECLAIM, 'NodeClaim', launched.nodeClaim, undefined, {
      metadata: { finalizers: [TERMINATION] },
    });
    const kubelet = new NodeLaunchSimulator({ kube: h.pair.workload, ec2: h.pair.ec2 });
    await kubelet.approved(kubelet.submitCsr(launched.nodeName, 'client'));
    provider.registerNode(launched, 'general');
    await kubelet.approved(kubelet.submitCsr(launched.nodeName, 'serving'));
    expect(h.pair.workload.get('v1', 'Node', launched.nodeName)).toBeDefined();
  });

  it('deleting the Cluster: NodePools, then NodeClaims (and their Machines), then the MachineDeployments and templates, then the finalizer; an order meanwhile re-applies nothing', async () => {
    const steps: string[] = [];
    h.runtime.onChange(() => {
      const reason = conditions().find(
        (c) => c.type === 'Progressing' && c.status === 'True',
      )?.reason;
      if (reason && steps.at(-1) !== reason) steps.push(reason);
    });
    const workersBefore = workers();
    const mark = events.length;
    const name = `Cluster/${CAPI_CLUSTER.name}`;
    h.pair.management.delete(V1B1, 'Cluster', CAPI_CLUSTER.name, NS);
    // Held by the finalizer: marked for deletion, still there.
    expect(cluster()?.metadata?.deletionTimestamp).toBeDefined();

    // Without a new order: the NodePool goes and the NodeClaim (which has no owner the garbage
    // collector would follow here) is deleted; Karpenter's finalizer keeps it for now.
    await until(
      () =>
        h.pair.workload.get(NODECLAIM, 'NodeClaim', launched.nodeClaim)?.metadata
          ?.deletionTimestamp,
      'the NodeClaim to be deleted',
    );
    expect(h.pair.workload.list(NODECLAIM, 'NodePool')).toEqual([]);
    await until(
      () =>
        conditions().find((c) => c.type === 'Progressing' && c.reason === 'WaitingForNodeClaims'),
      'WaitingForNodeClaims',
    );
    expect(conditions().find((c) => c.type === 'Available')).toMatchObject({
      status: 'False',
      reason: 'ClusterDeleting',
    });
    // The MachineDeployments stay while a NodeClaim needs one of them.
    expect(fleet(V1B1, 'MachineDeployment')).toHaveLength(3);

    // A new order arriving now (enabled, even) applies nothing for a deleting Cluster.
    const created = events.length;
    const meanwhile = await h.runtime.apply(h.order({ ...enabled, logLevel: 'debug' }));
    expect(meanwhile.applied).toBe(0);
    expect(h.pair.workload.list(NODECLAIM, 'NodePool')).toEqual([]);
    expect(events.slice(created).filter((e) => e.startsWith('+'))).toEqual([]);
    expect(cluster()?.metadata?.finalizers).toEqual([CLUSTER_CLEANUP_FINALIZER]);

    // Karpenter's termination, as karpenter-provider-cluster-api does it: the Machine is marked
    // for deletion and its MachineDeployment scaled down (CAPI deletes that Machine), the Node
    // goes, then Karpenter's finalizer.
    const machine = h.pair.management
      .list(V1B1, 'Machine', NS)
      .find((m) => m.metadata?.name === launched.machine)!;
    h.pair.management.patch(V1B1, 'Machine', launched.machine, NS, {
      metadata: { annotations: { [DELETE_MACHINE]: new Date().toISOString() } },
    });
    expect(machine).toBeDefined();
    h.pair.management.patch(V1B1, 'MachineDeployment', launched.machineDeployment, NS, {
      spec: { replicas: 0 },
    });
    h.pair.management.delete(V1B1, 'Machine', launched.machine, NS);
    h.pair.workload.delete('v1', 'Node', launched.nodeName);
    h.pair.workload.patch(NODECLAIM, 'NodeClaim', launched.nodeClaim, undefined, {
      metadata: { finalizers: null },
    });

    await until(() => (cluster() ? undefined : true), 'the Cluster to be gone', 20_000);
    expect(fleet(V1B1, 'MachineDeployment')).toEqual([]);
    expect(fleet(TEMPLATES, 'AWSMachineTemplate')).toEqual([]);
    // The SRE's own worker groups are not the fleet's to delete (CAPI deletes them with the
    // Cluster's descendants).
    expect(workers()).toEqual(workersBefore);

    // The order, from the watch events of both API servers.
    const deleting = at(`~${name}`, mark);
    const nodePool = at('-NodePool/general', mark);
    const nodeClaim = at(`-NodeClaim/${launched.nodeClaim}`, mark);
    const firstMachineDeployment = firstAt('-MachineDeployment/', mark);
    const lastMachineDeployment = lastAt('-MachineDeployment/');
    const firstTemplate = firstAt('-AWSMachineTemplate/', mark);
    const gone = at(`-${name}`, mark);
    const machineGone = at(`-Machine/${launched.machine}`, mark);
    for (const i of [
      deleting,
      nodePool,
      nodeClaim,
      machineGone,
      firstMachineDeployment,
      firstTemplate,
      gone,
    ])
      expect(i).toBeGreaterThanOrEqual(mark);
    expect(deleting).toBeLessThan(nodePool);
    expect(nodePool).toBeLessThan(at(`~NodeClaim/${launched.nodeClaim}`, mark));
    expect(machineGone).toBeLessThan(nodeClaim);
    expect(nodeClaim).toBeLessThan(firstMachineDeployment);
    expect(firstTemplate).toBeGreaterThan(nodeClaim);
    expect(lastMachineDeployment).toBeLessThan(gone);
    expect(lastAt('-AWSMachineTemplate/')).toBeLessThan(gone);
    expect(at(`-Deployment/${CAPI_OPERAND_NAME}`, mark)).toBeLessThan(gone);
    expect(steps).toEqual(
      expect.arrayContaining(['DeletingNodePools', 'WaitingForNodeClaims', 'RemovingOperand']),
    );
    expect(steps.indexOf('DeletingNodePools')).toBeLessThan(steps.indexOf('RemovingOperand'));
    await h.runtime.idle();
    expect(conditions().find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ClusterDeleting',
    });
  });
});
