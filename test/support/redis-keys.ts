import { isRedisCluster, redisNodes, type RedisClient } from '@fleet/contracts';

/**
 * Deletes the keys matching `pattern` (a suite's or a bench's prefix) and nothing else: on a
 * Redis Cluster, with its one database 0 shared by every suite, this is how one of them
 * "flushes" its own keys. A SCAN per master (a key lives on one), one UNLINK per key (keys on
 * one master may still be in different slots).
 */
export async function deleteRedisKeys(client: RedisClient, pattern: string): Promise<number> {
  const nodes = isRedisCluster(client) ? client.nodes('master') : redisNodes(client);
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      await Promise.all(keys.map((key) => node.unlink(key)));
      deleted += keys.length;
    } while (cursor !== '0');
  }
  return deleted;
}
