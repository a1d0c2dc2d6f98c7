import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
// Tests boot the real worker in process; the apps-never-import-apps rule is about app code.

import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { runKfleetInProcess } from '../cli/kfleet-process.js';
import { FakeSidecar } from '../rollouts/fake-sidecar.js';

const ROLLOUT = `id uid state reason waitingStage currentWave
  strategy { name waves maxNodeClaimLaunchFailures }
  counts { total healthy failed pending }
  waves { index state selector approval pauseSeconds resumeAt approvedBy startedAt finishedAt
          clusters { clusterName state generation reason } }`;
const CREATE_STRATEGY = `mutation($input: CreateRolloutStrategyInput!) {
  createRolloutStrategy(input: $input) { name stages { selector percent count minHealthySeconds pauseSeconds approval } maxFailures } }`;
const UPDATE_STRATEGY = `mutation($name: String!, $input: RolloutStrategySpecInput!) {
  updateRolloutStrategy(name: $name, input: $input) { name stages { approval } } }`;
const PAYLOAD = `profile { name revision } rollout { ${ROLLOUT} }`;
const CREATE_PROFILE = `mutation($input: CreateProfileInput!, $strategy: RolloutStrategyInput, $strategyName: String) {
  createProfile(input: $input, strategy: $strategy, strategyName: $strategyName) { ${PAYLOAD} } }`;
const UPDATE_PROFILE = `mutation($name: String!, $input: UpdateProfileInput!, $strategyName: String) {
  updateProfile(name: $name, input: $input, strategyName: $strategyName) { ${PAYLOAD} } }`;
const START = `mutation($selector: String!, $change: RolloutChangeInput!, $strategy: RolloutStrategyInput, $strategyName: String) {
  startRollout(selector: $selector, change: $change, strategy: $strategy, strategyName: $strategyName) { ${ROLLOUT} } }`;
const APPROVE = `mutation($id: ID!, $stage: Int!) { approveRolloutStage(rolloutId: $id, stage: $stage) { ${ROLLOUT} } }`;

interface RolloutView {
  id: string;
  uid: string;
  state: string;
  reason: string | null;
  waitingStage: number | null;
  currentWave: number;
  strategy: { name: string | null; waves: unknown; maxNodeClaimLaunchFailures: number | null };
  counts: { total: number; healthy: number; failed: number; pending: number };
  waves: {
    index: number;
    state: string;
    selector: string | null;
    approval: boolean;
    pauseSeconds: number;
    resumeAt: string | null;
    approvedBy: string | null;
    startedAt: string | null;
    finishedAt: string | null;
    clusters: {
      clusterName: string;
      state: string;
      generation: number | null;
      reason: string | null;
    }[];
  }[];
}
interface GqlError {
  message: string;
  extensions?: { code?: string; field?: string };
}

