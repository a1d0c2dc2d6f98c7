import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startApi, type RunningApi } from '../api/start-api.js';

/**
 * Issue 17 point 7: what callers without a valid credential can make the API hold or do is
 * bounded, while authenticated traffic from one address is never limited by it. Every
 * assertion counts outcomes (status codes, error codes, metric values), none measures time.
 */
const PER_ADDRESS = 25;
const REPORTS_PER_MINUTE = 30;

const REGISTER = `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1" }) {
  reportToken cluster { id uid } } }`;

describe('unauthenticated and per-credential load', () => {
  let db: TestDatabase;
  let api: RunningApi;
  const clusters: { reportToken: string; cluster: { uid: string } }[] = [];

  /** A sample's value; `label` is one `key="value"` the sample must carry. */
  const metric = async (name: string, label = ''): Promise<number> => {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(label));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  const codeOf = async (secret: string, operationName = 'Probe') => {
    const res = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ query: `query ${operationName} { fleetSummary { clusters } }` }),
    });
    const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
    return body.errors?.[0]?.extensions?.code ?? 'OK';
  };
  const tally = (codes: string[]) =>
    codes.reduce<Record<string, number>>((t, c) => ({ ...t, [c]: (t[c] ?? 0) + 1 }), {});
  const report = (uid: string, token: string) =>
    fetch(`${api.url}/v1/clusters/${uid}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        clusterId: uid,
        observedGeneration: 1,
        conditions: [],
        reportedAt: new Date().toISOString(),
      }),
    }).then((r) => r.status);

  const heartbeat = (uid: string, token: string, body: object) =>
    fetch(`${api.url}/v1/clusters/${uid}/heartbeat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }).then((r) => r.status);

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      RATE_LIMIT_PER_MINUTE: '1000000',
      UNAUTHENTICATED_PER_WINDOW: String(PER_ADDRESS),
      // One window for the whole suite: counts cannot straddle a reset.
      UNAUTHENTICATED_WINDOW_SECONDS: '3600',
      REPORTS_PER_CLUSTER_PER_MINUTE: String(REPORTS_PER_MINUTE),
    });
    for (const name of ['load-a', 'load-b', 'load-c']) {
      const res = await api.admin<{ registerCluster: (typeof clusters)[number] }>(REGISTER, {
        name,
      });
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      clusters.push(res.data.registerCluster);
    }
  });

  afterAll(async () => {
    await api?.app.close();
    const admin = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    for (const c of clusters) await admin.call('ACL', 'DELUSER', `sidecar.${c.cluster.uid}`);
    admin.disconnect();
    await db?.drop();
  });

  it('never limits authenticated traffic from one address, however much of it', async () => {
    const codes: string[] = [];
    for (let i = 0; i < 4 * PER_ADDRESS; i++) codes.push(await codeOf(api.adminToken));
    expect(tally(codes)).toEqual({ OK: 4 * PER_ADDRESS });
  });

  it('bounds database look-ups of bogus secrets per address, and caches none of them', async () => {
    // The sidecar of cluster a has reported before (its credentials are known to this API).
    expect(await report(clusters[0]!.cluster.uid, clusters[0]!.reportToken)).toBe(202);
    const lookupsBefore = await metric('fleet_api_token_lookups_total', 'outcome="invalid"');
    const codes: string[] = [];
    for (let i = 0; i < 8 * PER_ADDRESS; i++)
      codes.push(await codeOf(`kf_${randomBytes(24).toString('base64url')}`));
    expect(tally(codes)).toEqual({ UNAUTHENTICATED: PER_ADDRESS, RATE_LIMITED: 7 * PER_ADDRESS });
    const lookups =
      (await metric('fleet_api_token_lookups_total', 'outcome="invalid"')) - lookupsBefore;
    expect(lookups).toBe(PER_ADDRESS);
    // Only the one valid token is held.
    expect(await metric('fleet_api_token_cache_entries')).toBe(1);
    // A token the API knows to be valid still works from this address once it is over budget.
    expect(await codeOf(api.adminToken)).toBe('OK');
    // Reports for clusters this API does not know, from the same address, are refused before
    // any look-up too.
    expect(await report(randomUUID(), 'not-the-token')).toBe(429);
    // The sidecar holding the cluster's real token is not locked out by its neighbours.
    expect(await report(clusters[0]!.cluster.uid, clusters[0]!.reportToken)).toBe(202);
  });

  it('labels GraphQL metrics by schema fields, never by the client-chosen operationName', async () => {
    for (let i = 0; i < 20; i++) await codeOf(api.adminToken, `Attacker${i}${'x'.repeat(50)}`);
    const text = await (await fetch(`${api.url}/metrics`)).text();
    expect(text).not.toMatch(/Attacker/);
    expect(text).toMatch(
      /fleet_graphql_request_duration_seconds_count\{[^}]*operation="fleetSummary",type="query",outcome="ok"/,
    );
  });

  it('limits reports per cluster, not per address', async () => {
    const [a, b] = clusters as [(typeof clusters)[number], (typeof clusters)[number]];
    // The limit counts per minute: a burst that crossed a minute boundary is sent again.
    let statuses: number[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const minute = Math.floor(Date.now() / 60_000);
      statuses = await Promise.all(
        Array.from({ length: REPORTS_PER_MINUTE + 10 }, () => report(b.cluster.uid, b.reportToken)),
      );
      if (Math.floor(Date.now() / 60_000) === minute) break;
    }
    const accepted = statuses.filter((s) => s === 202).length;
    const refused = statuses.filter((s) => s === 429).length;
    expect(refused).toBeGreaterThanOrEqual(10);
    expect(accepted + refused).toBe(REPORTS_PER_MINUTE + 10);
    expect(accepted).toBeLessThanOrEqual(REPORTS_PER_MINUTE);
    // Another cluster behind the same address keeps its own budget.
    expect(await report(a.cluster.uid, a.reportToken)).toBe(202);
  });

  it('counts heartbeats, malformed ones too, against the same per-cluster budget as reports', async () => {
    const [a, , c] = clusters as [
      (typeof clusters)[number],
      (typeof clusters)[number],
      (typeof clusters)[number],
    ];
    const beat = { clusterId: c.cluster.uid, digest: 'a'.repeat(64) };
    let statuses: number[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const minute = Math.floor(Date.now() / 60_000);
      statuses = await Promise.all([
        // Within the budget: answered 409, as no report of this cluster was applied yet.
        ...Array.from({ length: REPORTS_PER_MINUTE - 5 }, () =>
          heartbeat(c.cluster.uid, c.reportToken, beat),
        ),
        // Malformed, or naming another cluster: counted all the same.
        ...Array.from({ length: 5 }, () =>
          heartbeat(c.cluster.uid, c.reportToken, { ...beat, digest: 'not-a-digest' }),
        ),
        ...Array.from({ length: 5 }, () =>
          heartbeat(c.cluster.uid, c.reportToken, { ...beat, clusterId: a.cluster.uid }),
        ),
      ]);
      if (Math.floor(Date.now() / 60_000) === minute) break;
    }
    // 35 sent against a budget of 30: at least 5 of them refused as over it, the others refused
    // for what they are (409 no applied digest, 400 malformed, 403 another cluster's).
    const refused = statuses.filter((s) => s === 429).length;
    expect(refused).toBeGreaterThanOrEqual(5);
    expect(statuses.filter((s) => ![409, 400, 403, 429].includes(s))).toEqual([]);
    expect(statuses.length - refused).toBeLessThanOrEqual(REPORTS_PER_MINUTE);
    // The budget is the cluster's, shared with its status reports (unless the minute just turned).
    const minute = Math.floor(Date.now() / 60_000);
    const next = await report(c.cluster.uid, c.reportToken);
    if (Math.floor(Date.now() / 60_000) === minute) expect(next).toBe(429);
    // Another cluster's heartbeat is not over budget.
    expect(
      await heartbeat(a.cluster.uid, a.reportToken, { ...beat, clusterId: a.cluster.uid }),
    ).not.toBe(429);
  });
});
