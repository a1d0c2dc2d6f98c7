import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startApi, type RunningApi } from './start-api.js';

/** A GET or HEAD as sent, its body as received (no client-side decompression), e.g. by curl. */
function raw(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The API serves the console's files on its own origin: the app for any client-side route, its
 * assets cached for good and sent precompressed when the browser accepts it, and never an answer
 * in place of the API's own routes.
 */
describe('the console served by the API', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let dir: string;
  const INDEX = '<!doctype html><html lang="en"><title>console</title>';
  const CSS = '.fleet { color: red }';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'app-1234.js'), 'console.log(1)');
    // As scripts/build.mjs leaves them: each text file with its .br and .gz beside it (here
    // marked, so the test tells which one was sent).
    writeFileSync(join(dir, 'assets', 'style-5678.css'), CSS);
    writeFileSync(join(dir, 'assets', 'style-5678.css.br'), brotliCompressSync(`${CSS}/*br*/`));
    writeFileSync(join(dir, 'assets', 'style-5678.css.gz'), gzipSync(`${CSS}/*gz*/`));
    writeFileSync(join(dir, 'index.html.gz'), gzipSync(`${INDEX}<!--gz-->`));
    writeFileSync(join(dir, 'assets', 'logo-1234.png'), 'not text');
    writeFileSync(join(dir, 'assets', 'logo-1234.png.gz'), gzipSync('never sent'));
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
      // Stored, but revalidated on every load: it names the current assets.
      expect(res.headers.get('cache-control')).toBe('no-cache');
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

  it('sends the Brotli copy to a browser that accepts it, else the gzip one, else the file', async () => {
    const url = `${api.url}/assets/style-5678.css`;
    const br = await raw(url, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/^text\/css/);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(brotliDecompressSync(br.body).toString()).toBe(`${CSS}/*br*/`);

    const gz = await raw(url, { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(gz.body).toString()).toBe(`${CSS}/*gz*/`);

    for (const accept of [undefined, 'identity', 'gzip;q=0, br;q=0', 'deflate']) {
      const plain = await raw(url, accept ? { 'accept-encoding': accept } : {});
      expect(plain.headers['content-encoding']).toBeUndefined();
      // The same URL answers differently by Accept-Encoding: caches must know, even here.
      expect(plain.headers.vary).toBe('Accept-Encoding');
      expect(plain.body.toString()).toBe(CSS);
    }

    const head = await raw(url, { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.headers['content-encoding']).toBe('br');
    expect(head.body.length).toBe(0);
  });

  it('sends the app compressed on any client-side route, uncached', async () => {
    for (const path of ['/', '/clusters']) {
      const res = await raw(`${api.url}${path}`, { 'accept-encoding': 'gzip' });
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toMatch(/default-src 'self'/);
      expect(gunzipSync(res.body).toString()).toBe(`${INDEX}<!--gz-->`);
    }
  });

  it('never sends a compressed copy by its own name, nor one of a file that is not text', async () => {
    expect((await raw(`${api.url}/assets/style-5678.css.br`)).status).toBe(404);
    expect((await raw(`${api.url}/index.html.gz`)).status).toBe(404);
    const png = await raw(`${api.url}/assets/logo-1234.png`, { 'accept-encoding': 'gzip' });
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.headers.vary).toBeUndefined();
    expect(png.body.toString()).toBe('not text');
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
    // Nor compresses them with its copies, nor says they vary by encoding.
    for (const path of ['/healthz', '/readyz', '/metrics', '/graphql']) {
      const res = await raw(`${api.url}${path}`, { 'accept-encoding': 'br, gzip' });
      expect(res.headers['content-type'] ?? '').not.toMatch(/html/);
      expect(res.headers.vary ?? '').not.toMatch(/Accept-Encoding/i);
    }
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
