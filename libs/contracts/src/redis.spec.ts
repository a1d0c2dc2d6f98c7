import { describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import { parseEnv, redisUrl } from './env.js';
import { queueLabel, queueName, sidecarQueueName } from './messages.js';
import { createRedisClient, hashTag, keySlot, parseRedisUrl, redisKey } from './redis.js';

describe('Redis URLs', () => {
  it('reads one server, or a cluster with its seed nodes', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379/10')).toMatchObject({
      cluster: false,
      tls: false,
      nodes: [{ host: '127.0.0.1', port: 6379 }],
      db: 10,
    });
    expect(
      parseRedisUrl('rediss-cluster://sidecar.c1:p%40ss@redis-0:7000/?nodes=redis-1:7001,redis-2'),
    ).toEqual({
      cluster: true,
      tls: true,
      nodes: [
        { host: 'redis-0', port: 7000 },
        { host: 'redis-1', port: 7001 },
        { host: 'redis-2', port: 6379 },
      ],
      username: 'sidecar.c1',
      password: 'p@ss',
      db: 0,
    });
  });

  it('reads a bracketed IPv6 host, with or without a port (the default 6379)', () => {
    expect(parseRedisUrl('redis://[::1]/').nodes).toEqual([{ host: '::1', port: 6379 }]);
    expect(parseRedisUrl('redis://[::1]').nodes).toEqual([{ host: '::1', port: 6379 }]);
    expect(parseRedisUrl('rediss://u:p@[2001:db8::7]:6380/2')).toMatchObject({
      nodes: [{ host: '2001:db8::7', port: 6380 }],
      db: 2,
    });
    expect(
      parseRedisUrl('redis-cluster://[fd00::1]/?nodes=[fd00::2]:7001,[fd00::3]').nodes,
    ).toEqual([
      { host: 'fd00::1', port: 6379 },
      { host: 'fd00::2', port: 7001 },
      { host: 'fd00::3', port: 6379 },
    ]);
    expect(() => parseRedisUrl('redis-cluster://[fd00::1]/?nodes=[fd00::2]:x')).toThrow(
      /nodes entry "\[fd00::2\]:x" is not host:port/,
    );
    expect(() => parseRedisUrl('redis-cluster://[fd00::1]/?nodes=[]:7000')).toThrow(
      /nodes entry "\[\]:7000" is not host:port/,
    );
  });

  it('refuses what a cluster cannot be, naming the reason', () => {
    expect(() => parseRedisUrl('redis-cluster://a:7000/3')).toThrow(/only database 0/);
    expect(() => parseRedisUrl('redis://a:6379/?nodes=b:1')).toThrow(/only for redis-cluster/);
    expect(() => parseRedisUrl('redis-cluster://a:7000/?nodes=b:x')).toThrow(
      /nodes entry "b:x" is not host:port/,
    );
    const schema = z.object({ REDIS_URL: redisUrl });
    expect(() => parseEnv(schema, { REDIS_URL: 'redis-cluster://a:7000/2' })).toThrow(
      /REDIS_URL: a Redis Cluster has only database 0/,
    );
    expect(parseEnv(schema, { REDIS_URL: 'redis-cluster://a:7000' }).REDIS_URL).toBe(
      'redis-cluster://a:7000',
    );
  });

  it('makes a Cluster client for a cluster URL, a Redis client otherwise', () => {
    const one = createRedisClient('redis://127.0.0.1:1', { lazyConnect: true });
    const many = createRedisClient('redis-cluster://127.0.0.1:1/?nodes=127.0.0.1:2', {
      lazyConnect: true,
      maxRetriesPerRequest: null,
    });
    try {
      expect(one).toBeInstanceOf(Redis);
      expect(many).toBeInstanceOf(Cluster);
      expect((many as Cluster).options.redisOptions).toMatchObject({ maxRetriesPerRequest: null });
    } finally {
      one.disconnect();
      many.disconnect();
    }
  });
});

describe('key layout', () => {
  it('hash-tags every queue, so all of its keys share one slot', () => {
    expect(sidecarQueueName('c1')).toBe('{sidecar.c1}');
    expect(redisKey('fleet', 'sidecar.c1', 'wait')).toBe('fleet:{sidecar.c1}:wait');
    expect(hashTag('reports')).toBe('{reports}');
    // People, dashboards and dead letters see the name without its tag, as before.
    expect(queueLabel(queueName('dead-letter'))).toBe('dead-letter');
    expect(queueLabel('reconcile')).toBe('reconcile');
  });

  // Slots as `CLUSTER KEYSLOT` answers on Redis 7.
  it('computes the slot Redis Cluster does', () => {
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('fleet:{sidecar.c1}:wait')).toBe(13435);
    expect(keySlot('sidecar.c1')).toBe(13435);
    expect(keySlot('{}x')).toBe(10595); // an empty tag is no tag: the whole key
    expect(keySlot('a{}{b}')).toBe(15033);
    expect(keySlot('{reconcile}')).toBe(15101);
  });
});