describe('named rollout strategies: stages, approval gates, timed pauses, Karpenter health gates', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let sql: pg.Client;
  let prefix: string;
  let dir: string;
  const sidecars = new Map<string, FakeSidecar>();

  const gql = async <T>(query: string, variables?: Record<string, unknown>): Promise<T> => {
    const res = await api.admin<T>(query, variables);
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data;
  };
  const refused = async (query: string, variables: Record<string, unknown>, as = api.admin) => {
    const res = await as(query, variables);
    expect(res.errors).toBeDefined();
    return res.errors![0] as GqlError;
  };
  const register = async (name: string, labels: Record<string, string>) => {
    const { registerCluster: r } = await gql<{
      registerCluster: { reportToken: string; cluster: { uid: string } };
    }>(
      `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { reportToken cluster { uid } } }`,
      { input: { name, topology: 'STANDALONE', platform: 'AWS', region: 'us-east-1', labels } },
    );
    sidecars.set(name, new FakeSidecar(r.cluster.uid, r.reportToken, api.url, prefix));
  };
  const rollout = async (id: string) =>
    (
      await gql<{ rollout: RolloutView }>(`query($id: ID!) { rollout(id: $id) { ${ROLLOUT} } }`, {
        id,
      })
    ).rollout;
  const waitRollout = (id: string, ok: (r: RolloutView) => boolean, what: string) => {
    let last: RolloutView | undefined;
    return eventually(
      async () => {
        last = await rollout(id);
        return ok(last) ? last : undefined;
      },
      { timeoutMs: 45_000, intervalMs: 100, what },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; rollout was ${JSON.stringify(last)}`);
    });
  };
  const workerEnv = () => ({
    DATABASE_URL: db.url,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    ROLLOUT_TICK_MS: '150',
    HEARTBEAT_SECONDS: '2',
    STALE_AFTER_HEARTBEATS: '15',
  });
  const observed = (name: string) => sidecars.get(name)!.observed;
  const kfleet = (args: string[]) =>
    runKfleetInProcess(args, {
      KFLEET_API_URL: api.url,
      KFLEET_TOKEN: api.adminToken,
      KFLEET_CONFIG: join(dir, 'config'),
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    dir = await mkdtemp(join(tmpdir(), 'kfleet-strategies-'));
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, STALE_AFTER_SECONDS: '30' });
    worker = await startWorker(workerEnv());
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    await register('prod-a', { env: 'prod', canary: 'true' });
    for (const name of ['prod-b', 'prod-c', 'prod-d']) await register(name, { env: 'prod' });
    await register('dev-a', { env: 'dev' });
    await eventually(
      () => ([...sidecars.values()].every((s) => s.observed >= 1) ? true : undefined),
      { timeoutMs: 30_000, what: 'every cluster at generation 1' },
    );
  });

  afterAll(async () => {
    await Promise.all([...sidecars.values()].map((s) => s.stop()));
    await worker?.close();
    await api?.app.close();
    await sql?.end();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a bad strategy naming the field, and scoped tokens may not write strategies', async () => {
    const bad = await refused(CREATE_STRATEGY, {
      input: { name: 'broken', stages: [{ count: 1 }, { selector: 'env in (' }] },
    });
    expect(bad.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.stages[1].selector',
    });
    const both = await refused(CREATE_STRATEGY, {
      input: { name: 'broken', stages: [{ percent: 50, count: 2 }] },
    });
    expect(both.extensions?.field).toBe('input.stages[0].count');
    const name = await refused(CREATE_STRATEGY, {
      input: { name: 'Not_A_Label', stages: [{ percent: 100 }] },
    });
    expect(name.extensions?.field).toBe('input.name');
    const unknown = await refused(CREATE_PROFILE, {
      input: { name: 'nope', selector: 'env=prod', priority: 1, spec: { logLevel: 'debug' } },
      strategyName: 'no-such-strategy',
    });
    expect(unknown.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'strategyName' });
    const profiles = await gql<{ profiles: unknown[] }>(`{ profiles { name } }`);
    expect(profiles.profiles).toEqual([]); // nothing half-written

    const scoped = api.as(await api.createToken('OPERATOR', { labelSelector: 'env=dev' }));
    const forbidden = await refused(
      CREATE_STRATEGY,
      { input: { name: 'dev-only', stages: [{ percent: 100 }] } },
      scoped,
    );
    expect(forbidden.extensions?.code).toBe('FORBIDDEN');
  });

  it("a profile bound to env=prod reaches every prod cluster through its strategy's stages, held at the approval gate until approved", async () => {
    const { createRolloutStrategy: s } = await gql<{
      createRolloutStrategy: { stages: { approval: boolean; minHealthySeconds: number }[] };
    }>(CREATE_STRATEGY, {
      input: {
        name: 'prod-gated',
        stages: [
          { selector: 'canary=true', minHealthySeconds: 1, approval: true },
          { percent: 100, minHealthySeconds: 1 },
        ],
        waveTimeoutSeconds: 120,
      },
    });
    expect(s.stages.map((x) => x.approval)).toEqual([true, false]);
    const before = Object.fromEntries(
      ['prod-b', 'prod-c', 'prod-d', 'dev-a'].map((n) => [n, observed(n)]),
    );

    const { createProfile: p } = await gql<{ createProfile: { rollout: RolloutView } }>(
      CREATE_PROFILE,
      {
        input: {
          name: 'prod-base',
          selector: 'env=prod',
          priority: 10,
          spec: { logLevel: 'debug' },
        },
        strategyName: 'prod-gated',
      },
    );
    expect(p.rollout.strategy.name).toBe('prod-gated');
    expect(p.rollout.waves.map((w) => w.clusters.map((c) => c.clusterName))).toEqual([
      ['prod-a'],
      ['prod-b', 'prod-c', 'prod-d'],
    ]);
    expect(p.rollout.waves[0]).toMatchObject({ selector: 'canary=true', approval: true });

    const waiting = await waitRollout(
      p.rollout.id,
      (r) => r.state === 'WAITING_APPROVAL',
      'the approval gate',
    );
    expect(waiting.waitingStage).toBe(0);
    expect(waiting.waves[0]!.clusters[0]).toMatchObject({
      clusterName: 'prod-a',
      state: 'HEALTHY',
    });
    expect(waiting.waves[1]!.clusters.every((c) => c.state === 'PENDING')).toBe(true);

    // The rollout holds its own copy: dropping the gate from the strategy does not release it.
    await gql(UPDATE_STRATEGY, {
      name: 'prod-gated',
      input: {
        stages: [
          { selector: 'canary=true', minHealthySeconds: 1 },
          { percent: 100, minHealthySeconds: 1 },
        ],
        waveTimeoutSeconds: 120,
      },
    });
    // Nothing moving can only be seen over time: four ticks later it still waits, and the
    // later wave's clusters were given nothing.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await rollout(p.rollout.id)).state).toBe('WAITING_APPROVAL');
    for (const [name, generation] of Object.entries(before))
      expect(observed(name)).toBe(generation);

    const early = await refused(APPROVE, { id: p.rollout.id, stage: 1 });
    expect(early.extensions?.code).toBe('CONFLICT');

    const approved = await kfleet(['rollouts', 'approve', p.rollout.id]);
    expect(approved.stderr).toBe('');
    expect(approved.stdout).toContain('stage 0 approved');
    // Approving again (a retry) changes nothing and is not an error.
    const again = await gql<{ approveRolloutStage: RolloutView }>(APPROVE, {
      id: p.rollout.id,
      stage: 0,
    });
    expect(again.approveRolloutStage.waves[0]!.approvedBy).toBeTruthy();

    const done = await waitRollout(p.rollout.id, (r) => r.state === 'COMPLETED', 'COMPLETED');
    expect(done.counts).toMatchObject({ total: 4, healthy: 4, failed: 0 });
    for (const name of ['prod-b', 'prod-c', 'prod-d'])
      expect(observed(name)).toBeGreaterThan(before[name]!);
    expect(observed('dev-a')).toBe(before['dev-a']);
    const audit = await sql.query<{ actor: string; after: { stage: number } }>(
      `SELECT actor, after FROM "AuditEvent" WHERE action = 'approveRolloutStage'`,
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]!.after.stage).toBe(0);
  });

  it('a timed pause resumes by itself, from the time persisted with the wave, across a worker restart', async () => {
    // Through the CLI, as an SRE keeps it in YAML.
    await writeFile(
      join(dir, 'soak.yaml'),
      'stages:\n  - {count: 1, minHealthySeconds: 0, pauseSeconds: 4}\n  - {percent: 100, minHealthySeconds: 0}\nwaveTimeoutSeconds: 120\n',
    );
    const created = await kfleet(['strategies', 'create', 'soak', '-f', join(dir, 'soak.yaml')]);
    expect(created.stderr).toBe('');
    const listed = await kfleet(['strategies', 'list']);
    expect(listed.stdout).toMatch(/soak\s+1 \+4s, 100%/);
    const { updateProfile: u } = await gql<{ updateProfile: { rollout: RolloutView } }>(
      UPDATE_PROFILE,
      {
        name: 'prod-base',
        input: { spec: { logLevel: 'error' } },
        strategyName: 'soak',
      },
    );
    const paused = await waitRollout(
      u.rollout.id,
      (r) => r.reason?.startsWith('PausedAfterStage') ?? false,
      'the timed pause',
    );
    expect(paused.state).toBe('RUNNING');
    const resumeAt = paused.waves[0]!.resumeAt!;
    // Persisted with the wave, so a restarted worker resumes on time.
    const row = await sql.query<{ resumeAt: Date }>(
      `SELECT "resumeAt" FROM "RolloutWave" WHERE "rolloutId" = $1::uuid AND index = 0`,
      [paused.uid],
    );
    expect(row.rows[0]!.resumeAt.toISOString()).toBe(resumeAt);
    expect(paused.waves[1]!.startedAt).toBeNull();
    // A worker restarted during the pause still resumes on time: nothing of it lives in memory.
    await worker.close();
    worker = await startWorker(workerEnv());
    // The restart happened inside the pause, and the new worker took the persisted time as is.
    expect(Date.now()).toBeLessThan(Date.parse(resumeAt));
    expect((await rollout(u.rollout.id)).waves[0]!.resumeAt).toBe(resumeAt);
    const done = await waitRollout(
      u.rollout.id,
      (r) => r.state === 'COMPLETED',
      'COMPLETED after the pause',
    );
    expect(done.waves[0]!.resumeAt).toBe(resumeAt);
    // Wave 1 starts on the persisted time: not before it, and within a few ticks after it (a
    // worker that restarted the pause from its own start would begin it seconds later).
    const lag = Date.parse(done.waves[1]!.startedAt!) - Date.parse(resumeAt);
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(2_000);
    expect(done.reason).toBeNull();
  });

  it('a strategy stops on NodeClaim launch failures a cluster reports', async () => {
    await gql(CREATE_STRATEGY, {
      input: {
        name: 'karpenter-gated',
        stages: [
          { count: 1, minHealthySeconds: 2 },
          { percent: 100, minHealthySeconds: 1 },
        ],
        maxNodeClaimLaunchFailures: 0,
        waveTimeoutSeconds: 120,
      },
    });
    // prod-a (first by name) cannot launch nodes: its sidecar (one from before launch failure
    // times, so every failure it sees counts) reports two NodeClaims Launched=False.
    sidecars.get('prod-a')!.metrics = { nodeClaimLaunchFailures: 2, oldestPendingPodSeconds: 0 };
    const later = Object.fromEntries(['prod-b', 'prod-c', 'prod-d'].map((n) => [n, observed(n)]));
    const { startRollout: r } = await gql<{ startRollout: RolloutView }>(START, {
      selector: 'env=prod',
      change: { featureGates: { SpotToSpotConsolidation: true } },
      strategyName: 'karpenter-gated',
    });
    expect(r.strategy.maxNodeClaimLaunchFailures).toBe(0);
    const failed = await waitRollout(r.id, (x) => x.state === 'FAILED', 'FAILED');
    expect(failed.reason).toMatch(
      /^TooManyFailures: 1 clusters failed, more than maxFailures 0: prod-a \(NodeClaimLaunchFailures: 2 NodeClaims/,
    );
    expect(failed.waves[0]!.clusters[0]).toMatchObject({ clusterName: 'prod-a', state: 'FAILED' });
    expect(failed.waves[1]!.clusters.every((c) => c.state === 'PENDING')).toBe(true);
    for (const [name, generation] of Object.entries(later)) expect(observed(name)).toBe(generation);
    await gql(`mutation($id: ID!) { abortRollout(id: $id) { state } }`, { id: r.id });
    sidecars.get('prod-a')!.metrics = {};
  });

  it('an inline strategy stops on pods pending too long; strategy and strategyName exclude each other', async () => {
    const both = await refused(START, {
      selector: 'env=dev',
      change: { logLevel: 'debug' },
      strategy: { waves: [{ percent: 100 }] },
      strategyName: 'soak',
    });
    expect(both.extensions?.field).toBe('strategyName');
    // A pod unschedulable for an hour already: it counts only from the change being applied.
    const since = new Date(Date.now() - 3600_000).toISOString();
    sidecars.get('dev-a')!.metrics = { oldestPendingPodSince: since };
    const { startRollout: r } = await gql<{ startRollout: RolloutView }>(START, {
      selector: 'env=dev',
      change: { logLevel: 'debug' },
      // Held longer than the bound, so the gate is judged before the (only) wave completes.
      strategy: { waves: [{ percent: 100 }], minHealthySeconds: 10, maxPendingPodSeconds: 2 },
    });
    const failed = await waitRollout(r.id, (x) => x.state === 'FAILED', 'FAILED');
    const reason = failed.waves[0]!.clusters[0]!.reason!;
    expect(reason).toMatch(
      /^PodsPendingTooLong: an unschedulable pod has been pending for \d+s since the change, more than maxPendingPodSeconds 2$/,
    );
    const pendingSeconds = Number(/for (\d+)s/.exec(reason)![1]);
    expect(pendingSeconds).toBeGreaterThanOrEqual(3);
    expect(pendingSeconds).toBeLessThan(60);
  });
  it('a rollout failed during its approval wait runs that wave again on resume: fresh deadline, same gate', async () => {
    await gql(CREATE_STRATEGY, {
      input: {
        name: 'gate-resume',
        stages: [
          { selector: 'canary=true', minHealthySeconds: 0, approval: true },
          { percent: 100, minHealthySeconds: 0 },
        ],
        waveTimeoutSeconds: 120,
      },
    });
    const { startRollout: r } = await gql<{ startRollout: RolloutView }>(START, {
      selector: 'env=prod',
      change: { featureGates: { SpotToSpotConsolidation: false } },
      strategyName: 'gate-resume',
    });
    await waitRollout(r.id, (x) => x.state === 'WAITING_APPROVAL', 'the approval gate');
    // The wait outlasts the wave's deadline (moved into the past rather than waited for).
    await sql.query(
      `UPDATE "RolloutWave" SET "deadlineAt" = now() - interval '1 hour' WHERE "rolloutId" = $1::uuid`,
      [r.uid],
    );
    const canary = sidecars.get('prod-a')!;
    canary.failFrom = 0;
    const failed = await waitRollout(r.id, (x) => x.state === 'FAILED', 'FAILED during the wait');
    expect(failed.waves[0]!.state).toBe('FAILED');
    // Fixed, but still converging when resumed: judged against a fresh deadline, not the past one.
    canary.failFrom = undefined;
    canary.available = false;
    await canary.report();
    // Ingested before the resume (the stream lags on a loaded machine), so the driver judges
    // this report and not the failed one.
    await eventually(
      async () => {
        const { rows } = await sql.query<{ degraded: boolean }>(
          `SELECT conditions @> '[{"type": "Degraded", "status": "True"}]' AS degraded
             FROM "ClusterStatus" WHERE "clusterId" = $1::uuid`,
          [canary.uid],
        );
        return rows[0] && !rows[0].degraded ? true : undefined;
      },
      { timeoutMs: 30_000, what: "prod-a's fixed report ingested" },
    );
    await gql(`mutation($id: ID!) { resumeRollout(id: $id) { state } }`, { id: r.id });
    await new Promise((resolve) => setTimeout(resolve, 600)); // four ticks
    const resumed = await rollout(r.id);
    expect(resumed.state).toBe('RUNNING');
    expect(resumed.waves[0]!.state).toBe('RUNNING');
    expect(resumed.waves[0]!.clusters[0]).toMatchObject({
      clusterName: 'prod-a',
      state: 'APPLYING',
      reason: null,
    });
    canary.available = true;
    const again = await waitRollout(
      r.id,
      (x) => x.state === 'WAITING_APPROVAL',
      'the same gate again',
    );
    expect(again.waitingStage).toBe(0);
    expect(again.waves[1]!.clusters.every((c) => c.state === 'PENDING')).toBe(true);
    // A script following it is told at once that someone must approve (exit 7), not left waiting.
    const watched = await kfleet(['rollouts', 'watch', r.id]);
    expect(watched.code).toBe(7);
    expect(watched.stderr).toContain(`kfleet rollouts approve ${r.id}`);
    // So is a profile write over the clusters it holds, instead of "resume or abort".
    await writeFile(
      join(dir, 'held.yaml'),
      'apiVersion: fleet.karpenter.sh/v1alpha1\nkind: Profile\nmetadata:\n  name: held\nspec:\n  selector: env=prod\n  priority: 20\n  logLevel: info\n',
    );
    const applied = await kfleet(['apply', '-f', join(dir, 'held.yaml'), '--timeout', '5']);
    expect(applied.stderr).toContain(`kfleet rollouts approve ${r.id}`);
    expect(applied.code).toBe(7);
    await gql(`mutation($id: ID!) { abortRollout(id: $id) { state } }`, { id: r.id });
  });
  it('refuses a strategy whose gated first stage takes no cluster, rather than dropping the gate', async () => {
    await gql(CREATE_STRATEGY, {
      input: {
        name: 'canary-gated',
        stages: [
          { selector: 'canary=true', minHealthySeconds: 0, approval: true },
          { percent: 100, minHealthySeconds: 0 },
        ],
      },
    });
    const before = observed('dev-a');
    const err = await refused(START, {
      selector: 'env=dev',
      change: { logLevel: 'info' },
      strategyName: 'canary-gated',
    });
    expect(err.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'strategyName' });
    expect(err.message).toMatch(
      /^strategyName: strategy canary-gated: stage 0 \(selector canary=true\) has an approval gate but takes none of the 1 clusters/,
    );
    const rows = await sql.query(`SELECT 1 FROM "Rollout" WHERE "strategyName" = 'canary-gated'`);
    expect(rows.rowCount).toBe(0); // nothing half-written
    expect(observed('dev-a')).toBe(before);
  });
  it('same-name creates at once: one wins, the others are told the name exists; a stored strategy that no longer validates leaves the list readable', async () => {
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        api.admin<{ createRolloutStrategy: { name: string } }>(CREATE_STRATEGY, {
          input: { name: 'raced', stages: [{ percent: 100 }] },
        }),
      ),
    );
    expect(results.filter((r) => r.data?.createRolloutStrategy).length).toBe(1);
    const errors = results.flatMap((r) => (r.errors ?? []) as GqlError[]);
    expect(errors).toHaveLength(3);
    for (const e of errors)
      expect(e.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.name' });

    // Written before a rule tightened, or by hand: the others still list.
    await sql.query(
      `UPDATE "RolloutStrategy" SET stages = '[{"percent": 500}]'::jsonb WHERE name = 'raced'`,
    );
    const { rolloutStrategies } = await gql<{ rolloutStrategies: { name: string }[] }>(
      `{ rolloutStrategies { name } }`,
    );
    const names = rolloutStrategies.map((x) => x.name);
    expect(names).toContain('soak');
    expect(names).not.toContain('raced');
  });
});
