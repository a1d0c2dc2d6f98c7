import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import pg from 'pg';

import { startPrivatePostgres, startPrivateRedis } from './private-servers.js';

describe('private servers for fault suites', () => {
  it('PostgreSQL: its own port, the migrated schema, survives a restart', async () => {
    const server = await startPrivatePostgres('fleet_fault');
    try {
      expect(server.port).not.toBe(5432);
      const count = async () => {
        const c = new pg.Client({ connectionString: server.databaseUrl('fleet_fault') });
        await c.connect();
        try {
          const r = await c.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL',
          );
          return r.rows[0]!.n;
        } finally {
          await c.end();
        }
      };
      expect(await count()).toBeGreaterThan(0);
      const session = new pg.Client({ connectionString: server.databaseUrl('fleet_fault') });
      session.on('error', () => undefined);
      await session.connect();
      await server.restart();
      await expect(session.query('SELECT 1')).rejects.toThrow();
      await session.end().catch(() => undefined);
      expect(await count()).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  });

  it('Redis: its own port; flushing it leaves the shared instance alone', async () => {
    const server = await startPrivateRedis();
    const shared = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const own = new Redis(server.url);
    const key = `private-servers-spec-${process.pid}`;
    try {
      expect(server.port).not.toBe(6379);
      await shared.set(key, 'kept', 'EX', 60);
      await own.set(key, 'gone');
      await own.flushall();
      expect(await own.get(key)).toBeNull();
      expect(await shared.get(key)).toBe('kept');
    } finally {
      await shared.del(key);
      shared.disconnect();
      own.disconnect();
      await server.stop();
    }
  });
});
