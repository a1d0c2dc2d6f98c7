import { ingestKey } from '@fleet/contracts';
import type { RedisClient } from '@fleet/contracts';
import type pg from 'pg';

/**
 * Moves `liveness` into `liveness-flushing` (keeping the later time of a cluster present in
 * both, e.g. left by a worker that died mid-flush) and returns all of `liveness-flushing`.
 */
const TAKE_LUA = `
local taken = redis.call('HGETALL', KEYS[1])
for i = 1, #taken, 2 do
  local held = tonumber(redis.call('HGET', KEYS[2], taken[i]) or '0')
  if tonumber(taken[i + 1]) > held then redis.call('HSET', KEYS[2], taken[i], taken[i + 1]) end
end
redis.call('DEL', KEYS[1])
return redis.call('HGETALL', KEYS[2])`;

/** Forgets the flushed fields of `liveness-flushing` whose time is still the one flushed. */
const DONE_LUA = `
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n`;

/**
 * Clusters per statement and per script when flushing liveness or forgetting digests. A backlog
 * (a worker that was away while 100,000 clusters heartbeat) must not become one statement and one
 * script call for all of it: the script's arguments overflowed the JavaScript call stack beyond
 * ~120,000, so the flush failed after its commit every second, forever; and one huge script
 * stalls every other Redis client while it runs.
 */
export const LIVENESS_CHUNK = 5_000;

/**
 * Heartbeats that change nothing only refresh liveness in Redis (the API's `heartbeat` script);
 * this writes it to PostgreSQL, `LIVENESS_CHUNK` clusters a statement: `lastReportAt` moves
 * forward to the heartbeat's reception time (fleet clock), never back. Run every second by the
 * worker and right before each staleness sweep, so Stale reads the liveness of every accepted
 * heartbeat.
 *
 * What a worker took stays in `liveness-flushing` until PostgreSQL committed it, so a worker
 * dying mid-flush loses nothing: the next flush (any worker) writes it again (idempotent).
 * Returns the clusters flushed.
 */
export async function flushLiveness(
  redis: RedisClient,
  pool: pg.Pool,
  prefix: string,
  chunk = LIVENESS_CHUNK,
): Promise<number> {
  const live = ingestKey(prefix, 'liveness');
  const flushing = ingestKey(prefix, 'liveness-flushing');
  const taken = (await redis.eval(TAKE_LUA, 2, live, flushing)) as string[];
  for (let start = 0; start < taken.length; start += 2 * chunk) {
    const pairs = taken.slice(start, start + 2 * chunk);
    await writeLiveness(pool, pairs);
    await redis.eval(DONE_LUA, 1, flushing, ...pairs);
  }
  return taken.length / 2;
}

/** One transaction: `pairs` is cluster id, reception time (ms) after one another. */
async function writeLiveness(pool: pg.Pool, pairs: string[]): Promise<void> {
  const ids: string[] = [];
  const times: string[] = [];
  for (let i = 0; i < pairs.length; i += 2) {
    ids.push(pairs[i]!);
    times.push(new Date(Number(pairs[i + 1])).toISOString());
  }
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    // Locks in the order the report batches take them: the two never deadlock.
    await client.query(
      `UPDATE "ClusterStatus" s SET "lastReportAt" = u.at
         FROM (SELECT s2."clusterId", u2.at FROM unnest($1::uuid[], $2::timestamptz[]) AS u2(id, at)
                 JOIN "ClusterStatus" s2 ON s2."clusterId" = u2.id
                ORDER BY s2."clusterId" FOR UPDATE OF s2) AS u
        WHERE s."clusterId" = u."clusterId" AND (s."lastReportAt" IS NULL OR s."lastReportAt" < u.at)`,
      [ids, times],
    );
    await client.query('COMMIT');
  } catch (err) {
    broken = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Forgets each cluster's digest and moves its fence (keys: digests, digest-fences). */
const FORGET_LUA = `
for i = 1, #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('HINCRBY', KEYS[2], ARGV[i], 1)
end
return #ARGV`;

/**
 * Records (or deletes, for an empty digest) each cluster's digest only if its fence is still the
 * one read before its report was written; a fence of `*` (none could be read) deletes it (keys:
 * digests, digest-fences; ARGV: cluster, digest, fence triples). Returns how many were recorded.
 */
const RECORD_LUA = `
local n = 0
for i = 1, #ARGV, 3 do
  if ARGV[i + 2] == '*' then redis.call('HDEL', KEYS[1], ARGV[i])
  elseif (redis.call('HGET', KEYS[2], ARGV[i]) or '0') == ARGV[i + 2] then
    if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[1], ARGV[i])
    else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
    n = n + 1
  end
end
return n`;

/**
 * Each cluster's digest fence: read before a batch of its reports is written to PostgreSQL, and
 * handed back to `recordDigests` after the commit.
 */
export type DigestFences = ReadonlyMap<string, string>;

/**
 * The fleet forgets a cluster's applied digest when something other than a report changed its
 * status (a sweep raised Stale or OrderNotTaken): its next heartbeat is answered 409 and the
 * sidecar's full report clears the condition the ordinary way.
 *
 * Forgetting also moves the cluster's fence. Without it a report committed just before the sweep
 * (which then raised Stale over it: a report that waited in the stream, or an old generation
 * raising OrderNotTaken) could have its digest recorded just after this forget, as recording
 * runs after the report's commit: the cluster would stay Stale while its heartbeats were
 * accepted, and no full report would ever clear it. A digest is recorded only if the fence did
 * not move since before its report's transaction: a sweep that committed before that transaction
 * began is seen by it (the report clears the condition), and one that forgot after it moved the
 * fence, so the digest stays forgotten and the next heartbeat asks for the full report.
 */
export async function forgetDigests(
  redis: RedisClient,
  prefix: string,
  clusterIds: readonly string[],
): Promise<void> {
  for (let start = 0; start < clusterIds.length; start += LIVENESS_CHUNK) {
    await redis.eval(
      FORGET_LUA,
      2,
      ingestKey(prefix, 'digests'),
      ingestKey(prefix, 'digest-fences'),
      ...clusterIds.slice(start, start + LIVENESS_CHUNK),
    );
  }
}

/** The fences of `clusterIds`, read before their reports' transaction begins. */
export async function readDigestFences(
  redis: RedisClient,
  prefix: string,
  clusterIds: readonly string[],
): Promise<DigestFences> {
  const ids = [...new Set(clusterIds)];
  if (!ids.length) return new Map();
  const fences = await redis.hmget(ingestKey(prefix, 'digest-fences'), ...ids);
  return new Map(ids.map((id, i) => [id, fences[i] ?? '0']));
}

/**
 * After a batch committed: each advanced cluster's digest is its applied report's, or none,
 * unless a sweep forgot it since `fences` were read (see `forgetDigests`). A cluster without a
 * fence (it could not be read) has its digest deleted: the one held may be of a status this
 * report replaced, and forgetting costs only one full report. Returns how many were recorded.
 */
export async function recordDigests(
  redis: RedisClient,
  prefix: string,
  applied: readonly { clusterId: string; digest?: string | undefined }[],
  fences: DigestFences,
): Promise<number> {
  const args: string[] = [];
  for (const { clusterId, digest } of applied) {
    const fence = fences.get(clusterId);
    args.push(clusterId, fence === undefined ? '' : (digest ?? ''), fence ?? '*');
  }
  if (!args.length) return 0;
  return (await redis.eval(
    RECORD_LUA,
    2,
    ingestKey(prefix, 'digests'),
    ingestKey(prefix, 'digest-fences'),
    ...args,
  )) as number;
}
