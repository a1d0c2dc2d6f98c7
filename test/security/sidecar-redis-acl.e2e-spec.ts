import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  applySidecarAcl,
  deleteSidecarAcl,
  sha256Hex,
  sidecarQueueName,
  sidecarRedisUrl,
  sidecarRedisUser,
} from '@fleet/contracts';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { testQueuePrefix } from '@fleet/testing';
import { orderJobOptions } from '../../apps/worker/src/dispatch/sidecar-queues.js';
import { FLEET_REDIS_CONFIG, startPrivateRedis, type PrivateRedis } from '../support/index.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** ACL LOG entries (refusals) of one user: field/value pairs as Redis returns them. */
async function aclRefusals(admin: Redis, user: string): Promise<Record<string, string>[]> {
  const log = (await admin.call('ACL', 'LOG', '128')) as unknown[][];
  return log
    .map((entry) => {
      const fields: Record<string, string> = {};
      for (let i = 0; i < entry.length; i += 2) fields[String(entry[i])] = String(entry[i + 1]);
      return fields;
    })
    .filter((entry) => entry.username === user);
}

describe("the sidecar's Redis user runs what BullMQ's worker needs and nothing else", () => {
  const prefix = testQueuePrefix();
  const clusterId = randomUUID();
  const user = sidecarRedisUser(clusterId);
  const password = randomBytes(24).toString('base64url');
  const admin = new Redis(REDIS_URL);
  const open: Redis[] = [];
  const asSidecar = (url = REDIS_URL) => {
    const redis = new Redis(sidecarRedisUrl(url, clusterId, password), {
      maxRetriesPerRequest: null,
    });
    redis.on('error', () => undefined);
    open.push(redis);
    return redis;
  };

  beforeAll(async () => {
    await applySidecarAcl(admin, prefix, clusterId, [sha256Hex(password)]);
  });

  afterAll(async () => {
    await Promise.all(open.map((redis) => redis.quit().catch(() => redis.disconnect())));
    await deleteSidecarAcl(admin, clusterId);
    admin.disconnect();
  });

  it('takes, retries, extends the lock of, fails and completes orders with no refusal', async () => {
    const orders = new Queue(sidecarQueueName(clusterId), { connection: admin, prefix });
    const attempts = new Map<string, number>();
    // A short lock makes the worker extend it while the slow order runs; the stalled-job check
    // runs at start-up. Same options as the sidecar's OrderConsumer otherwise.
    const worker = new Worker(
      sidecarQueueName(clusterId),
      async (job) => {
        const n = (attempts.get(job.name) ?? 0) + 1;
        attempts.set(job.name, n);
        if (job.name === 'slow') await new Promise((r) => setTimeout(r, 1500));
        if (job.name === 'broken') throw new Error('cannot apply');
        if (job.name === 'flaky' && n === 1) throw new Error('first attempt fails');
        await job.updateProgress(100);
        return 'applied';
      },
      { connection: asSidecar(), prefix, concurrency: 1, lockDuration: 1000 },
    );
    worker.on('error', () => undefined);
    try {
      await worker.waitUntilReady();
      await orders.add('quick', {}, orderJobOptions('generation-1'));
      await orders.add('slow', {}, orderJobOptions('generation-2'));
      await orders.add('flaky', {}, orderJobOptions('generation-3'));
      await orders.add('broken', {}, { ...orderJobOptions('generation-4'), attempts: 1 });
      const expected = {
        'generation-1': 'completed',
        'generation-2': 'completed',
        'generation-3': 'completed',
        'generation-4': 'failed',
      };
      const states = async () =>
        Object.fromEntries(
          await Promise.all(
            Object.keys(expected).map(async (id) => [id, await orders.getJobState(id)] as const),
          ),
        );
      let seen = await states();
      while (Object.values(seen).some((s) => s !== 'completed' && s !== 'failed')) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await states();
      }
      expect(seen).toEqual(expected);
      expect(attempts.get('flaky')).toBe(2);
    } finally {
      await worker.close();
      await orders.close();
    }
    expect(await aclRefusals(admin, user)).toEqual([]);
  });

  it('is refused every command that reaches beyond its own queue', async () => {
    const sidecar = asSidecar();
    const own = `${prefix}:${sidecarQueueName(clusterId)}:mine`;
    await expect(sidecar.set(own, 'ok')).resolves.toBe('OK');
    const attempts: [string, ...string[]][] = [
      ['SCAN', '0'],
      ['KEYS', '*'],
      ['FLUSHALL'],
      ['FLUSHDB'],
      ['SCRIPT', 'FLUSH'],
      ['SCRIPT', 'LOAD', 'return 1'],
      ['FUNCTION', 'FLUSH'],
      ['FUNCTION', 'LIST'],
      ['CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru'],
      ['CONFIG', 'GET', '*'],
      ['CLIENT', 'LIST'],
      ['CLIENT', 'KILL', 'USER', 'default'],
      ['SWAPDB', '0', '1'],
      ['RANDOMKEY'],
      ['DBSIZE'],
      ['SET', `${prefix}:fleet-events`, 'x'],
      ['GET', `${prefix}:${sidecarQueueName(randomUUID())}:meta`],
      ['EVAL', "return redis.call('SCAN', '0')", '0'],
      ['EVAL', "return redis.call('GET', KEYS[1])", '1', `${prefix}:other`],
    ];
    const outcomes = await Promise.all(
      attempts.map(([command, ...args]) =>
        sidecar.call(command, ...args).then(
          () => `${command} ${args.join(' ')}: allowed`,
          // A command inside a script is refused with the script's error, not NOPERM.
          (err: Error) =>
            `${command} ${args.join(' ')}: ${/NOPERM|can't run this command/.test(err.message) ? 'refused' : err.message}`,
        ),
      ),
    );
    expect(outcomes).toEqual(
      attempts.map(([command, ...args]) => `${command} ${args.join(' ')}: refused`),
    );
    // Refusals are logged under the user's name, which the worker's test relies on.
    expect((await aclRefusals(admin, user)).length).toBeGreaterThan(0);
    await sidecar.del(own);
  });

  describe("on a Redis with the fleet's configuration", () => {
    let fleet: { redis: PrivateRedis; admin: Redis } | undefined;

    beforeAll(async () => {
      const redis = await startPrivateRedis(undefined, FLEET_REDIS_CONFIG);
      fleet = { redis, admin: new Redis(redis.url) };
      await applySidecarAcl(fleet.admin, prefix, clusterId, [sha256Hex(password)]);
    });

    afterAll(async () => {
      fleet?.admin.disconnect();
      await fleet?.redis.stop();
    });

    it('never evicts queue data and refuses a 20 MiB value from a sidecar', async () => {
      if (!fleet) throw new Error("the fleet's Redis did not start");
      const { redis: fleetRedis, admin: fleetAdmin } = fleet;
      expect(await fleetAdmin.config('GET', 'maxmemory-policy')).toEqual([
        'maxmemory-policy',
        'noeviction',
      ]);
      const [, maxmemory] = (await fleetAdmin.config('GET', 'maxmemory')) as [string, string];
      expect(Number(maxmemory)).toBeGreaterThan(0);
      const sidecar = new Redis(sidecarRedisUrl(fleetRedis.url, clusterId, password), {
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      sidecar.on('error', () => undefined);
      const key = `${prefix}:${sidecarQueueName(clusterId)}:big`;
      try {
        await expect(sidecar.set(key, 'x'.repeat(20 * 1024 * 1024))).rejects.toThrow();
      } finally {
        sidecar.disconnect();
      }
      expect(await fleetAdmin.exists(key)).toBe(0);
    });
  });
});
