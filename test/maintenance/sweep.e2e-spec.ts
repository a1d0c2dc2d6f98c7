import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { pino } from 'pino';
import { loadWorkerConfig } from '../../apps/worker/src/config.js';
import { createPgPool } from '../../apps/worker/src/ingest/pg-pool.js';
import { sweep } from '../../apps/worker/src/maintenance/maintenance.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('maintenance sweep (real PostgreSQL, Redis)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  const log = pino({ level: 'silent' });

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createPgPool(db.url, log);
  });

  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const dirty = async () =>
    (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "FleetSummaryDirty"`)).rows[0]!
      .n;

  it('folds the fleet summary even when flushing liveness fails, and still fails the job', async () => {
    const config = loadWorkerConfig({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
    // A real failure of the first step: its Redis connection is closed.
    const producer = new Redis(REDIS_URL, { maxRetriesPerRequest: null, lazyConnect: true });
    producer.disconnect();
    await pool.query(`INSERT INTO "FleetSummaryDirty" ("clusterId") VALUES ($1::uuid)`, [
      randomUUID(),
    ]);
    expect(await dirty()).toBe(1);
    await expect(sweep({ pool, producer, config, log })).rejects.toThrow(/closed/i);
    expect(await dirty()).toBe(0);
  });
});
