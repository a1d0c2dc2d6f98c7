import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/**
 * Redis as the fleet reaches it: one server (`redis://`, `rediss://`) or a Redis Cluster
 * (`redis-cluster://`, `rediss-cluster://`). See docs/DESIGN.md § Redis key layout.
 *
 * A cluster URL names one seed node in its authority and may name more in `?nodes=host:port,…`
 * (a URL authority holds one host): ioredis asks any seed for the slot map (CLUSTER SLOTS) and
 * finds every other master from it, so one reachable seed is enough to start.
 */
export type RedisClient = Redis | Cluster;

export const REDIS_URL_PROTOCOLS = /^(rediss?|rediss?-cluster)$/;

export interface RedisTarget {
  cluster: boolean;
  tls: boolean;
  /** The seed nodes (cluster) or the one server. */
  nodes: { host: string; port: number }[];
  username: string | undefined;
  password: string | undefined;
  /** Logical database of a single server; a Redis Cluster has only database 0. */
  db: number;
}

export function parseRedisUrl(url: string): RedisTarget {
  const parsed = new URL(url);
  const scheme = parsed.protocol.replace(/:$/, '');
  if (!REDIS_URL_PROTOCOLS.test(scheme))
    throw new Error(`REDIS_URL: scheme ${scheme}:// is not redis, rediss or redis(s)-cluster`);
  const cluster = scheme.endsWith('-cluster');
  const node = (hostPort: string, field: string) => {
    // An IPv6 host is bracketed ([::1] or [::1]:7000): its colons are not the port's.
    const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(hostPort);
    const at = bracketed ? -1 : hostPort.lastIndexOf(':');
    const host = bracketed ? bracketed[1]! : at > 0 ? hostPort.slice(0, at) : hostPort;
    const portText = bracketed ? bracketed[2] : at > 0 ? hostPort.slice(at + 1) : undefined;
    const port = portText === undefined ? 6379 : /^\d+$/.test(portText) ? Number(portText) : NaN;
    if (!host || !Number.isInteger(port) || port <= 0 || port > 65535)
      throw new Error(`REDIS_URL: ${field} "${hostPort}" is not host:port`);
    return { host, port };
  };
  const nodes = [node(parsed.host, 'host')];
  const extra = parsed.searchParams.get('nodes');
  if (extra) {
    if (!cluster) throw new Error('REDIS_URL: nodes= is only for redis-cluster:// URLs');
    nodes.push(...extra.split(',').map((n) => node(n.trim(), 'nodes entry')));
  }
  const path = parsed.pathname.replace(/^\//, '');
  const db = path ? Number(path) : 0;
  if (!Number.isInteger(db) || db < 0)
    throw new Error(`REDIS_URL: database "${path}" is not a number`);
  if (cluster && db !== 0)
    throw new Error('REDIS_URL: a Redis Cluster has only database 0; drop the /<db> path');
  return {
    cluster,
    tls: scheme.startsWith('rediss'),
    nodes,
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    db,
  };
}

export const isRedisCluster = (client: RedisClient): client is Cluster => client instanceof Cluster;

/**
 * A client for `url` with `options`: an ioredis `Redis` for one server, a `Cluster` for a Redis
 * Cluster, with the per-connection options passed to every node. `enableOfflineQueue` and
 * `retryStrategy` are the cluster's own (its offline queue, its reconnect backoff).
 */
export function createRedisClient(url: string, options: RedisOptions = {}): RedisClient {
  const target = parseRedisUrl(url);
  // One server: ioredis reads the URL itself (database, credentials, TLS), as it always has.
  if (!target.cluster) return new Redis(url, options);
  const auth = {
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
  };
  const { enableOfflineQueue, retryStrategy, lazyConnect, ...perNode } = options;
  const clusterOptions: ClusterOptions = {
    redisOptions: { ...perNode, ...auth },
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) } : {}),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
  };
  return new Cluster(target.nodes, clusterOptions);
}

/**
 * Every node a per-node setting has to reach (ACL users, CLIENT KILL): a Redis Cluster keeps
 * ACL users per node, masters and replicas alike (a replica promoted by a failover must already
 * know them). One server is its own only node.
 */
export function redisNodes(client: RedisClient): Redis[] {
  return isRedisCluster(client) ? client.nodes('all') : [client];
}

/** Runs `fn` on every node of `client` (see `redisNodes`), all at once. */
export async function onEveryRedisNode<T>(
  client: RedisClient,
  fn: (node: Redis) => Promise<T>,
): Promise<T[]> {
  if (isRedisCluster(client) && client.status !== 'ready') {
    // nodes() is empty until the cluster has its slot map.
    await new Promise<void>((resolve, reject) => {
      client.once('ready', resolve);
      client.once('error', reject);
    });
  }
  return Promise.all(redisNodes(client).map(fn));
}

/** Empties every database of the server, or every master of a cluster (test and fault suites). */
export async function flushRedis(client: RedisClient): Promise<void> {
  if (isRedisCluster(client)) {
    await onEveryRedisNode(client, async (node) => {
      // Replicas refuse writes; their masters' flush reaches them.
      const role = (await node.call('ROLE')) as [string, ...unknown[]];
      if (role[0] === 'master') await node.flushall();
    });
  } else {
    await client.flushdb();
  }
}

/**
 * The hash tag of a Redis Cluster slot: every key with `{name}` in it hashes on `name` alone, so
 * all of a BullMQ queue's keys (and what its Lua scripts touch) land in one slot. New keys are
 * named through `redisKey`, so they stay in the slot of what they belong to.
 */
export const hashTag = (name: string): string => `{${name}}`;

/** A key (or key pattern) of the fleet: `<prefix>:{<tag>}:<rest…>`. */
export const redisKey = (prefix: string, tag: string, ...rest: string[]): string =>
  [prefix, hashTag(tag), ...rest].join(':');

/**
 * The Redis Cluster slot of a key (CRC16-XMODEM of its hash tag, or of the whole key, mod
 * 16384), as servers compute it: batches that must stay in one slot (a MULTI) group by it.
 */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
