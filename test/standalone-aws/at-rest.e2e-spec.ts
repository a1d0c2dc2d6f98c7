import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import { eventually } from '@fleet/testing';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

/**
 * A sidecar at rest asks its API server for nothing but its watches: every report's counts
 * (Nodes, NodePools, pending Pods, NodeClaims) and the Cluster Autoscaler's state come from
 * caches, and the caches follow the cluster, so a report is never stale for being cheap.
 */
describe('standalone AWS: a sidecar at rest', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ requeueMs: 500 });
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'KEEP' }),
    );
    expect(result.conditions.find((c) => c.type === 'Degraded')?.status).toBe('False');
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    new NodeLaunchSimulator({ kube: h.cluster.kube, ec2: h.cluster.ec2 }).markNodeClassReady();
    const { runtime } = h;
    await until(
      () =>
        [
          runtime.watches.nodes,
          runtime.watches.nodePools,
          runtime.watches.pendingPods,
          ...runtime.watches.autoscaler,
        ].every((w) => w.synced) || undefined,
      'the metric and Cluster Autoscaler caches to sync',
    );
    await h.runtime.idle();
  });
  afterAll(async () => {
    await h?.stop();
  });

  const nonWatch = () => h.cluster.kube.requests.filter((e) => e.verb !== 'watch');

  it('reports without a single request other than its watches', async () => {
    // Settle: the first report may still observe what the order changed.
    await h.runtime.snapshot();
    await new Promise((r) => setTimeout(r, 1000));
    await h.runtime.snapshot();
    const before = nonWatch().length;
    for (let i = 0; i < 5; i++) {
      const snapshot = await h.runtime.snapshot();
      expect(snapshot?.metrics.nodePools).toBe(1);
      expect(snapshot?.clusterAutoscaler).toEqual({
        mode: 'KEEP',
        observed: 'Present',
        machineAutoscalers: 3,
      });
      await new Promise((r) => setTimeout(r, 200));
    }
    const during = nonWatch().slice(before);
    expect(during.map((e) => `${e.verb} ${e.path}?${e.query}`)).toEqual([]);
  });

  it('the next report still sees what changed on the cluster: a pending Pod, a new Node, the Cluster Autoscaler gone', async () => {
    const before = (await h.runtime.snapshot())!;
    h.cluster.kube.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'waiting', namespace: 'default' },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
      status: { phase: 'Pending' },
    });
    h.cluster.kube.create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'ip-10-0-9-9.ec2.internal' },
      status: { capacity: { cpu: '4' } },
    });
    h.cluster.kube.delete('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default');
    const after = await eventually(
      async () => {
        const s = await h.runtime.snapshot();
        return s &&
          s.metrics.pendingPods === (before.metrics.pendingPods ?? 0) + 1 &&
          s.metrics.nodes === (before.metrics.nodes ?? 0) + 1 &&
          s.clusterAutoscaler?.observed === 'Absent'
          ? s
          : undefined;
      },
      {
        timeoutMs: 10_000,
        what: 'the report to show the pending Pod, the Node and no ClusterAutoscaler',
      },
    );
    expect(after.clusterAutoscaler).toEqual({
      mode: 'KEEP',
      observed: 'Absent',
      machineAutoscalers: 3,
    });
    // The Pod leaving Pending leaves the count, as the watch's field selector says.
    h.cluster.kube.patchStatus('v1', 'Pod', 'waiting', 'default', { phase: 'Running' });
    await eventually(
      async () =>
        (await h.runtime.snapshot())?.metrics.pendingPods === before.metrics.pendingPods
          ? true
          : undefined,
      { timeoutMs: 10_000, what: 'the running Pod to leave the pending count' },
    );
  });

  it('reports the Karpenter health gates from the same caches: NodeClaims that failed to launch, the oldest unschedulable Pod', async () => {
    await h.runtime.watches.nodeClaims.whenSynced();
    const at = new Date().toISOString();
    h.cluster.kube.create({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'general-refused', labels: { 'karpenter.sh/nodepool': 'general' } },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
        ],
      },
    });
    // Status is a subresource: written apart from the object, as Karpenter does.
    h.cluster.kube.patchStatus('karpenter.sh/v1', 'NodeClaim', 'general-refused', undefined, {
      conditions: [
        {
          type: 'Launched',
          status: 'False',
          reason: 'InsufficientCapacityError',
          message: 'no m5.large capacity in us-east-1a',
          lastTransitionTime: at,
        },
      ],
    });
    h.cluster.kube.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'unschedulable', namespace: 'default' },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
      status: { phase: 'Pending' },
    });
    // What the scheduler writes when no node fits.
    h.cluster.kube.patchStatus('v1', 'Pod', 'unschedulable', 'default', {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/3 nodes are available',
          lastTransitionTime: at,
        },
      ],
    });
    const before = nonWatch().length;
    // The Pod is dated by its creationTimestamp (set by the API server) and the failure by its
    // condition's transition: times, not ages, so an unchanged cluster's report stays equal.
    let last: unknown;
    const report = await eventually(
      async () => {
        const s = await h.runtime.snapshot();
        last = s?.metrics;
        return s?.metrics.nodeClaimLaunchFailures === 1 && s.metrics.oldestPendingPodSince
          ? s
          : undefined;
      },
      {
        timeoutMs: 10_000,
        intervalMs: 100,
        what: 'the launch failure and the pending Pod reported',
      },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last metrics ${JSON.stringify(last)}`);
    });
    expect(report.metrics.nodeClaimsByState).toMatchObject({ Pending: 1 });
    // What Karpenter did, NodeClaim by NodeClaim (issue 47): the refused one with its reason,
    // first (launch failures lead the list, whatever other NodeClaims the cluster has).
    expect(report.nodeClaims?.slice(0, 1)).toEqual([
      {
        name: 'general-refused',
        nodePool: 'general',
        instanceType: 'm5.large',
        state: 'Pending',
        createdAt: expect.any(String) as unknown as string,
        launchFailure: {
          reason: 'InsufficientCapacityError',
          message: 'no m5.large capacity in us-east-1a',
        },
      },
    ]);
    expect(report.metrics.nodeClaimLaunchFailureTimes).toEqual([new Date(at).toISOString()]);
    expect(Date.parse(report.metrics.oldestPendingPodSince!)).toBeLessThanOrEqual(Date.now());
    expect(report.metrics).not.toHaveProperty('oldestPendingPodSeconds');
    expect(
      nonWatch()
        .slice(before)
        .map((e) => `${e.verb} ${e.path}`),
    ).toEqual([]);
  });
});

/**
 * While the order is re-checked every requeue period (here: the Cluster Autoscaler waits for
 * Karpenter's NodeClass to be Ready), each re-check applies the desired objects once: the
 * NodeClass controller, given the same target again, does not write the pool a second time.
 */
describe('standalone AWS: a sidecar re-checking an unchanged order', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ requeueMs: 200 });
    await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'DISABLE' }),
    );
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('writes the pool, its KubeletConfig and its user data once per re-check, as every other object', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const before = h.cluster.kube.requests.length;
    // Ten requeue periods of re-checks, Karpenter's NodeClass still not Ready.
    await new Promise((r) => setTimeout(r, 2000));
    const writes = (fragment: string) =>
      h.cluster.kube.requests
        .slice(before)
        .filter((e) => e.verb === 'patch' && e.path.includes(fragment)).length;
    const operand = writes(`/deployments/${OPERAND_NAME}`);
    expect(operand).toBeGreaterThan(0);
    // One more at most: a re-check may straddle the window's edge between the two writes.
    expect(
      Math.max(
        writes('/machineconfigpools/karpenter-default'),
        writes('/kubeletconfigs/karpenter-default'),
        writes('/secrets/karpenter-default-user-data'),
      ),
    ).toBeLessThanOrEqual(operand + 1);
    expect(h.runtime.lastResult()?.result.conditions).toContainEqual(
      expect.objectContaining({ type: 'ClusterAutoscalerDisabled', reason: 'WaitingForKarpenter' }),
    );
  });
});
