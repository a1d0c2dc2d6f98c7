import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  fleetEventsChannel,
  INGEST_GROUP,
  ingestKey,
  STATUS_INGEST_QUEUE,
  type Condition,
  type StatusReport,
} from '@fleet/contracts';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { reportDigest, StatusReporter } from '../../apps/sidecar/src/report/status-reporter.js';
import { startWorker } from '../../apps/worker/src/main.js';
import {
  flushLiveness,
  forgetDigests,
  readDigestFences,
  recordDigests,
} from '../../apps/worker/src/ingest/liveness.js';
import { removeIdleConsumers } from '../../apps/worker/src/ingest/report-stream.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import {
  condition,
  query,
  registerClusters,
  setEnabled,
  type RegisteredCluster,
} from '../faults/fleet-fixture.js';

const REDIS_URL = 'redis://127.0.0.1:6379';

interface Status {
  observedGeneration: number;
  lastReportAt: Date | null;
  conditions: Condition[];
}

/**
 * The report path of issue 19 through its real interfaces: the lean route in front of Express,
 * the report stream, the worker's batched drain, and heartbeats that change nothing (liveness in
 * Redis, flushed to PostgreSQL before each staleness sweep).
 */
describe('report stream and heartbeats', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let redis: Redis;
  let clusters: RegisteredCluster[];
  const prefix = testQueuePrefix();

  const post = (cluster: RegisteredCluster, body: unknown, path = 'status', token?: string) =>
    fetch(`${api.url}/v1/clusters/${cluster.uid}/${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token ?? cluster.reportToken}`,
      },
      body: JSON.stringify(body),
    });
  const report = (cluster: RegisteredCluster, generation: number, degraded = false) => {
    const at = new Date().toISOString();
    return {
      clusterId: cluster.uid,
      observedGeneration: generation,
      conditions: [
        condition('Available', 'True', 'AsExpected', at),
        condition('Degraded', degraded ? 'True' : 'False', degraded ? 'Broken' : 'AsExpected', at),
      ],
      metrics: { nodes: 3 },
      csrDecisions: [],
      reportedAt: at,
    } satisfies StatusReport;
  };
  const status = async (cluster: RegisteredCluster) =>
    (
      await query<Status>(
        db.url,
        `SELECT "observedGeneration", "lastReportAt", conditions FROM "ClusterStatus" WHERE "clusterId" = $1`,
        [cluster.uid],
      )
    )[0]!;
  const samples = async (cluster: RegisteredCluster) =>
    (
      await query<{ n: number }>(
        db.url,
        `SELECT count(*)::int AS n FROM "HealthSample" WHERE "clusterId" = $1`,
        [cluster.uid],
      )
    )[0]!.n;
  const stale = (s: Status) => s.conditions.some((c) => c.type === 'Stale' && c.status === 'True');

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: prefix };
    api = await startApi({ ...env, REPORTS_PER_CLUSTER_PER_MINUTE: '100000' });
    // Stale after 3 s of silence, judged every second; liveness reaches PostgreSQL only through
    // the flush the sweep does first (the periodic flush is pushed out of the test's reach).
    worker = await startWorker({
      ...env,
      LOG_LEVEL: 'warn',
      HEARTBEAT_SECONDS: '1',
      STALE_AFTER_HEARTBEATS: '3',
      SWEEP_EVERY_SECONDS: '1',
      LIVENESS_FLUSH_MS: '60000',
    });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    clusters = await registerClusters(api, 3, 'stream');
  }, 90_000);

  afterAll(async () => {
    const admin = new Redis(REDIS_URL);
    for (const c of clusters ?? []) await admin.call('ACL', 'DELUSER', `sidecar.${c.uid}`);
    admin.disconnect();
    redis?.disconnect();
    await worker?.close();
    await api?.app.close();
    await db?.drop();
  });

  it('commits an accepted report, and refuses a report for another cluster', async () => {
    const [a, b] = clusters as [RegisteredCluster, RegisteredCluster];
    const sent = Date.now();
    // A body's own receivedAt is not the fleet's: the entry carries the API's, which wins.
    const res = await post(a, { ...report(a, 1, true), receivedAt: '2099-01-01T00:00:00.000Z' });
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 202,
      body: { accepted: true },
    });
    const committed = await eventually(
      async () => {
        const s = await status(a);
        return s.lastReportAt && s.lastReportAt.getTime() >= sent - 1000 ? s : undefined;
      },
      { timeoutMs: 20_000, what: 'the report committed' },
    );
    expect(committed.conditions.find((c) => c.type === 'Degraded')?.status).toBe('True');
    // Stamped by the fleet's clock, not the body's.
    expect(committed.lastReportAt!.getTime()).toBeLessThanOrEqual(Date.now() + 1000);

    // A's token on B's path: 401; A's own path with B in the body: 403. Nothing queued for B.
    const length = await redis.xlen(ingestKey(prefix, 'reports'));
    const foreignToken = await post(b, report(b, 1), 'status', a.reportToken);
    expect({ status: foreignToken.status, body: await foreignToken.json() }).toEqual({
      status: 401,
      body: { error: 'Unauthorized', message: 'a valid cluster token is required' },
    });
    const foreignBody = await post(a, report(b, 1));
    expect({ status: foreignBody.status, body: await foreignBody.json() }).toEqual({
      status: 403,
      body: { error: 'Forbidden', message: 'a sidecar reports only for its own cluster' },
    });
    const beat = await post(
      b,
      { clusterId: b.uid, digest: 'a'.repeat(64) },
      'heartbeat',
      a.reportToken,
    );
    expect(beat.status).toBe(401);
    // Bad input names its field; an unknown generation is refused.
    const bad = await post(a, { ...report(a, 1), observedGeneration: -1 });
    expect({ status: bad.status, field: ((await bad.json()) as { field: string }).field }).toEqual({
      status: 400,
      field: 'observedGeneration',
    });
    const ahead = await post(a, report(a, 99));
    expect(ahead.status).toBe(400);
    expect(await redis.xlen(ingestKey(prefix, 'reports'))).toBeLessThanOrEqual(length);
    expect(await samples(b)).toBe(0);

    // A path that is not valid percent-encoding is refused, and the API goes on serving.
    const malformed = await fetch(`${api.url}/v1/clusters/%ZZ/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.reportToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(report(a, 1)),
    });
    expect(malformed.status).toBe(401);
    // The id in upper case is the same cluster: its token works, and a body naming it in upper
    // case (which the writer would not find) is refused rather than accepted and lost.
    const upper = { ...a, uid: a.uid.toUpperCase() };
    expect((await post(upper, report(a, 1))).status).toBe(202);
    expect((await post(upper, { ...report(a, 1), clusterId: upper.uid })).status).toBe(403);
  });

  it('does not apply an older generation reported after a newer one', async () => {
    const a = clusters[0]!;
    const generation = await setEnabled(api, a, true);
    expect((await post(a, report(a, generation))).status).toBe(202);
    expect((await post(a, report(a, generation - 1, true))).status).toBe(202);
    const sent = Date.now();
    // Both recorded as samples; status stays at the newer generation and its conditions.
    await eventually(
      async () => {
        const n = (
          await query<{ n: number }>(
            db.url,
            `SELECT count(*)::int AS n FROM "HealthSample" WHERE "clusterId" = $1 AND "observedGeneration" = $2`,
            [a.uid, generation - 1],
          )
        )[0]!.n;
        return n >= 2 ? true : undefined;
      },
      { timeoutMs: 20_000, what: 'the older report ingested too' },
    );
    const s = await status(a);
    expect(s.observedGeneration).toBe(generation);
    expect(s.conditions.find((c) => c.type === 'Degraded')?.status).toBe('False');
    expect(s.lastReportAt!.getTime()).toBeLessThanOrEqual(sent);
  });

  it('a heartbeat that changes nothing refreshes liveness only, and keeps the cluster from going Stale', async () => {
    const b = clusters[1]!;
    const reporter = new StatusReporter(api.url, b.uid, b.reportToken);
    const unchanged = () => ({ ...report(b, 1), conditions: report(b, 1, false).conditions });
    // One fixed body: the same conditions at the same times, as an idle sidecar reports.
    const body = unchanged();
    await reporter.send({ ...body, reportedAt: new Date().toISOString() }, 1);
    // Applied, and its digest recorded by the worker: from now on heartbeats are enough.
    await eventually(
      async () => ((await redis.hget(ingestKey(prefix, 'digests'), b.uid)) ? true : undefined),
      { timeoutMs: 20_000, what: 'the digest of the applied report' },
    );
    const sampled = await samples(b);
    const until = Date.now() + 6_000; // twice the Stale delay
    while (Date.now() < until) {
      await reporter.send({ ...body, reportedAt: new Date().toISOString() }, 1);
      expect(stale(await status(b))).toBe(false);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(reporter.heartbeats).toBeGreaterThan(5);
    // No report went through the stream: no new health sample.
    expect(await samples(b)).toBe(sampled);
    const refreshed = await status(b);
    expect(refreshed.lastReportAt!.getTime()).toBeGreaterThan(until - 3_000);

    // Silent: Stale, and the applied digest forgotten, so the next heartbeat is answered 409
    // and the full report that follows clears Stale.
    await eventually(async () => (stale(await status(b)) ? true : undefined), {
      timeoutMs: 20_000,
      what: 'Stale after silence',
    });
    const refused = await post(b, { clusterId: b.uid, digest: reportDigest(body) }, 'heartbeat');
    expect(refused.status).toBe(409);
    const beats = reporter.heartbeats;
    await reporter.send({ ...body, reportedAt: new Date().toISOString() }, 1);
    expect(reporter.heartbeats).toBe(beats);
    await eventually(async () => (stale(await status(b)) ? undefined : true), {
      timeoutMs: 20_000,
      what: 'Stale cleared by the full report',
    });
  });

  it('a full report that says again what the status holds moves lastReportAt and adds a health sample, and writes nothing else', async () => {
    const [d] = await registerClusters(api, 1, 'repeat');
    clusters.push(d!);
    const cluster = d!;
    const row = async () =>
      (
        await query<{
          lastReportAt: Date;
          updatedAt: Date;
          reportDigest: string | null;
          metrics: { nodes: number };
        }>(
          db.url,
          `SELECT "lastReportAt", "updatedAt", "reportDigest", metrics FROM "ClusterStatus" WHERE "clusterId" = $1`,
          [cluster.uid],
        )
      )[0]!;
    const content = report(cluster, 1);
    const digest = reportDigest(content);
    expect((await post(cluster, { ...content, digest })).status).toBe(202);
    const first = await eventually(
      async () => {
        const r = await row();
        return r.reportDigest === digest ? r : undefined;
      },
      { timeoutMs: 20_000, what: 'the first report applied with its digest' },
    );
    const events: string[] = [];
    const subscriber = new Redis(REDIS_URL);
    try {
      subscriber.on('message', (_channel: string, message: string) => {
        const event = JSON.parse(message) as { type: string; clusterId?: string };
        if (event.type === 'cluster-changed' && event.clusterId === cluster.uid)
          events.push('changed');
      });
      // The first report's event (published every 100 ms) is out before the subscription.
      await new Promise((r) => setTimeout(r, 300));
      await subscriber.subscribe(fleetEventsChannel(prefix));

      const again = { ...content, reportedAt: new Date().toISOString(), digest };
      expect((await post(cluster, again)).status).toBe(202);
      await eventually(async () => ((await samples(cluster)) === 2 ? true : undefined), {
        timeoutMs: 20_000,
        what: 'the repeated report sampled',
      });
      const repeated = await row();
      expect(repeated.lastReportAt.getTime()).toBeGreaterThan(first.lastReportAt.getTime());
      expect(repeated.updatedAt).toEqual(first.updatedAt);
      await new Promise((r) => setTimeout(r, 300));
      expect(events).toEqual([]);

      // A report that changes something is written whole, and announced.
      const changed = { ...content, metrics: { nodes: 4 }, reportedAt: new Date().toISOString() };
      expect((await post(cluster, { ...changed, digest: reportDigest(changed) })).status).toBe(202);
      const written = await eventually(
        async () => {
          const r = await row();
          return r.metrics.nodes === 4 ? r : undefined;
        },
        { timeoutMs: 20_000, what: 'the changed report applied' },
      );
      expect(written.updatedAt.getTime()).toBeGreaterThan(first.updatedAt.getTime());
      expect(written.reportDigest).toBe(reportDigest(changed));
      await eventually(() => Promise.resolve(events.length ? true : undefined), {
        timeoutMs: 5_000,
        what: 'the changed report announced',
      });
    } finally {
      subscriber.disconnect();
    }
  });

  it('does not record a digest that a sweep forgot while its report was being written', async () => {
    // A cluster that never reported: Stale, and its digest forgotten by the sweep that said so.
    const c = clusters[2]!;
    await eventually(async () => (stale(await status(c)) ? true : undefined), {
      timeoutMs: 20_000,
      what: 'the silent cluster Stale',
    });
    const digest = 'c'.repeat(64);
    const beat = () => post(c, { clusterId: c.uid, digest }, 'heartbeat');
    // The race: fences read before a report's transaction, the sweep commits Stale over that
    // report and forgets the digest, then the worker records the report's digest. Recorded, it
    // would have every heartbeat accepted while the cluster stays Stale for good.
    const before = await readDigestFences(redis, prefix, [c.uid]);
    await forgetDigests(redis, prefix, [c.uid]);
    expect(await recordDigests(redis, prefix, [{ clusterId: c.uid, digest }], before)).toBe(0);
    expect(await redis.hget(ingestKey(prefix, 'digests'), c.uid)).toBeNull();
    expect((await beat()).status).toBe(409);
    // A report written after the forget (it saw Stale and cleared it) records its digest.
    const after = await readDigestFences(redis, prefix, [c.uid]);
    expect(await recordDigests(redis, prefix, [{ clusterId: c.uid, digest }], after)).toBe(1);
    expect((await beat()).status).toBe(202);
    // A forget after the record removes it, whatever the order.
    await forgetDigests(redis, prefix, [c.uid]);
    expect((await beat()).status).toBe(409);
    // Fences that could not be read: the digest held (maybe of a replaced status) is deleted.
    const again = await readDigestFences(redis, prefix, [c.uid]);
    expect(await recordDigests(redis, prefix, [{ clusterId: c.uid, digest }], again)).toBe(1);
    expect((await beat()).status).toBe(202);
    const other = 'd'.repeat(64);
    expect(
      await recordDigests(redis, prefix, [{ clusterId: c.uid, digest: other }], new Map()),
    ).toBe(0);
    expect(await redis.hget(ingestKey(prefix, 'digests'), c.uid)).toBeNull();
    expect((await beat()).status).toBe(409);
  });

  it('through the consumer: fences are read before the report is written, so a forget while it is written wins', async () => {
    const [c] = await registerClusters(api, 1, 'fence');
    clusters.push(c!);
    const digests = ingestKey(prefix, 'digests');
    const committedAfter = (sent: number) =>
      eventually(
        async () => {
          const s = await status(c!);
          return s.lastReportAt && s.lastReportAt.getTime() >= sent - 1000 ? true : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 50, what: 'the report committed' },
      );
    // Undisturbed, the consumer records the report's digest (so the check below can fail).
    let sent = Date.now();
    expect((await post(c!, { ...report(c!, 1), digest: 'a'.repeat(64) })).status).toBe(202);
    await committedAfter(sent);
    await eventually(
      async () => ((await redis.hget(digests, c!.uid)) === 'a'.repeat(64) ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: 'the digest recorded',
      },
    );
    // Now hold the cluster's status row: the next batch blocks inside its transaction, after it
    // read the fences. A sweep forgets the digest meanwhile; the batch must not record its own.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "ClusterStatus" WHERE "clusterId" = $1 FOR UPDATE`, [
        c!.uid,
      ]);
      sent = Date.now();
      expect((await post(c!, { ...report(c!, 1, true), digest: 'b'.repeat(64) })).status).toBe(202);
      await eventually(
        async () => {
          const { rows } = await holder.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
              WHERE NOT l.granted AND a.datname = current_database()`,
          );
          return rows[0]!.n > 0 ? true : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 20, what: 'the batch waiting for the status row' },
      );
      await forgetDigests(redis, prefix, [c!.uid]);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    await committedAfter(sent);
    expect((await status(c!)).conditions.find((x) => x.type === 'Degraded')?.status).toBe('True');
    // Give the consumer the moment between its commit and its record, then look.
    await eventually(
      async () => {
        const pending = await redis.xpending(ingestKey(prefix, 'reports'), INGEST_GROUP);
        return Number(pending[0]) === 0 ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20, what: 'the batch acknowledged' },
    );
    expect(await redis.hget(digests, c!.uid)).toBeNull();
  });

  it('deregistration deletes the cluster’s digest and digest fence', async () => {
    const [c] = await registerClusters(api, 1, 'gone');
    await recordDigests(
      redis,
      prefix,
      [{ clusterId: c!.uid, digest: 'e'.repeat(64) }],
      new Map([[c!.uid, '0']]),
    );
    await forgetDigests(redis, prefix, [c!.uid]);
    await recordDigests(
      redis,
      prefix,
      [{ clusterId: c!.uid, digest: 'e'.repeat(64) }],
      new Map([[c!.uid, '1']]),
    );
    expect(await redis.hget(ingestKey(prefix, 'digest-fences'), c!.uid)).toBe('1');
    expect(await redis.hget(ingestKey(prefix, 'digests'), c!.uid)).toBe('e'.repeat(64));
    const res = await api.admin(
      `mutation($id: ID!) { deregisterCluster(clusterId: $id) { name } }`,
      {
        id: c!.id,
      },
    );
    expect(res.errors).toBeUndefined();
    expect(await redis.hexists(ingestKey(prefix, 'digest-fences'), c!.uid)).toBe(0);
    expect(await redis.hexists(ingestKey(prefix, 'digests'), c!.uid)).toBe(0);
  });

  it('lists a report stream dead letter under the plain queue name, and redrives it there', async () => {
    const c = clusters[2]!;
    // An entry that is not a status report: dead-lettered at once by the worker.
    const body = { clusterId: c.uid, note: 'not a report' };
    await redis.xadd(ingestKey(prefix, 'reports'), '*', 'r', JSON.stringify(body));
    const LIST = `{ deadLetters(first: 10) { nodes { id queue jobId failedReason data } } }`;
    type Listed = {
      deadLetters: {
        nodes: { id: string; queue: string; jobId: string; failedReason: string; data: unknown }[];
      };
    };
    const letter = await eventually(
      async () =>
        (await api.admin<Listed>(LIST)).data?.deadLetters.nodes.find(
          (n) => (n.data as { note?: string } | null)?.note === body.note,
        ),
      { timeoutMs: 20_000, what: 'the dead letter of the stream entry' },
    );
    expect(letter).toMatchObject({ queue: 'status-ingest', failedReason: 'not a status report' });
    expect(letter.id).toMatch(/^status-ingest\.stream\./);
    const redriven = await api.admin(`mutation($id: ID!) { redriveDeadLetter(id: $id) { id } }`, {
      id: letter.id,
    });
    expect(redriven.errors).toBeUndefined();
    // The worker drains the BullMQ status-ingest queue: the job landed there (and fails again).
    const ingest = new Queue(STATUS_INGEST_QUEUE, { connection: redis, prefix });
    try {
      const jobs = await ingest.getJobs(['waiting', 'active', 'failed', 'completed', 'delayed']);
      expect(jobs.some((j) => j.id?.startsWith(`${letter.jobId}.redrive.`))).toBe(true);
    } finally {
      await ingest.close();
    }
  });

  it('removes consumers idle past the threshold that hold no pending entry, and only those', async () => {
    const key = `${prefix}:consumers-test`;
    await redis.xgroup('CREATE', key, INGEST_GROUP, '0', 'MKSTREAM');
    for (let i = 0; i < 3; i++) await redis.xadd(key, '*', 'r', '{}');
    const read = async (consumer: string) =>
      (
        (await redis.xreadgroup(
          'GROUP',
          INGEST_GROUP,
          consumer,
          'COUNT',
          1,
          'STREAMS',
          key,
          '>',
        )) as [string, [string, string[]][]][] | null
      )?.[0]?.[1][0]?.[0];
    await read('dead-with-pending'); // takes an entry and never acknowledges it
    // Took and acknowledged its entries: no pending entry left.
    await redis.xack(key, INGEST_GROUP, (await read('dead-idle'))!);
    await redis.xack(key, INGEST_GROUP, (await read('self'))!);
    const names = async () =>
      ((await redis.xinfo('CONSUMERS', key, INGEST_GROUP)) as unknown[][])
        .map((c) => String(c[1]))
        .sort();
    // Not idle long enough yet: nobody goes.
    expect(await removeIdleConsumers(redis, key, INGEST_GROUP, 60_000, 'self')).toEqual([]);
    await new Promise((r) => setTimeout(r, 120));
    expect(await removeIdleConsumers(redis, key, INGEST_GROUP, 100, 'self')).toEqual(['dead-idle']);
    expect(await names()).toEqual(['dead-with-pending', 'self']);
    const pending = (await redis.xpending(key, INGEST_GROUP)) as [number, ...unknown[]];
    expect(pending[0]).toBe(1);
    // No stream (a flushed Redis): nothing to do, no error.
    expect(await removeIdleConsumers(redis, `${key}-gone`, INGEST_GROUP, 100, 'self')).toEqual([]);
    await redis.del(key);
    // The worker's own consumer on the real stream is still in its group.
    const live = (await redis.xinfo(
      'CONSUMERS',
      ingestKey(prefix, 'reports'),
      INGEST_GROUP,
    )) as unknown[][];
    expect(live.length).toBeGreaterThan(0);
  });

  it('flushes and forgets a backlog of 200,000 clusters in bounded pieces, and catches up', async () => {
    // Keys of their own: the test's worker must not flush this backlog meanwhile.
    const backlog = `${prefix}-backlog`;
    const ids = Array.from({ length: 200_000 }, () => randomUUID());
    const heardAt = Date.now();
    for (let start = 0; start < ids.length; start += 10_000) {
      const fields = ids.slice(start, start + 10_000).flatMap((id) => [id, String(heardAt)]);
      await redis.hset(ingestKey(backlog, 'liveness'), ...fields);
    }
    // One of them is a registered cluster: its liveness reaches PostgreSQL with the rest.
    await redis.hset(ingestKey(backlog, 'liveness'), clusters[0]!.uid, String(heardAt));
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      expect(await flushLiveness(redis, pool, backlog)).toBe(200_001);
    } finally {
      await pool.end();
    }
    expect(await redis.hlen(ingestKey(backlog, 'liveness-flushing'))).toBe(0);
    expect((await status(clusters[0]!)).lastReportAt?.getTime()).toBe(heardAt);
    await forgetDigests(redis, backlog, ids);
    expect(await redis.hlen(ingestKey(backlog, 'digest-fences'))).toBe(200_000);
    await redis.del(ingestKey(backlog, 'digest-fences'));
  }, 60_000);
});
