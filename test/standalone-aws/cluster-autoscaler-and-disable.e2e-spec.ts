import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

const CA = ['autoscaling.openshift.io/v1', 'ClusterAutoscaler'] as const;
const MA = ['autoscaling.openshift.io/v1beta1', 'MachineAutoscaler'] as const;
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
const autoscalers = (h: Harness) => ({
  clusterAutoscaler: essence(h.cluster.kube.get(...CA, 'default')),
  machineAutoscalers: h.cluster.kube.list(...MA, 'openshift-machine-api').map(essence),
});

describe('standalone AWS: the Cluster Autoscaler switch', () => {
  let h: Harness;
  let original: ReturnType<typeof autoscalers>;

  let sim: NodeLaunchSimulator;

  beforeAll(async () => {
    h = await startHarness({ requeueMs: 500 });
    sim = new NodeLaunchSimulator({ kube: h.cluster.kube, ec2: h.cluster.ec2 }).start();
    // Give the originals labels and annotations a careless restore would lose.
    h.cluster.kube.patch(...CA, 'default', undefined, {
      metadata: { labels: { team: 'sre' }, annotations: { 'example.com/owner': 'sre' } },
    });
    original = autoscalers(h);
    expect(original.clusterAutoscaler).toBeDefined();
    expect(original.machineAutoscalers).toHaveLength(3);
  });
  afterAll(async () => {
    sim?.stop();
    await h?.stop();
  });

  it('DISABLE keeps the Cluster Autoscaler while Karpenter cannot take over, and says why', async () => {
    const disable = h.order({
      enabled: true,
      nodePools: [GENERAL_NODEPOOL],
      clusterAutoscalerMode: 'DISABLE',
    });
    const result = await h.runtime.apply(disable);
    expect(result.requeue).toBe(true);
    const waiting = (r: {
      conditions: { type: string; status: string; reason: string; message: string }[];
    }) => r.conditions.find((c) => c.type === 'ClusterAutoscalerDisabled');
    expect(waiting(result)).toMatchObject({
      status: 'False',
      reason: 'WaitingForKarpenter',
      message: expect.stringMatching(
        /operand Deployment openshift-karpenter\/karpenter is not Available yet; EC2NodeClass default is not Ready yet/,
      ) as unknown,
    });
    expect(result.clusterAutoscaler).toEqual({
      mode: 'DISABLE',
      observed: 'Present',
      machineAutoscalers: 3,
    });
    // Karpenter never becoming available: re-checks keep the Cluster Autoscaler.
    const generation = h.runtime.lastResult()?.generation;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(h.runtime.lastResult()?.generation).toBe(generation);
    expect(autoscalers(h)).toEqual(original);
    expect(h.cluster.kube.get(...BACKUP)).toBeUndefined();

    // The operand alone is not enough: the default NodeClass must be Ready too.
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    await until(() => {
      const c = waiting(h.runtime.lastResult()!.result);
      return c?.reason === 'WaitingForKarpenter' && !c.message.includes('operand') ? c : undefined;
    }, 'the wait to name only the NodeClass');
    expect(h.cluster.kube.get(...CA, 'default')).toBeDefined();

    // Karpenter makes its NodeClass Ready: the Cluster Autoscaler goes, without another order.
    sim.markNodeClassReady('default');
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
    // The same order again changes nothing (the copy is not overwritten with emptiness).
    const rv = h.cluster.kube.get(...BACKUP)?.metadata?.resourceVersion;
    await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'DISABLE' }),
    );
    expect(h.cluster.kube.get(...BACKUP)?.metadata?.resourceVersion).toBe(rv);
    expect((await h.runtime.snapshot())?.clusterAutoscaler).toEqual({
      mode: 'DISABLE',
      observed: 'Removed',
      machineAutoscalers: 0,
    });
  });

  it('KEEP restores exactly what was there: spec, labels and annotations, object for object', async () => {
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'KEEP' }),
    );
    expect(autoscalers(h)).toEqual(original);
    expect(h.cluster.kube.get(...BACKUP)).toBeUndefined();
    expect(result.clusterAutoscaler).toEqual({
      mode: 'KEEP',
      observed: 'Present',
      machineAutoscalers: 3,
    });
  });

  it('MIGRATE keeps both running and says so in a visible condition', async () => {
    await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'DISABLE' }),
    );
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'MIGRATE' }),
    );
    expect(autoscalers(h)).toEqual(original);
    expect(result.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'ClusterAutoscalerMigration',
          status: 'True',
          reason: 'BothAutoscalersActive',
        }),
      ]),
    );
    expect(result.clusterAutoscaler).toEqual({
      mode: 'MIGRATE',
      observed: 'Present',
      machineAutoscalers: 3,
    });
  });
});

