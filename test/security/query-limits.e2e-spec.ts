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
    const fields = Array.from(
      { length: 120 },
      (_, i) =>
        `m${i}: pauseCluster(clusterId: "x") { reconcileRuns(first: 100) { nodes { createdAt generation state error } } }`,
    ).join(' ');
    const res = await api.admin(`mutation { ${fields} }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
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
      `subscription { clusterChanged { ${'reconcileRuns(first: 100) { nodes { state } } '.repeat(600)} } }`,
    );
    expect(deep.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });

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
