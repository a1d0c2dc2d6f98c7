import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startApi, type RunningApi } from './start-api.js';

/**
 * The API serves the console's files on its own origin: the app for any client-side route, its
 * assets cached for good, and never an answer in place of the API's own routes.
 */
describe('the console served by the API', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><html lang="en"><title>console</title>');
    writeFileSync(join(dir, 'assets', 'app-1234.js'), 'console.log(1)');
    writeFileSync(join(tmpdir(), 'fleet-console-secret.txt'), 'outside');
    db = await createTestDatabase();
    api = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      CONSOLE_DIR: dir,
    });
  });

  afterAll(async () => {
    await api?.app.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, init?: RequestInit) => fetch(`${api.url}${path}`, init);

  it.each(['/', '/clusters', '/clusters/Q2x1c3Rlcjox?selector=env%3Dprod'])(
    'answers %s with the app, never cached, with a CSP',
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache, no-store');
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
      expect(await res.text()).toContain('<title>console</title>');
    },
  );

  it('serves hashed assets as immutable, and a missing one as a 404, not the app', async () => {
    const asset = await get('/assets/app-1234.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toMatch(/immutable/);
    expect((await get('/assets/app-9999.js')).status).toBe(404);
  });

  it('never answers for the API routes', async () => {
    const healthz = await get('/healthz');
    expect(await healthz.json()).toEqual({ status: 'ok' });
    expect((await get('/metrics')).headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await get('/readyz')).headers.get('content-type')).toMatch(/json/);
    expect((await get('/v1/clusters/x/status')).headers.get('content-type')).not.toMatch(/html/);
    expect((await get('/graphql')).headers.get('content-type')).not.toMatch(/html/);
    const gql = await get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(await gql.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('serves nothing outside its directory, and only to GET and HEAD', async () => {
    // An encoded slash survives the URL parser, so `..` reaches the server undecoded.
    for (const path of [
      '/..%2ffleet-console-secret.txt',
      '/assets/..%2f..%2ffleet-console-secret.txt',
    ]) {
      const res = await get(path);
      expect(await res.text()).not.toContain('outside');
    }
    const post = await get('/clusters', { method: 'POST' });
    expect(post.headers.get('content-type') ?? '').not.toMatch(/html/);
    const head = await get('/', { method: 'HEAD' });
    expect(head.status).toBe(200);
  });
});
