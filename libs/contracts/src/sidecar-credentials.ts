import { createHash } from 'node:crypto';
import { queueName, sidecarQueueName } from './messages.js';
import { onEveryRedisNode, type RedisClient } from './redis.js';

/** The Redis ACL user of one cluster's sidecar. */
export const sidecarRedisUser = (clusterId: string): string => `sidecar.${clusterId}`;

export const sha256Hex = (secret: string): string =>
  createHash('sha256').update(secret).digest('hex');

/**
 * The only commands a sidecar's Redis user may run: what BullMQ's Worker sends, nothing else.
 * Redis checks the commands a Lua script calls against the caller's ACL, so the scripts'
 * commands have to be here too; every one of them names a key, and the key pattern keeps them
 * on the sidecar's own queue. Keyless commands that reach the whole server (SCAN, KEYS,
 * FLUSH*, SCRIPT, FUNCTION, CONFIG, DEBUG, MONITOR, CLIENT LIST/KILL, ...) are left out.
 * `sidecar-credentials.spec.ts` re-derives the scripts' commands from the installed BullMQ, so
 * an upgrade that needs a new command fails there, not in a cluster.
 */
export const SIDECAR_REDIS_COMMANDS = {
  /** Sent by ioredis/BullMQ themselves, outside scripts. */
  connection: [
    'info', // ioredis' ready check and BullMQ's Redis version check
    'client|setname', // BullMQ names its connections
    'ping', // the sidecar's /readyz
    'evalsha', // every BullMQ operation is a Lua script (ioredis defineCommand) ...
    'eval', // ... sent in full when the server answers NOSCRIPT (after a restart)
    'bzpopmin', // the worker's blocking wait on the queue's marker key
    // Redis Cluster: ioredis waits for the cluster to be whole (CLUSTER INFO), reads the slot
    // map (CLUSTER SLOTS) and follows a slot being migrated (ASKING); all name no key and change
    // nothing. A single server refuses them, and ioredis sends them only to a cluster.
    'cluster|info',
    'cluster|slots',
    'asking',
  ],
  /** Called by BullMQ's Lua scripts (node_modules/bullmq/dist/esm/scripts, `rcall("…")`). */
  scripts: [
    'del',
    'exists',
    'get',
    'hdel',
    'hexists',
    'hget',
    'hgetall',
    'hincrby',
    'hlen',
    'hmget',
    'hmset',
    'hset',
    'incr',
    'incrby',
    'lindex',
    'llen',
    'lpop',
    'lpos',
    'lpush',
    'lrange',
    'lrem',
    'lset',
    'ltrim',
    'persist',
    'pexpire',
    'pexpireat',
    'pttl',
    'rename',
    'rpop',
    'rpoplpush',
    'rpush',
    'sadd',
    'scard',
    'set',
    'sismember',
    'smembers',
    'srem',
    'time',
    'type',
    'unlink',
    'xadd',
    'xdel',
    'xlen',
    'xrange',
    'xread',
    'xtrim',
    'zadd',
    'zcard',
    'zcount',
    'zlexcount',
    'zpopmin',
    'zrange',
    'zrangebylex',
    'zrangebyscore',
    'zrem',
    'zremrangebyrank',
    'zremrangebyscore',
    'zrevrange',
    'zrevrangebyscore',
    'zscore',
  ],
} as const;

/**
 * ACL SETUSER arguments that let a sidecar reach its own order queue's keys (and pub/sub
 * channels) with the commands of `SIDECAR_REDIS_COMMANDS` and nothing else. Passwords are given
 * as sha256 hashes (`#<hex>`), which Redis accepts, so the fleet can recreate the user without
 * knowing the password.
 */
export function sidecarAclRules(
  prefix: string,
  clusterId: string,
  passwordHashes: readonly string[],
): string[] {
  const keys = `${prefix}:${sidecarQueueName(clusterId)}:*`;
  return [
    'reset',
    passwordHashes.length ? 'on' : 'off',
    ...passwordHashes.map((hash) => `#${hash}`),
    `~${keys}`,
    `&${keys}`,
    ...[...SIDECAR_REDIS_COMMANDS.connection, ...SIDECAR_REDIS_COMMANDS.scripts].map(
      (command) => `+${command}`,
    ),
  ];
}

/** Anything that can send a raw Redis command to one node (an ioredis client or pipeline). */
export interface RedisCommander {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** The ACL SETUSER command (without the command name) that makes the sidecar's user. */
export const sidecarAclSetUser = (
  prefix: string,
  clusterId: string,
  passwordHashes: readonly string[],
): string[] => [
  'SETUSER',
  sidecarRedisUser(clusterId),
  ...sidecarAclRules(prefix, clusterId, passwordHashes),
];

/** Creates or replaces the sidecar's user on every node (ACL users are per node in a cluster). */
export async function applySidecarAcl(
  redis: RedisClient,
  prefix: string,
  clusterId: string,
  passwordHashes: readonly string[],
): Promise<void> {
  await onEveryRedisNode(redis, (node) =>
    node.call('ACL', ...sidecarAclSetUser(prefix, clusterId, passwordHashes)),
  );
}

/**
 * Cuts every connection of the cluster's sidecar user: ACL changes do not end connections
 * already authenticated, so without this a leaked password keeps working on an open
 * connection after its grace period. The sidecar reconnects with its current password.
 */
export async function killSidecarConnections(redis: RedisClient, clusterId: string): Promise<void> {
  await onEveryRedisNode(redis, (node) =>
    node.call('CLIENT', 'KILL', 'USER', sidecarRedisUser(clusterId)),
  );
}

/** The worker queue whose jobs re-sync sidecar ACL users (and end grace periods). */
export const SIDECAR_CREDENTIALS_QUEUE = queueName('sidecar-credentials');

export async function deleteSidecarAcl(redis: RedisClient, clusterId: string): Promise<void> {
  await onEveryRedisNode(redis, (node) => node.call('ACL', 'DELUSER', sidecarRedisUser(clusterId)));
}

/** The Redis URL a sidecar connects with: its own user and password on the fleet's Redis. */
export function sidecarRedisUrl(baseUrl: string, clusterId: string, password: string): string {
  const url = new URL(baseUrl);
  url.username = encodeURIComponent(sidecarRedisUser(clusterId));
  url.password = encodeURIComponent(password);
  return url.toString();
}
