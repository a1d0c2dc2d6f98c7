import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import {
  SIDECAR_USER,
  startRealOpenShiftAwsCluster,
  type RealOpenShiftAwsCluster,
} from '../support/control-plane/openshift-cluster.js';
import { eventually } from '../support/processes.js';
import { GENERAL_NODEPOOL, startSidecarRuntime, type Harness } from '../standalone-aws/harness.js';

// Faults of the real control plane under the sidecar (standalone AWS): kube-apiserver restarted in
// the middle of an apply, and etcd compacted under the sidecar's open watches, so that resuming
// them gets 410 Gone. The sidecar must recover without losing a report and without re-applying
// what has not changed.

const NODEPOOL = ['karpenter.sh/v1', 'NodePool', 'general'] as const;
const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const withCpu = (cpu: string) => ({
  ...GENERAL_NODEPOOL,
  spec: { ...GENERAL_NODEPOOL.spec, limits: { cpu } },
});

describe('standalone AWS on a real control plane: kube-apiserver restarted, etcd compacted', () => {
  let cluster: RealOpenShiftAwsCluster;
  let sidecar: Omit<Harness, 'cluster'>;
  let kubelets: SimulatedKubelets;
  const cpu = async () =>
    ((await cluster.plane.get(...NODEPOOL))?.spec as { limits?: { cpu?: string } } | undefined)
      ?.limits?.cpu;
  /** The sidecar's completed writes, from the API server's audit log. */
  const sidecarWrites = () =>
    cluster.plane
      .auditedRequests(SIDECAR_USER)
      .filter((e) => e.stage === 'ResponseComplete' && WRITES.has(e.verb));
  /** Each object the sidecar has applied (server-side apply: a PATCH by name) → resourceVersion. */
  const appliedObjectVersions = async () => {
    const paths = new Set(
      sidecarWrites()
        .filter((e) => e.verb === 'patch' && !e.objectRef?.subresource)
        .map((e) => e.requestURI.split('?')[0]!),
    );
    const versions = new Map<string, string | undefined>();
    for (const path of paths) {
      const { status, json } = await cluster.plane.request('GET', path);
      versions.set(path, status === 200 ? json.metadata?.resourceVersion : undefined);
    }
    return versions;
  };
  const applied = (generation: number) =>
    eventually(
      () => {
        const last = sidecar.runtime.lastResult();
        const degraded = last?.result.conditions.find((c) => c.type === 'Degraded');
        return last?.generation === generation && degraded?.status === 'False' ? last : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: `generation ${generation} applied` },
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}; the last result: ${JSON.stringify(sidecar.runtime.lastResult())}`,
        { cause: err },
      );
    });

  beforeAll(async () => {
    cluster = await startRealOpenShiftAwsCluster();
    kubelets = new SimulatedKubelets(cluster.plane);
    await kubelets.register('master-0');
    kubelets.start();
    sidecar = await startSidecarRuntime(cluster, { requeueMs: 500 });
    await sidecar.runtime.apply(sidecar.order({ enabled: true, nodePools: [withCpu('64')] }));
    await applied(1);
  }, 180_000);
  afterAll(async () => {
    kubelets?.stop();
    await sidecar?.stop();
    await cluster?.stop();
  });

  it('kube-apiserver restarted mid-apply: the order lands once it is back, and is reported', async () => {
    const applying = sidecar.runtime
      .apply(sidecar.order({ enabled: true, nodePools: [withCpu('128')] }))
      .catch(() => undefined);
    await cluster.plane.restartApiServer();
    await applying;
    await applied(2);
    expect(await cpu()).toBe('128');
  }, 120_000);

  it('once recovered, nothing unchanged is written again', async () => {
    await sidecar.runtime.idle();
    const before = sidecarWrites().length;
    // Several requeue periods (500 ms) and watch resyncs' worth of quiet.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(
      sidecarWrites()
        .slice(before)
        .map((e) => `${e.verb} ${e.requestURI}`),
    ).toEqual([]);
  });

  it('etcd compacted under open watches: resuming them gets 410; nothing changes, and a hand edit is still seen and put back', async () => {
    const versionsBefore = await appliedObjectVersions();
    const staleRevision = await cluster.plane.etcdRevision();
    await cluster.plane.compactEtcd();
    await cluster.plane.restartApiServer();
    // What every watch the sidecar had open now gets when it resumes from where it was
    // (429 while the restarted server's watch cache initializes, as any client sees it).
    const resumed = await eventually(
      async () => {
        const { status, body } = await cluster.plane.request(
          'GET',
          `/apis/karpenter.sh/v1/nodepools?watch=1&resourceVersion=${staleRevision - 1}&timeoutSeconds=1`,
        );
        return status === 429 ? undefined : body;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the watch cache to be ready' },
    );
    expect(resumed).toContain('"code":410');

    await cluster.plane.request(
      'PATCH',
      `${await cluster.plane.resourcePath(...NODEPOOL)}?fieldManager=sre-hand-edit`,
      { spec: { limits: { cpu: '256' } } },
      'application/merge-patch+json',
    );
    await eventually(async () => ((await cpu()) === '128' ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the hand edit put back by the sidecar',
    });
    const drift = (await sidecar.runtime.snapshot())?.drift ?? [];
    expect(drift).toContainEqual(
      expect.objectContaining({
        kind: 'NodePool',
        name: 'general',
        fields: [expect.objectContaining({ path: '.spec.limits.cpu', manager: 'sre-hand-edit' })],
      }),
    );
    // Of everything the sidecar applies, only the edited NodePool changed: the relists through
    // 410 and the re-apply that corrected the edit left every other object as it was.
    const versionsAfter = await appliedObjectVersions();
    const changed = [...versionsBefore]
      .filter(([path, version]) => versionsAfter.get(path) !== version)
      .map(([path]) => path);
    expect(changed).toEqual([await cluster.plane.resourcePath(...NODEPOOL)]);
  }, 120_000);
});