describe('standalone AWS: disabling Karpenter', () => {
  let h: Harness;
  let sim: NodeLaunchSimulator;
  const events: string[] = [];
  const offs: (() => void)[] = [];

  /** Every object on the cluster, by identity. */
  const inventory = () =>
    new Set(
      h.cluster.kube
        .allDefs()
        // CSRs are the kubelets' (the API server garbage-collects them), not the sidecar's.
        .filter((d) => d.kind !== 'CertificateSigningRequest')
        .flatMap((d) =>
          h.cluster.kube.list(d.group ? `${d.group}/${d.version}` : d.version, d.kind),
        )
        .map((o) => `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`),
    );

  beforeAll(async () => {
    h = await startHarness({ requeueMs: 1_000 });
    sim = new NodeLaunchSimulator({
      kube: h.cluster.kube,
      ec2: h.cluster.ec2,
      terminationDelayMs: 300,
    }).start();
    for (const [apiVersion, kind] of [
      ['karpenter.sh/v1', 'NodeClaim'],
      ['karpenter.sh/v1', 'NodePool'],
      ['karpenter.k8s.aws/v1', 'EC2NodeClass'],
      ['apps/v1', 'Deployment'],
      ['autoscaling.openshift.io/v1', 'ClusterAutoscaler'],
    ] as const) {
      offs.push(
        h.cluster.kube.watch(apiVersion, kind, (type, o) => {
          if (type === 'DELETED') events.push(`${kind}/${o.metadata?.name}`);
          if (type === 'ADDED') events.push(`+${kind}/${o.metadata?.name}`);
        }),
      );
    }
  });
  afterAll(async () => {
    for (const off of offs) off();
    sim?.stop();
    await h?.stop();
  });

  it('removes, in order, everything the sidecar created and nothing else', async () => {
    await h.runtime.apply(h.order({}));
    await until(
      () => h.cluster.kube.get('config.openshift.io/v1', 'ClusterOperator', 'karpenter'),
      'the ClusterOperator',
    );
    const before = inventory();

    await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], clusterAutoscalerMode: 'DISABLE' }),
    );
    h.cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    // Karpenter, as its service account, puts its finalizer and status on the NodeClass.
    expect(sim.markNodeClassReady('default').metadata?.finalizers).toEqual([
      'karpenter.k8s.aws/termination',
    ]);
    await until(
      () =>
        h.cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default')
          ? undefined
          : true,
      'the Cluster Autoscaler to be removed',
    );
    await h.runtime.watches.nodeClaims.whenSynced();
    const nodes = await Promise.all([sim.launch('general'), sim.launch('general')]);
    expect(h.cluster.kube.list('karpenter.sh/v1', 'NodeClaim')).toHaveLength(2);

    const steps: string[] = [];
    h.runtime.onChange(() => {
      const reason = h.runtime
        .lastResult()
        ?.result.conditions.find((c) => c.type === 'Progressing' && c.status === 'True')?.reason;
      if (reason && steps.at(-1) !== reason) steps.push(reason);
    });
    // Disabling Karpenter with the mode still DISABLE: that would leave no autoscaler at all, so
    // the Cluster Autoscaler comes back first, before Karpenter's capacity goes.
    const mark = events.length;
    const first = await h.runtime.apply(
      h.order({ enabled: false, clusterAutoscalerMode: 'DISABLE' }),
    );
    // The order returns while NodeClaims drain; the queue is not held.
    expect(first.requeue).toBe(true);
    await until(
      () =>
        h.runtime
          .lastResult()
          ?.result.conditions.find(
            (c) => c.type === 'Available' && c.reason === 'KarpenterDisabled',
          ),
      'Karpenter to be disabled',
    );
    expect(
      h.runtime.lastResult()?.result.conditions.find((c) => c.type === 'ClusterAutoscalerDisabled'),
    ).toMatchObject({ status: 'False', reason: 'KeptWithoutKarpenter' });
    expect(h.runtime.lastResult()?.result.clusterAutoscaler).toEqual({
      mode: 'DISABLE',
      observed: 'Present',
      machineAutoscalers: 3,
    });
    // Restored before the first NodePool (Karpenter's capacity) was deleted.
    const restoredAt = events.indexOf('+ClusterAutoscaler/default', mark);
    expect(restoredAt).toBeGreaterThanOrEqual(mark);
    expect(restoredAt).toBeLessThan(events.indexOf('NodePool/general', mark));
    expect(steps).toEqual([
      'DeletingNodePools',
      'WaitingForNodeClaims',
      'RemovingNodeClasses',
      'RemovingOperand',
    ]);
    // NodePools first, every NodeClaim gone before the NodeClass and the operand.
    const at = (what: string) => events.findIndex((e) => e.startsWith(what));
    const lastNodeClaim = Math.max(...nodes.map((n) => events.indexOf(`NodeClaim/${n.nodeClaim}`)));
    expect(at('NodePool/general')).toBeGreaterThanOrEqual(0);
    expect(at('NodePool/general')).toBeLessThan(lastNodeClaim);
    expect(lastNodeClaim).toBeLessThan(at('EC2NodeClass/default'));
    expect(at('EC2NodeClass/default')).toBeLessThan(at(`Deployment/${OPERAND_NAME}`));
    for (const n of nodes)
      expect(h.cluster.ec2.getInstance(n.instanceId)?.State).toBe('terminated');

    await h.runtime.idle();
    expect([...inventory()].sort()).toEqual([...before].sort());
  });
});
