import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

import { startApi, type RunningApi } from './start-api.js';

// Replicas of the API rolled out together all hold FLEET_BOOTSTRAP_TOKEN and write its row at
// start-up. Red before the fix: Prisma's upsert is a read then an insert, so one of the replicas
// died on the unique token hash (seen in test/scale/replicas.e2e-spec.ts on a loaded machine).

describe('the bootstrap admin token, written by replicas starting at once', () => {
  let db: TestDatabase;
  const apis: RunningApi[] = [];
  const secret = `bootstrap-${randomBytes(16).toString('hex')}`;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.app.close()));
    await db?.drop();
  });

  it('every replica starts, one token row exists, and it works on each', async () => {
    const started = await Promise.allSettled(
      Array.from({ length: 4 }, () =>
        startApi({
          DATABASE_URL: db.url,
          QUEUE_PREFIX: testQueuePrefix(),
          FLEET_BOOTSTRAP_TOKEN: secret,
        }),
      ),
    );
    for (const result of started) if (result.status === 'fulfilled') apis.push(result.value);
    expect(started.filter((r) => r.status === 'rejected')).toEqual([]);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>('SELECT name FROM "ApiToken"');
      expect(rows).toEqual([{ name: 'bootstrap-admin' }]);
    } finally {
      await client.end();
    }
    for (const api of apis) {
      const res = await api.as(secret)<{ viewer: { name: string } }>('{ viewer { name } }');
      expect(res.data?.viewer.name).toBe('bootstrap-admin');
    }
  }, 60_000);
});
