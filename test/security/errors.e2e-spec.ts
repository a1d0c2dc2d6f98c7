import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEAD_LETTER_QUEUE } from '@fleet/contracts';
import {
  createTestDatabase,
  eventually,
  freePort,
  startProcess,
  testQueuePrefix,
  type TestDatabase,
} from '@fleet/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startApi, type RunningApi } from '../api/start-api.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
const cursor = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
/** What must never reach a client: SQL, driver and library internals, stack frames. */
const INTERNALS = /uuid|prisma|postgres|syntax|stacktrace|\.ts:\d+|\.js:\d+|ZodError|invalid_type/i;

/** Issue 17, point 6: internal errors never reach clients; production runs as production. */
describe('security: errors reveal nothing internal', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let redis: Redis;
  let prefix: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  });

  afterAll(async () => {
    await api?.app.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await db?.drop();
  });

  it('refuses malformed cursors with BAD_USER_INPUT naming the argument', async () => {
    const cases: [string, string, string][] = [
      [
        `query($c: String) { rollouts(first: 5, after: $c) { totalCount } }`,
        cursor(['2026-01-01T00:00:00.000Z', "x' OR 1=1"]),
        'after',
      ],
      [
        `query($c: String) { clusters(first: 5, after: $c) { totalCount } }`,
        cursor(['NAME', 'a', 'not-a-uuid']),
        'after',
      ],
      [
        `query($c: String) { clusters(last: 5, before: $c, orderBy: { field: CREATED_AT, direction: ASC }) { totalCount } }`,
        cursor(['CREATED_AT', 'yesterday', '00000000-0000-0000-0000-000000000000']),
        'before',
      ],
      [
        `query($c: String) { clusters(first: 5, after: $c, orderBy: { field: LAST_REPORT, direction: DESC }) { totalCount } }`,
        cursor([
          'LAST_REPORT',
          '2026-02-31T00:00:00.000000Z',
          '00000000-0000-0000-0000-000000000000',
        ]),
        'after',
      ],
      [
        `query($c: String) { deadLetters(first: 5, after: $c) { totalCount } }`,
        cursor(['dead-letter', -7]),
        'after',
      ],
    ];
    for (const [query, c, field] of cases) {
      const res = await api.admin(query, { c });
      expect({ query, error: res.errors?.[0]?.extensions }).toEqual({
        query,
        error: expect.objectContaining({ code: 'BAD_USER_INPUT', field }),
      });
      expect(JSON.stringify(res)).not.toMatch(INTERNALS);
    }
  });

  it('masks any other error: the client gets an error ID, the log the details', async () => {
    // A corrupt job on the dead-letter queue makes the API fail in code, not by intent.
    const dlq = new Queue(DEAD_LETTER_QUEUE, { connection: redis, prefix });
    await dlq.add('dead-letter', { queue: 42 }, { jobId: 'corrupt' });
    await dlq.close();
    const logged: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void logged.push(args.map(String).join(' '));
    let res: Awaited<ReturnType<RunningApi['admin']>>;
    try {
      res = await api.admin(`{ deadLetters(first: 5) { nodes { id queue } } }`);
    } finally {
      console.error = original;
    }
    const error = res.errors?.[0];
    expect(error?.extensions).toEqual({
      code: 'INTERNAL_SERVER_ERROR',
      errorId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(error?.message).toContain(String(error?.extensions?.errorId));
    expect(JSON.stringify(res)).not.toMatch(INTERNALS);
    const line = logged.find((l) => l.includes(String(error?.extensions?.errorId)));
    expect(line).toMatch(/invalid_type|expected string/i);
  });

  it('the API process refuses to start without NODE_ENV=production and starts with it', async () => {
    const run = async (env: Record<string, string>) => {
      const port = await freePort();
      const proc = startProcess(
        'dist/apps/api/src/main.js',
        {
          DATABASE_URL: db.url,
          REDIS_URL,
          QUEUE_PREFIX: prefix,
          API_PORT: String(port),
          NODE_ENV: '',
          ...env,
        },
        'api',
      );
      const ready = eventually(
        () =>
          fetch(`http://127.0.0.1:${port}/readyz`)
            .then((r) => (r.ok ? ('ready' as const) : undefined))
            .catch(() => undefined),
        { timeoutMs: 45_000, what: 'the API process' },
      );
      const outcome = await Promise.race([proc.exited.then((exit) => ({ exit })), ready]);
      await proc.stop();
      return { outcome, output: proc.output() };
    };
    const refused = await run({ NODE_ENV: 'development' });
    expect(refused.outcome).toEqual({ exit: { code: 1, signal: null } });
    expect(refused.output).toContain('NODE_ENV: must be "production" (is "development")');
    const started = await run({ NODE_ENV: 'production' });
    expect(started.outcome).toBe('ready');
  }, 120_000);
});
