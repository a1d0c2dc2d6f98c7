import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startApi, type RunningApi } from '../api/start-api.js';

/**
 * Issue 17 point 5: the query cost limit holds whatever the caller sends and whichever way it
 * sends it — negative or huge page sizes, queries and mutations over the graphql-ws socket,
 * oversized socket messages, batched HTTP requests.
 */
/** Ten aliases of 100 clusters × 100 runs: far over the default cost limit of 50,000. */
const expensive = Array.from(
  { length: 10 },
  (_, i) =>
    `a${i}: clusters(first: 100) { edges { node { id reconcileRuns(first: 100) { nodes { createdAt generation state } } } } }`,
).join(' ');

describe('query limits on every transport', () => {
  let db: TestDatabase;
  let api: RunningApi;
  const sockets: Client[] = [];

  const socket = (token = api.adminToken) => {
    const client = createClient({
      url: `${api.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
      lazy: true,
    });
    sockets.push(client);
    return client;
  };
  /** The first result or error of one operation over the socket. */
  const overSocket = (client: Client, query: string, variables: Record<string, unknown> = {}) =>
    new Promise<{ data?: unknown; errors?: { message: string; extensions?: unknown }[] }>(
      (resolve, reject) => {
        const dispose = client.subscribe(
          { query, variables },
          {
            next: (result) => {
              dispose();
              resolve(result as never);
            },
            error: (err) =>
              Array.isArray(err)
                ? resolve({ errors: err as { message: string }[] })
                : reject(err instanceof Error ? err : new Error(JSON.stringify(err))),
            complete: () => resolve({}),
          },
        );
      },
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
  });

  afterAll(async () => {
    for (const s of sockets) await s.dispose();
    await api?.app.close();
    await db?.drop();
  });

  it('refuses a page size outside 1–100 by name, before cost (a negative first cannot cancel cost)', async () => {
    // Ten aliases at first: 100 cost far over the limit; one alias at -100000 used to cancel it.
    const res = await api.admin(
      `query { neg: clusters(first: -100000) { totalCount } ${expensive} }`,
    );
    expect(res.data).toBeFalsy();
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'first' });
    expect(res.errors?.[0]?.message).toMatch(/^first: must be between 1 and 100 \(got -100000/);

    for (const [query, variables, field] of [
      ['query($n: Int) { clusters(first: $n) { totalCount } }', { n: 0 }, 'first'],
      ['query($n: Int) { clusters(last: $n) { totalCount } }', { n: 101 }, 'last'],
      ['query($n: Int = -5) { clusters(first: $n) { totalCount } }', {}, 'first'],
    ] as const) {
      const r = await api.admin(query, variables);
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    }
    const ok = await api.admin('query($n: Int) { clusters(first: $n) { totalCount } }', { n: 5 });
    expect(ok.errors).toBeUndefined();
  });

  it('limits mutations like queries', async () => {
    // 90 aliases (within the alias limit of 100), each costing 702: over the cost limit.
    const fields = Array.from(
      { length: 90 },
      (_, i) =>
        `m${i}: pauseCluster(clusterId: "x") { reconcileRuns(first: 100) { nodes { createdAt dispatchedAt finishedAt generation state error } } }`,
    ).join(' ');
    const res = await api.admin(`mutation { ${fields} }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
    expect(res.errors?.[0]?.message).toMatch(/cost 63180 \(max 50000\)/);
  });

  it('serves only subscriptions over the socket, within the same limits', async () => {
    const client = socket();
    const query = await overSocket(client, '{ clusters(first: 1) { totalCount } }');
    expect(query.data).toBeUndefined();
    expect(query.errors?.[0]?.message).toMatch(/only subscriptions are served over WebSocket/);

    const mutation = await overSocket(client, `mutation { pauseCluster(clusterId: "x") { id } }`);
    expect(mutation.errors?.[0]?.message).toMatch(/only subscriptions are served over WebSocket/);

    const deep = await overSocket(
      client,
      `subscription { clusterChanged { ${'reconcileRuns(first: 100) { nodes { state } } '.repeat(300)} } }`,
    );
    expect(deep.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
    // 901 fields, within the field limit: refused by its cost.
    expect(deep.errors?.[0]?.message).toMatch(/cost 60301 \(max 50000\)/);

    const negative = await overSocket(
      client,
      'subscription($n: Int) { clusterChanged { reconcileRuns(first: $n) { nodes { state } } } }',
      { n: -1 },
    );
    expect(negative.errors?.[0]?.extensions).toMatchObject({ field: 'first' });
  });

  it('closes a socket that sends a message over the size limit', async () => {
    const closed = await new Promise<number | string>((resolve, reject) => {
      const ws = new WebSocket(`${api.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
      ws.on('error', reject);
      ws.on('close', (code) => resolve(code));
      ws.on('message', (data) => {
        resolve(`accepted: ${Buffer.isBuffer(data) ? data.toString('utf8') : 'a message'}`);
        ws.close();
      });
      ws.on('open', () =>
        ws.send(
          JSON.stringify({
            type: 'connection_init',
            payload: {
              authorization: `Bearer ${api.adminToken}`,
              pad: 'x'.repeat(2 * 1024 * 1024),
            },
          }),
        ),
      );
    });
    expect(closed).toBe(1009); // Message Too Big
  });

  /** `n` aliases of `field`, compact (the 3,000 of `viewer { name }` are 56 kB). */
  const aliases = (n: number, field: string) =>
    Array.from({ length: n }, (_, i) => `a${i}:${field}`).join(' ');
  const FIELDS_LIMIT = /the limit is 1000 \(fragments count where they are spread\)$/;
  const ALIASES_LIMIT = /the limit is 100 \(fragments count where they are spread\)$/;

  it('refuses an alias flood over HTTP before it runs, naming the limits (issue 48, target 6)', async () => {
    const viewer = await api.createToken('VIEWER');
    const res = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${viewer}` },
      body: JSON.stringify({ query: `{ ${aliases(3000, 'viewer{name}')} }` }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      data?: unknown;
      errors: { message: string; extensions: Record<string, unknown> }[];
    };
    expect(body.data).toBeUndefined();
    expect(body.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^query selects 6000 fields; /) as unknown,
      expect.stringMatching(/^query uses 3000 aliases; /) as unknown,
    ]);
    expect(body.errors[0]?.message).toMatch(FIELDS_LIMIT);
    expect(body.errors[1]?.message).toMatch(ALIASES_LIMIT);
    expect(body.errors[0]?.extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      fields: 6000,
      maxFields: 1000,
    });
    expect(body.errors[1]?.extensions).toMatchObject({ aliases: 3000, maxAliases: 100 });
  });

  it('counts through fragments and inline fragments, and runs a query at the limits', async () => {
    const viewer = api.as(await api.createToken('VIEWER'));
    const atLimit = await viewer<Record<string, { name: string }>>(
      `{ ${aliases(100, 'viewer{name}')} }`,
    );
    expect(atLimit.errors).toBeUndefined();
    expect(Object.keys(atLimit.data ?? {})).toHaveLength(100);
    // 101 aliases, most of them behind a spread and an inline fragment.
    const hidden = await viewer(
      `{ ...Many ... on Query { x: viewer { name } } } fragment Many on Query { ${aliases(100, 'viewer{name}')} }`,
    );
    expect(hidden.errors?.map((e) => e.message)).toEqual([
      expect.stringMatching(/^query uses 101 aliases; the limit is 100/) as unknown,
    ]);
    // Fields: 90 aliased pages of 11 fields behind a fragment, 5 of viewer, 5 of the summary:
    // the limit of 1,000. One more field of the summary is over it.
    const page =
      'clusters(first: 1) { nodes { id uid name platform region topology createdAt inSync healthState } }';
    const document = (summary: string) =>
      `{ ...Pages viewer { name role scoped session } fleetSummary { ${summary} } } fragment Pages on Query { ${aliases(90, page)} }`;
    const fields = await viewer<{ viewer: { name: string } }>(
      document('clusters inSync stale paused'),
    );
    expect(fields.errors).toBeUndefined();
    expect(fields.data?.viewer.name).toEqual(expect.any(String));
    const over = await viewer(document('clusters inSync stale paused karpenterEnabled'));
    expect(over.errors?.map((e) => e.message)).toEqual([
      expect.stringMatching(/^query selects 1001 fields; /) as unknown,
    ]);
    expect(over.errors?.[0]?.message).toMatch(FIELDS_LIMIT);
  });

  it('refuses an alias flood over graphql-ws naming the limits, and serves one at the limit', async () => {
    const client = socket(await api.createToken('VIEWER'));
    // The flood as a query (56 kB, under the 64 KiB message limit): the size limits are
    // checked before anything else, so it is refused by them, not as a query on the socket.
    const query = await overSocket(client, `{ ${aliases(3000, 'viewer{name}')} }`);
    expect(query.errors?.map((e) => e.message)).toEqual([
      expect.stringMatching(FIELDS_LIMIT) as unknown,
      expect.stringMatching(ALIASES_LIMIT) as unknown,
    ]);
    const flood = await overSocket(
      client,
      `subscription { clusterChanged { ${aliases(3000, 'name')} } }`,
    );
    expect(flood.errors?.[0]?.message).toMatch(/^query selects 3001 fields; /);
    expect(flood.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
    expect(flood.errors?.[1]?.message).toMatch(/^query uses 3000 aliases; the limit is 100/);

    // fleetSummaryChanged yields the summary at once: 100 aliases are served.
    const atLimit = await overSocket(
      client,
      `subscription { fleetSummaryChanged { ${aliases(100, 'clusters')} } }`,
    );
    expect(atLimit.errors).toBeUndefined();
    expect(
      Object.keys((atLimit.data as { fleetSummaryChanged: object }).fleetSummaryChanged),
    ).toHaveLength(100);
    const overLimit = await overSocket(
      client,
      `subscription { ...S } fragment S on Subscription { fleetSummaryChanged { ${aliases(101, 'clusters')} } }`,
    );
    expect(overLimit.errors?.[0]?.message).toMatch(/^query uses 101 aliases; the limit is 100/);
  });

  it('refuses batched HTTP requests', async () => {
    const res = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.adminToken}` },
      body: JSON.stringify(
        Array.from({ length: 50 }, () => ({ query: '{ clusters(first: 100) { totalCount } }' })),
      ),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/batch/i);
  });
});
