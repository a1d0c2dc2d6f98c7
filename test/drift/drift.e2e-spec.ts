import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Condition, DriftEntry } from '@fleet/contracts';
import { ClusterClient } from '../../apps/sidecar/src/kube/cluster-client.js';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { eventually } from '../support/processes.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from '../standalone-aws/harness.js';

const NODEPOOL = { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: 'general' } as const;
type NodePoolObject = KubeObject & {
  metadata: { labels?: Record<string, string> };
  spec: { limits: { cpu: string } };
};

/**
 * Hand edits of what the fleet manages, made by other field managers through the real client
 * (HTTPS to the emulated API server, which keeps managedFields as a real one does), seen by the
 * sidecar's runtime and handled by the cluster's drift policy.
 */
describe('drift: hand edits seen, and corrected by policy', () => {
  let h: Harness;
  let sre: ClusterClient;
  const nodePool = () =>
    h.cluster.kube.get(NODEPOOL.apiVersion, NODEPOOL.kind, NODEPOOL.name) as
      NodePoolObject | undefined;
  const report = async () => {
    const snapshot = await h.runtime.snapshot();
    return {
      drift: snapshot?.drift ?? [],
      drifted: snapshot?.conditions.find((c) => c.type === 'Drifted') as Condition,
    };
  };
  const setCpu = (cpu: string, manager: string) =>
    sre.mergePatch(
      {
        apiVersion: NODEPOOL.apiVersion,
        kind: NODEPOOL.kind,
        metadata: { name: NODEPOOL.name },
        spec: { limits: { cpu } },
      },
      manager,
    );
  /** Polls the sidecar's report (bounded) until it holds. */
  const seen = <T>(check: () => Promise<T | undefined>, what: string) =>
    eventually(check, { timeoutMs: 10_000, intervalMs: 20, what });
  const entryFor = (drift: DriftEntry[], open: boolean) =>
    drift.find((e) => e.name === 'general' && e.kind === 'NodePool' && !e.correctedAt === open);

  beforeAll(async () => {
    h = await startHarness();
    sre = ClusterClient.fromKubeconfigFile(h.cluster.kubeconfigPath);
    const result = await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(result.conditions).toContainEqual(
      expect.objectContaining({ type: 'Degraded', status: 'False' }),
    );
  }, 120_000);
  afterAll(async () => h?.stop());

  it('at rest: no drift', async () => {
    const { drift, drifted } = await report();
    expect(drift).toEqual([]);
    expect(drifted).toMatchObject({ status: 'False', reason: 'NoDrift' });
  });

  it('CORRECT (the default): a managed field changed by another manager is put back and reported', async () => {
    await setCpu('128', 'sre-hand-edit');
    await until(
      () => (nodePool()?.spec.limits.cpu === '64' ? true : undefined),
      'NodePool general limits.cpu put back to 64',
    );
    const corrected = await seen(
      async () => entryFor((await report()).drift, false),
      'the correction reported',
    );
    expect(corrected).toMatchObject({
      target: 'workload',
      change: 'Modified',
      fields: [{ path: '.spec.limits.cpu', manager: 'sre-hand-edit' }],
    });
    expect(Date.parse(corrected.correctedAt!)).toBeGreaterThanOrEqual(
      Date.parse(corrected.detectedAt),
    );
    const { drifted } = await report();
    expect(drifted).toMatchObject({ status: 'False', reason: 'Corrected' });
    expect(drifted.message).toContain('NodePool general: .spec.limits.cpu by sre-hand-edit');
  });

  it('a label an admin adds is not drift, and stays', async () => {
    const before = await report();
    await sre.mergePatch(
      {
        apiVersion: NODEPOOL.apiVersion,
        kind: NODEPOOL.kind,
        metadata: { name: NODEPOOL.name, labels: { team: 'platform' } },
      },
      'admin',
    );
    // The sidecar's own watch has seen the edit (handlers run as the event arrives).
    await until(
      () => (h.runtime.watches.nodePools.get('general')?.metadata?.labels?.team ? true : undefined),
      "the sidecar's watch saw the label",
    );
    await h.runtime.idle();
    const after = await report();
    expect(after.drift).toEqual(before.drift);
    expect(after.drifted.status).toBe('False');
    expect(nodePool()?.metadata.labels?.team).toBe('platform');
  });

  it('REPORT: the edit stays, Drifted=True names the path and the manager, a re-apply leaves it', async () => {
    const order = h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], driftPolicy: 'REPORT' });
    await h.runtime.apply(order);
    await setCpu('256', 'sre-hand-edit');
    const open = await seen(async () => entryFor((await report()).drift, true), 'drift reported');
    expect(open).toMatchObject({
      change: 'Modified',
      fields: [{ path: '.spec.limits.cpu', manager: 'sre-hand-edit' }],
    });
    const { drifted } = await report();
    expect(drifted).toMatchObject({ status: 'True', reason: 'LeftInPlace' });
    expect(drifted.message).toContain('NodePool general: .spec.limits.cpu by sre-hand-edit');
    // The same order again (a resync, a re-check) does not overwrite the hand edit.
    await h.runtime.apply(order);
    await h.runtime.idle();
    expect(nodePool()?.spec.limits.cpu).toBe('256');
    expect(entryFor((await report()).drift, true)).toBeDefined();
  });

  it('back to CORRECT: the held edit is put back and the entry becomes a correction', async () => {
    await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(nodePool()?.spec.limits.cpu).toBe('64');
    const { drift, drifted } = await report();
    expect(entryFor(drift, true)).toBeUndefined();
    expect(drifted).toMatchObject({ status: 'False', reason: 'Corrected' });
  });

  it("every owned kind is watched: a hand edit of Karpenter's ClusterRole is put back and reported", async () => {
    const ref = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      name: 'openshift-karpenter',
    } as const;
    const rules = () =>
      JSON.stringify(
        (h.cluster.kube.get(ref.apiVersion, ref.kind, ref.name) as { rules?: unknown })?.rules,
      );
    const original = rules();
    await sre.mergePatch(
      {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      },
      'sre-hand-edit',
    );
    const corrected = await seen(
      async () =>
        (await report()).drift.find(
          (e) => e.kind === 'ClusterRole' && e.name === ref.name && e.correctedAt !== undefined,
        ),
      'the ClusterRole edit reported as corrected',
    );
    expect(corrected).toMatchObject({
      change: 'Modified',
      fields: [{ path: '.rules', manager: 'sre-hand-edit' }],
    });
    expect(rules()).toBe(original);
  });

  it('a deleted PodDisruptionBudget of the operand is re-created under CORRECT', async () => {
    const ref = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      namespace: 'openshift-karpenter',
      name: 'karpenter',
    } as const;
    const pdb = () => h.cluster.kube.get(ref.apiVersion, ref.kind, ref.name, ref.namespace);
    const uid = pdb()?.metadata?.uid;
    expect(uid).toBeDefined();
    await sre.delete(ref);
    await until(() => {
      const live = pdb();
      return live && live.metadata?.uid !== uid ? live : undefined;
    }, 'the PodDisruptionBudget re-created');
    const entry = await seen(
      async () =>
        (await report()).drift.find(
          (e) =>
            e.kind === 'PodDisruptionBudget' &&
            e.change === 'Deleted' &&
            e.correctedAt !== undefined,
        ),
      'the deletion reported as corrected',
    );
    expect(entry).toMatchObject({ namespace: 'openshift-karpenter', name: 'karpenter' });
  });

  it('deleting a fleet object is reported and, under CORRECT, it is re-created', async () => {
    const uid = nodePool()?.metadata?.uid;
    await sre.delete(NODEPOOL);
    const recreated = await until(() => {
      const np = nodePool();
      return np && np.metadata?.uid !== uid ? np : undefined;
    }, 'NodePool general re-created');
    expect(recreated.spec.limits.cpu).toBe('64');
    // The re-created object can be seen before the detector has marked its entry corrected:
    // wait for the report that says both.
    const deleted = await seen(
      async () =>
        (await report()).drift.find(
          (e) => e.change === 'Deleted' && e.name === 'general' && e.correctedAt !== undefined,
        ),
      'the deletion reported as corrected',
    );
    expect(deleted).toMatchObject({ change: 'Deleted', name: 'general' });
  });

  it('REPORT: a deleted object stays deleted and is reported as Drifted', async () => {
    await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], driftPolicy: 'REPORT' }),
    );
    await sre.delete(NODEPOOL);
    const open = await seen(
      async () =>
        (await report()).drift.find(
          (e) => e.change === 'Deleted' && e.name === 'general' && !e.correctedAt,
        ),
      'the deletion reported',
    );
    expect(open.fields).toEqual([]);
    await h.runtime.idle();
    expect(nodePool()).toBeUndefined();
    expect((await report()).drifted).toMatchObject({ status: 'True', reason: 'LeftInPlace' });
    expect((await report()).drifted.message).toContain('NodePool general deleted');
  });
});
