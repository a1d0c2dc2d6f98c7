import { createHash } from 'node:crypto';
import { sidecarQueueName } from './messages.js';

/** The Redis ACL user of one cluster's sidecar. */
export const sidecarRedisUser = (clusterId: string): string => `sidecar.${clusterId}`;

export const sha256Hex = (secret: string): string =>
  createHash('sha256').update(secret).digest('hex');

/**
 * ACL SETUSER arguments that let a sidecar reach its own order queue's keys (and pub/sub
 * channels) and nothing else. Passwords are given as sha256 hashes (`#<hex>`), which Redis
 * accepts, so the fleet can recreate the user without knowing the password. BullMQ needs
 * INFO (version check) and CLIENT SETNAME besides ordinary key commands and Lua scripts.
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
    '+@all',
    '-@admin',
    '-@dangerous',
    '+info',
    '+client|setname',
    '+client|getname',
    '+client|id',
  ];
}

/** Anything that can send a raw Redis command (an ioredis client). */
export interface RedisCommander {
  call(command: string, ...args: string[]): Promise<unknown>;
}

export async function applySidecarAcl(
  redis: RedisCommander,
  prefix: string,
  clusterId: string,
  passwordHashes: readonly string[],
): Promise<void> {
  await redis.call(
    'ACL',
    'SETUSER',
    sidecarRedisUser(clusterId),
    ...sidecarAclRules(prefix, clusterId, passwordHashes),
  );
}

/**
 * Cuts every connection of the cluster's sidecar user: ACL changes do not end connections
 * already authenticated, so without this a leaked password keeps working on an open
 * connection after its grace period. The sidecar reconnects with its current password.
 */
export async function killSidecarConnections(
  redis: RedisCommander,
  clusterId: string,
): Promise<void> {
  await redis.call('CLIENT', 'KILL', 'USER', sidecarRedisUser(clusterId));
}

/** The worker queue whose jobs re-sync sidecar ACL users (and end grace periods). */
export const SIDECAR_CREDENTIALS_QUEUE = 'sidecar-credentials';

export async function deleteSidecarAcl(redis: RedisCommander, clusterId: string): Promise<void> {
  await redis.call('ACL', 'DELUSER', sidecarRedisUser(clusterId));
}

/** The Redis URL a sidecar connects with: its own user and password on the fleet's Redis. */
export function sidecarRedisUrl(baseUrl: string, clusterId: string, password: string): string {
  const url = new URL(baseUrl);
  url.username = encodeURIComponent(sidecarRedisUser(clusterId));
  url.password = encodeURIComponent(password);
  return url.toString();
}
