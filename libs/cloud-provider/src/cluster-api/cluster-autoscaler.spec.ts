import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CAPI_CLUSTER, startEmulatedCapiCluster, type EmulatedCapiCluster } from '@fleet/testing';
import type { ClusterAutoscalerMode } from '@fleet/contracts';
import type { KubeObject } from '../types.js';
import {
  NODE_GROUP_SIZES_BACKUP,
  planNodeGroupSizes,
  readNodeGroupSizesBackup,
  type NodeGroupSizesPlan,
} from './cluster-autoscaler.js';

const MIN = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const MAX = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
const V1B1 = 'cluster.x-k8s.io/v1beta1';
const NS = CAPI_CLUSTER.namespace;

/** The Cluster Autoscaler's rule: missing min is 0, a group is managed when max > 0. */
const managedByClusterAutoscaler = (o: KubeObject) =>
  Number(o.metadata.annotations?.[MAX] ?? '0') > 0;

describe('Cluster Autoscaler on Cluster API: DISABLE / KEEP / MIGRATE of node-group size annotations', () => {
  let pair: EmulatedCapiCluster;
  let original: Record<string, Record<string, string> | undefined>;

  const groups = (): KubeObject[] =>
    [
      ...pair.management.list(V1B1, 'MachineDeployment', NS),
      ...pair.management.list(V1B1, 'MachineSet', NS),
    ] as unknown as KubeObject[];
  const backup = () =>
    pair.management.get('v1', 'ConfigMap', NODE_GROUP_SIZES_BACKUP, NS) as unknown as
      KubeObject | undefined;
  const annotationsNow = () =>
    Object.fromEntries(
      groups().map((g) => [`${g.kind}/${g.metadata.name}`, g.metadata.annotations]),
    );

  /** What the sidecar does with a plan: the copy first, then the patches, then the cleanup. */
  function execute(plan: NodeGroupSizesPlan): void {
    if (plan.backup)
      pair.management.apply(
        structuredClone(plan.backup) as Parameters<typeof pair.management.apply>[0],
        {
          fieldManager: 'karpenter-fleet',
          force: true,
        },
      );
    for (const p of plan.patches) pair.management.patch(V1B1, p.kind, p.name, NS, p.mergePatch);
    if (plan.backup === null && backup())
      pair.management.delete('v1', 'ConfigMap', NODE_GROUP_SIZES_BACKUP, NS);
  }
  const run = (mode: ClusterAutoscalerMode) => {
    const plan = planNodeGroupSizes({
      mode,
      namespace: NS,
      clusterName: CAPI_CLUSTER.name,
      groups: groups(),
      backup: backup(),
    });
    execute(plan);
    return plan;
  };

  beforeAll(async () => {
    pair = await startEmulatedCapiCluster();
    // A fleet MachineDeployment beside the SRE's: never a Cluster Autoscaler group.
    const fleet = structuredClone(
      pair.management.get(V1B1, 'MachineDeployment', 'capi-east-m6i-us-east-1a', NS)!,
    );
    pair.management.create({
      apiVersion: V1B1,
      kind: 'MachineDeployment',
      metadata: {
        name: 'capi-east-karpenter-m6i-xlarge-us-east-1a',
        namespace: NS,
        labels: { 'fleet.karpenter.sh/managed-by': 'karpenter-fleet' },
        annotations: { 'capacity.cluster-autoscaler.kubernetes.io/cpu': '4' },
      },
      spec: fleet.spec,
    });
    original = annotationsNow();
  });
  afterAll(async () => {
    await pair.stop();
  });

  it('DISABLE removes both size annotations from the worker groups, keeping an exact copy on the management side', () => {
    const plan = run('DISABLE');
    expect(plan.patches.map((p) => p.name).sort()).toEqual([
      'capi-east-c6i-us-east-1a',
      'capi-east-m6i-us-east-1a',
      'capi-east-m6i-us-east-1b',
    ]);
    expect(plan.condition).toMatchObject({ status: 'True', reason: 'NodeGroupSizesRemoved' });
    expect(groups().filter(managedByClusterAutoscaler)).toEqual([]);
    for (const g of groups()) {
      const before = { ...original[`${g.kind}/${g.metadata.name}`] };
      delete before[MIN];
      delete before[MAX];
      // Everything else (the capacity annotations) is untouched.
      expect(g.metadata.annotations ?? {}).toEqual(before);
    }
    expect(readNodeGroupSizesBackup(backup())).toEqual({
      'MachineDeployment/capi-east-c6i-us-east-1a': { [MIN]: '0', [MAX]: '10' },
      'MachineDeployment/capi-east-m6i-us-east-1a': { [MIN]: '0', [MAX]: '10' },
      'MachineDeployment/capi-east-m6i-us-east-1b': { [MIN]: '0', [MAX]: '10' },
    });
  });

  it('DISABLE again changes nothing and keeps the copy', () => {
    const copy = backup()?.data;
    const plan = run('DISABLE');
    expect(plan.patches).toEqual([]);
    expect(backup()?.data).toEqual(copy);
  });

  it('KEEP restores every annotation exactly and drops the copy', () => {
    const plan = run('KEEP');
    expect(plan.condition).toMatchObject({ status: 'False', reason: 'Kept' });
    expect(annotationsNow()).toEqual(original);
    expect(backup()).toBeUndefined();
  });

  it('MIGRATE after DISABLE gives the Cluster Autoscaler its groups back and says it runs beside Karpenter', () => {
    run('DISABLE');
    expect(groups().filter(managedByClusterAutoscaler)).toEqual([]);
    const plan = run('MIGRATE');
    expect(plan.condition).toMatchObject({ status: 'False', reason: 'RunningBesideKarpenter' });
    expect(annotationsNow()).toEqual(original);
    expect(
      groups()
        .filter(managedByClusterAutoscaler)
        .map((g) => g.metadata.name)
        .sort(),
    ).toEqual(['capi-east-c6i-us-east-1a', 'capi-east-m6i-us-east-1a', 'capi-east-m6i-us-east-1b']);
  });
});
