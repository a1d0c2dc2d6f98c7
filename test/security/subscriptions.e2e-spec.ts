import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startApi, type RunningApi } from '../api/start-api.js';

interface Watched {
  client: Client;
  events: unknown[];
  closed: () => { code: number; reason: string } | undefined;
}

/** Issue 17, point 3: a subscription ends when its token is revoked or expires. */
describe('security: subscriptions do not outlive their token', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let clusters = 0;

  const watch = async (secret: string): Promise<Watched> => {
    let closed: { code: number; reason: string } | undefined;
    let connected!: () => void;
    const ready = new Promise<void>((resolve) => (connected = resolve));
    const client = createClient({
      url: `${api.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${secret}` },
      retryAttempts: 0,
      lazy: true,
      on: {
        connected: () => connected(),
        closed: (event) => {
          const { code, reason } = event as { code: number; reason: string };
          closed = { code, reason: String(reason) };
        },
      },
    });
    const events: unknown[] = [];
    client.subscribe(
      { query: `subscription { fleetSummaryChanged { clusters } }` },
      { next: (e) => void events.push(e), error: () => undefined, complete: () => undefined },
    );
    await ready;
    return { client, events, closed: () => closed };
  };
  const registerCluster = async () => {
    const res = await api.admin(
      `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1" }) { cluster { id } } }`,
      { name: `sub-${++clusters}` },
    );
    if (res.errors) throw new Error(JSON.stringify(res.errors));
  };
  const closedWith4401 = (watched: Watched, what: string) =>
    eventually(() => watched.closed(), { timeoutMs: 15_000, intervalMs: 100, what });

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
  });

  afterAll(async () => {
    await api?.app.close();
    await db?.drop();
  });

  it('closes the socket of a revoked token, which then receives nothing more', async () => {
    const secret = await api.createToken('VIEWER', { name: 'dashboard' });
    const watched = await watch(secret);
    await registerCluster();
    await eventually(() => (watched.events.length ? true : undefined), {
      timeoutMs: 15_000,
      what: 'the first event',
    });
    const tokens = await api.admin<{ apiTokens: { id: string; name: string }[] }>(
      `{ apiTokens { id name } }`,
    );
    const id = tokens.data!.apiTokens.find((t) => t.name === 'dashboard')!.id;
    await api.admin(`mutation($id: ID!) { revokeApiToken(id: $id) { id } }`, { id });
    const seen = watched.events.length;
    expect(await closedWith4401(watched, 'the socket to close after revocation')).toEqual({
      code: 4401,
      reason: 'Unauthorized: the API token was revoked or expired',
    });
    await registerCluster();
    expect(watched.events.length).toBe(seen);
    await watched.client.dispose();
  });

  it('closes the socket of a token when it expires', async () => {
    const secret = await api.createToken('VIEWER', {
      expiresAt: new Date(Date.now() + 2_000).toISOString(),
    });
    const watched = await watch(secret);
    expect(await closedWith4401(watched, 'the socket to close at expiry')).toMatchObject({
      code: 4401,
    });
    await watched.client.dispose();
  });

  it('keeps the socket of a valid token open', async () => {
    const secret = await api.createToken('VIEWER');
    const watched = await watch(secret);
    // Two changes, seconds apart, still arrive: the re-checks pass for a valid token.
    await registerCluster();
    await eventually(() => (watched.events.length >= 1 ? true : undefined), {
      timeoutMs: 15_000,
      what: 'an event',
    });
    await new Promise((r) => setTimeout(r, 2_500));
    await registerCluster();
    await eventually(() => (watched.events.length >= 2 ? true : undefined), {
      timeoutMs: 15_000,
      what: 'a second event',
    });
    expect(watched.closed()).toBeUndefined();
    await watched.client.dispose();
  });
});
