import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEAD_LETTER_QUEUE, RECONCILE_QUEUE, type DeadLetter } from '@fleet/contracts';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
// Tests boot the real worker in process; the apps-never-import-apps rule is about app code.
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';

/**
 * Issue 17, points 1, 2 and 4: what a token scoped by labels can reach beyond its scope, tried
 * through the real API (and worker), PostgreSQL and Redis.
 */
describe('security: scoped tokens stay within their scope', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let sql: pg.Client;
  let redis: Redis;
  let prefix: string;
  const uids: Record<string, string> = {};

  const CREATE = `mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) { secret token { id role labelSelector } } }`;
  const REVOKE = `mutation($id: ID!) { revokeApiToken(id: $id) { id revokedAt } }`;
  const code = (res: { errors?: readonly { extensions?: Record<string, unknown> }[] }) =>
    res.errors?.[0]?.extensions?.code;
  const tokenCount = async () =>
    (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM "ApiToken"')).rows[0]!.n;
  const audits = async (action: string) =>
    (
      await sql.query<{ actor: string; before: unknown; after: unknown; clusterId: string | null }>(
        'SELECT actor, before, after, "clusterId" FROM "AuditEvent" WHERE action = $1 ORDER BY id',
        [action],
      )
    ).rows;

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    for (const [name, team] of [
      ['a-1', 'a'],
      ['b-1', 'b'],
      ['c-1', 'c'],
    ] as const) {
      const res = await api.admin<{ registerCluster: { cluster: { uid: string } } }>(
        `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { uid } } }`,
        {
          input: {
            name,
            topology: 'STANDALONE',
            platform: 'AWS',
            region: 'us-east-1',
            labels: { team, env: 'prod' },
          },
        },
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      uids[name] = res.data.registerCluster.cluster.uid;
    }
  });

  afterAll(async () => {
    await sql?.end();
    await api?.app.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await db?.drop();
  });

  describe('point 1: a scoped ADMIN', () => {
    let scopedAdmin: string;
    beforeAll(async () => {
      scopedAdmin = await api.createToken('ADMIN', { labelSelector: 'team=a', name: 'admin-a' });
    });

    it('cannot create a token wider than its own scope, and writes nothing trying', async () => {
      const gql = api.as(scopedAdmin);
      const before = await tokenCount();
      for (const labelSelector of [null, 'env=prod', 'team in (a,b)', 'team', 'team!=b']) {
        const res = await gql(CREATE, { input: { name: 'escape', role: 'ADMIN', labelSelector } });
        expect({ labelSelector, code: code(res) }).toEqual({ labelSelector, code: 'FORBIDDEN' });
      }
      expect(await tokenCount()).toBe(before);
      const narrower = await gql<{ createApiToken: { token: { labelSelector: string } } }>(CREATE, {
        input: { name: 'ops-a-prod', role: 'OPERATOR', labelSelector: 'team=a,env=prod' },
      });
      expect(narrower.errors).toBeUndefined();
      expect(narrower.data?.createApiToken.token.labelSelector).toBe('team=a,env=prod');
    });

    it('cannot see or revoke tokens outside its scope (the real admins)', async () => {
      const all = await api.admin<{ apiTokens: { id: string; name: string }[] }>(
        `{ apiTokens { id name } }`,
      );
      const bootstrap = all.data!.apiTokens.find((t) => t.name === 'bootstrap-admin')!;
      const gql = api.as(scopedAdmin);
      const mine = await gql<{ apiTokens: { name: string }[] }>(`{ apiTokens { name } }`);
      expect(mine.data?.apiTokens.map((t) => t.name).sort()).toEqual(['admin-a', 'ops-a-prod']);
      expect(code(await gql(REVOKE, { id: bootstrap.id }))).toBe('NOT_FOUND');
      expect((await api.admin(`{ viewer { name } }`)).errors).toBeUndefined();
      const revoked = await sql.query('SELECT 1 FROM "ApiToken" WHERE "revokedAt" IS NOT NULL');
      expect(revoked.rowCount).toBe(0);
    });

    it('reads and redrives only the dead letters of its clusters', async () => {
      const dlq = new Queue<DeadLetter>(DEAD_LETTER_QUEUE, { connection: redis, prefix });
      for (const name of ['a-1', 'b-1']) {
        await dlq.add(
          'dead-letter',
          {
            queue: RECONCILE_QUEUE,
            jobId: `${uids[name]}.1`,
            name: 'reconcile',
            data: { clusterId: uids[name], generation: 1 },
            attempts: 10,
            attemptsMade: 10,
            failedReason: `boom ${name}`,
            failedAt: new Date().toISOString(),
          },
          { jobId: `reconcile.${uids[name]}.1` },
        );
      }
      await dlq.close();
      const LIST = `{ deadLetters(first: 10) { totalCount nodes { id failedReason } } }`;
      const gql = api.as(scopedAdmin);
      const seen = await gql<{
        deadLetters: { totalCount: number; nodes: { id: string; failedReason: string }[] };
      }>(LIST);
      expect(seen.data?.deadLetters).toEqual({
        totalCount: 1,
        nodes: [{ id: `reconcile.${uids['a-1']}.1`, failedReason: 'boom a-1' }],
      });
      const other = await gql(`mutation($id: ID!) { redriveDeadLetter(id: $id) { id } }`, {
        id: `reconcile.${uids['b-1']}.1`,
      });
      expect(code(other)).toBe('NOT_FOUND');
      const all = await gql<{ redriveAllDeadLetters: number }>(
        `mutation { redriveAllDeadLetters }`,
      );
      expect(all.data?.redriveAllDeadLetters).toBe(1);
      const left = await api.admin<{ deadLetters: { nodes: { failedReason: string }[] } }>(LIST);
      expect(left.data?.deadLetters.nodes.map((n) => n.failedReason)).toEqual(['boom b-1']);
      expect(await audits('redriveDeadLetter')).toEqual([
        expect.objectContaining({ actor: 'admin-a', clusterId: uids['a-1'] }),
      ]);
    });
  });

  describe('point 4: token changes are audited; blank selectors are refused', () => {
    it('records createApiToken and revokeApiToken with who did it and never the hash', async () => {
      const created = await api.admin<{ createApiToken: { token: { id: string } } }>(CREATE, {
        input: { name: 'audited', role: 'VIEWER' },
      });
      const id = created.data!.createApiToken.token.id;
      expect((await api.admin(REVOKE, { id })).errors).toBeUndefined();
      const [create] = (await audits('createApiToken')).filter(
        (a) => (a.after as { id: string }).id === id,
      );
      expect(create).toMatchObject({
        actor: 'bootstrap-admin',
        after: { id, name: 'audited', role: 'VIEWER', labelSelector: null },
      });
      const [revoke] = await audits('revokeApiToken');
      expect(revoke).toMatchObject({
        actor: 'bootstrap-admin',
        before: { id, revokedAt: null },
        after: { id, revokedAt: expect.any(String) },
      });
      expect(JSON.stringify([create, revoke])).not.toMatch(/tokenHash|[0-9a-f]{64}/);
    });

    it('refuses a whitespace-only token scope and rollout selector, naming the field', async () => {
      const before = await tokenCount();
      const token = await api.admin(CREATE, {
        input: { name: 'blank', role: 'OPERATOR', labelSelector: '   ' },
      });
      expect(token.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'input.labelSelector',
      });
      expect(await tokenCount()).toBe(before);
      const rollout = await api.admin(
        `mutation { startRollout(selector: " \\t ", change: { logLevel: debug }) { id } }`,
      );
      expect(rollout.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'selector',
      });
      expect((await sql.query('SELECT 1 FROM "Rollout"')).rowCount).toBe(0);
    });
  });

  describe('point 2: a rollout seen through one cluster', () => {
    const FIELDS = `id state counts { total } waves { clusters { clusterName } }`;
    let rolloutId: string;
    let scopedOperator: string;

    beforeAll(async () => {
      scopedOperator = await api.createToken('OPERATOR', { labelSelector: 'team=a' });
      const res = await api.admin<{ startRollout: { id: string } }>(
        `mutation { startRollout(selector: "team in (a,b)", change: { logLevel: debug }) { id } }`,
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      rolloutId = res.data.startRollout.id;
    });

    it('shows a scoped reader only its own clusters, by ID and in lists', async () => {
      const gql = api.as(scopedOperator);
      const one = await gql<{
        rollout: { counts: { total: number }; waves: { clusters: { clusterName: string }[] }[] };
      }>(`query($id: ID!) { rollout(id: $id) { ${FIELDS} } }`, { id: rolloutId });
      expect(one.data?.rollout.counts.total).toBe(1);
      expect(one.data?.rollout.waves.flatMap((w) => w.clusters.map((c) => c.clusterName))).toEqual([
        'a-1',
      ]);
      const list = await gql<{
        rollouts: { nodes: { waves: { clusters: { clusterName: string }[] }[] }[] };
      }>(`{ rollouts(first: 10) { nodes { ${FIELDS} } } }`);
      expect(
        list.data?.rollouts.nodes.flatMap((n) =>
          n.waves.flatMap((w) => w.clusters.map((c) => c.clusterName)),
        ),
      ).toEqual(['a-1']);
    });

    it('refuses pause and abort to a token that does not cover every cluster of it', async () => {
      const gql = api.as(scopedOperator);
      const pause = await gql(`mutation($id: ID!) { pauseRollout(id: $id) { state } }`, {
        id: rolloutId,
      });
      expect(code(pause)).toBe('FORBIDDEN');
      const abort = await gql(`mutation($id: ID!) { abortRollout(id: $id) { state } }`, {
        id: rolloutId,
      });
      expect(code(abort)).toBe('FORBIDDEN');
      const state = await sql.query<{ state: string }>('SELECT state::text FROM "Rollout"');
      expect(state.rows).toEqual([{ state: 'RUNNING' }]);
      const aborted = await api.admin<{ abortRollout: { state: string } }>(
        `mutation($id: ID!) { abortRollout(id: $id) { state } }`,
        { id: rolloutId },
      );
      expect(aborted.data?.abortRollout.state).toBe('ABORTED');
    });
  });

  describe('point 4: the rollout driver re-checks the starting token', () => {
    it('changes nothing on the authority of a token revoked after the start, and pauses', async () => {
      const starter = await api.createToken('OPERATOR', {
        labelSelector: 'team=c',
        name: 'starter-c',
      });
      const started = await api.as(starter)<{ startRollout: { id: string; uid: string } }>(
        `mutation { startRollout(selector: "", change: { logLevel: debug }) { id uid } }`,
      );
      if (!started.data) throw new Error(JSON.stringify(started.errors));
      const { rows } = await sql.query<{ id: string }>(
        `SELECT id FROM "ApiToken" WHERE name = 'starter-c'`,
      );
      expect((await api.admin(REVOKE, { id: rows[0]!.id })).errors).toBeUndefined();
      const generation = async () =>
        (
          await sql.query<{ generation: number }>(
            'SELECT generation FROM "DesiredState" WHERE "clusterId" = $1',
            [uids['c-1']],
          )
        ).rows[0]!.generation;
      const before = await generation();
      const worker = await startWorker({
        DATABASE_URL: db.url,
        QUEUE_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        ROLLOUT_TICK_MS: '100',
      });
      try {
        const paused = await eventually(
          async () => {
            const r = await sql.query<{ state: string; reason: string | null }>(
              'SELECT state::text, reason FROM "Rollout" WHERE id = $1',
              [started.data!.startRollout.uid],
            );
            const row = r.rows[0]!;
            return row.state !== 'RUNNING' || (await generation()) !== before ? row : undefined;
          },
          { timeoutMs: 15_000, what: 'the driver to act on the rollout' },
        );
        expect(paused.state).toBe('PAUSED');
        expect(paused.reason).toMatch(/^StarterTokenInvalid: .*starter-c.* was revoked/);
        expect(await generation()).toBe(before);
      } finally {
        await worker.close();
      }
    });
  });
});
