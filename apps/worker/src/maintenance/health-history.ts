import type pg from 'pg';

const DAY_MS = 86_400_000;
const partitionName = (day: Date) =>
  `HealthSample_p${day.toISOString().slice(0, 10).replace(/-/g, '')}`;
const utcDay = (t: number) => new Date(Math.floor(t / DAY_MS) * DAY_MS);

/**
 * Creates the daily partition of `day` (UTC) if absent. Samples of that day that landed in the
 * default partition meanwhile move into it first: ATTACH refuses while the default holds any.
 */
export async function ensureHealthPartition(pool: pg.Pool, day: Date): Promise<boolean> {
  const name = partitionName(day);
  const lo = utcDay(day.getTime()).toISOString();
  const hi = new Date(utcDay(day.getTime()).getTime() + DAY_MS).toISOString();
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    // Two maintenance runs (two worker replicas) would race on CREATE TABLE.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('fleet:health-partitions'))`);
    const { rows } = await client.query<{ exists: boolean }>(
      `SELECT to_regclass($1) IS NOT NULL AS exists`,
      [`"${name}"`],
    );
    if (rows[0]?.exists) {
      await client.query('COMMIT');
      return false;
    }
    await client.query(`CREATE TABLE "${name}" (LIKE "HealthSample" INCLUDING DEFAULTS)`);
    // Ingest must not add that day's samples to the default partition between the move below
    // and ATTACH (which takes this lock itself, but only then): ATTACH would refuse them.
    await client.query(`LOCK TABLE "HealthSample_default" IN ACCESS EXCLUSIVE MODE`);
    await client.query(
      `WITH moved AS (DELETE FROM "HealthSample_default" WHERE "observedAt" >= $1 AND "observedAt" < $2 RETURNING *)
       INSERT INTO "${name}" SELECT * FROM moved`,
      [lo, hi],
    );
    // A matching CHECK lets ATTACH skip scanning the new partition.
    await client.query(
      `ALTER TABLE "${name}" ADD CONSTRAINT "${name}_range" CHECK ("observedAt" >= '${lo}' AND "observedAt" < '${hi}')`,
    );
    await client.query(
      `ALTER TABLE "HealthSample" ATTACH PARTITION "${name}" FOR VALUES FROM ('${lo}') TO ('${hi}')`,
    );
    await client.query('COMMIT');
    return true;
  } catch (err) {
    broken = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Ensures the daily partitions from `daysBack` days ago to `daysAhead` days ahead; how many it made. */
export async function ensureHealthPartitions(
  pool: pg.Pool,
  daysBack: number,
  daysAhead: number,
  now = Date.now(),
): Promise<number> {
  let created = 0;
  for (let d = -daysBack; d <= daysAhead; d++) {
    if (await ensureHealthPartition(pool, utcDay(now + d * DAY_MS))) created++;
  }
  return created;
}

export interface HistoryOptions {
  rawRetentionDays: number;
  rollupRetentionDays: number;
  partitionsAheadDays: number;
}

export interface HistoryResult {
  created: number;
  dropped: string[];
  rolledUp: number;
}

/**
 * Health-history housekeeping: partitions from the oldest retained day to a few days ahead,
 * partitions past retention dropped whole (no row-by-row DELETE), hourly roll-ups of every
 * finished hour (re-rolling the last two, for late reports), roll-ups past their retention deleted.
 */
export async function maintainHealthHistory(
  pool: pg.Pool,
  options: HistoryOptions,
  now = Date.now(),
): Promise<HistoryResult> {
  const created = await ensureHealthPartitions(
    pool,
    options.rawRetentionDays,
    options.partitionsAheadDays,
    now,
  );

  const rolledUp = await rollUpHealth(pool, options.rawRetentionDays, now);

  const oldestKept = utcDay(now - options.rawRetentionDays * DAY_MS);
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = '"HealthSample"'::regclass AND c.relname ~ '^HealthSample_p[0-9]{8}$'`,
  );
  const dropped: string[] = [];
  for (const { name } of rows) {
    const stamp = name.slice('HealthSample_p'.length);
    const day = Date.UTC(
      Number(stamp.slice(0, 4)),
      Number(stamp.slice(4, 6)) - 1,
      Number(stamp.slice(6, 8)),
    );
    if (day < oldestKept.getTime()) {
      await pool.query(`DROP TABLE IF EXISTS "${name}"`);
      dropped.push(name);
    }
  }
  await pool.query(`DELETE FROM "HealthSample_default" WHERE "observedAt" < $1`, [oldestKept]);
  await pool.query(`DELETE FROM "HealthRollup" WHERE bucket < $1`, [
    new Date(now - options.rollupRetentionDays * DAY_MS),
  ]);
  return { created, dropped, rolledUp };
}

/** Rolls up every finished hour since the last roll-up (at most the raw retention back). */
export async function rollUpHealth(
  pool: pg.Pool,
  rawRetentionDays: number,
  now = Date.now(),
): Promise<number> {
  const hourEnd = new Date(Math.floor(now / 3_600_000) * 3_600_000);
  const { rows } = await pool.query<{ last: Date | null }>(
    `SELECT max(bucket) AS last FROM "HealthRollup"`,
  );
  const floor = new Date(now - rawRetentionDays * DAY_MS);
  const last = rows[0]?.last;
  // Two hours back from the last bucket: reports arrive late (retries, buffered heartbeats).
  const from =
    last && last.getTime() - 2 * 3_600_000 > floor.getTime()
      ? new Date(last.getTime() - 2 * 3_600_000)
      : floor;
  if (from >= hourEnd) return 0;
  const result = await pool.query(
    `INSERT INTO "HealthRollup" ("clusterId", bucket, samples, "availableSamples", "degradedSamples", "progressingSamples",
                                 "nodesAvg", "nodesMax", "vcpusAvg")
     SELECT "clusterId", date_trunc('hour', "observedAt"), count(*)::int,
            count(*) FILTER (WHERE available)::int, count(*) FILTER (WHERE degraded)::int, count(*) FILTER (WHERE progressing)::int,
            avg((metrics->>'nodes')::float8), max((metrics->>'nodes')::int), avg((metrics->>'vcpus')::float8)
       FROM "HealthSample"
      WHERE "observedAt" >= date_trunc('hour', $1::timestamptz) AND "observedAt" < $2
      GROUP BY 1, 2
     ON CONFLICT ("clusterId", bucket) DO UPDATE
        SET samples = EXCLUDED.samples, "availableSamples" = EXCLUDED."availableSamples",
            "degradedSamples" = EXCLUDED."degradedSamples", "progressingSamples" = EXCLUDED."progressingSamples",
            "nodesAvg" = EXCLUDED."nodesAvg", "nodesMax" = EXCLUDED."nodesMax", "vcpusAvg" = EXCLUDED."vcpusAvg"`,
    [from, hourEnd],
  );
  return result.rowCount ?? 0;
}
