import type pg from 'pg';

/** One fold at a time across worker replicas (any constant both agree on). */
const FOLD_LOCK = 0x666c_7375; // "flsu"

/**
 * Takes the clusters marked in FleetSummaryDirty into the fleet summary's counts (issue 19): for
 * each, its current keys (`fleet_summary_keys`) replace the keys it was counted under, and the
 * difference goes into FleetSummaryCount, in one transaction, so the counts always equal the sum
 * of the stored keys. The marks are deleted first and the keys computed by a later statement,
 * whose snapshot sees every change those marks were committed with; a change committed
 * meanwhile leaves its mark for the next fold (the API corrects for it until then). Returns how
 * many clusters were folded.
 */
export async function foldFleetSummary(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [FOLD_LOCK]);
    const { rows } = await client.query<{ id: string }>(
      `WITH taken AS (DELETE FROM "FleetSummaryDirty" RETURNING "clusterId")
       SELECT DISTINCT "clusterId"::text AS id FROM taken`,
    );
    if (rows.length) {
      await client.query(
        `WITH ids AS (SELECT DISTINCT unnest($1::uuid[]) AS id),
              stored AS (SELECT ids.id, k.keys FROM ids JOIN "ClusterSummaryKeys" k ON k."clusterId" = ids.id),
              fresh AS (SELECT id, fleet_summary_keys(id) AS keys FROM ids),
              delta AS (
                SELECT key, sum(n)::int AS n
                  FROM (SELECT unnest(keys) AS key, -1 AS n FROM stored
                        UNION ALL SELECT unnest(keys), 1 FROM fresh) x
                 GROUP BY key HAVING sum(n) <> 0),
              counted AS (
                INSERT INTO "FleetSummaryCount" (key, count) SELECT key, n FROM delta ORDER BY key
                ON CONFLICT (key) DO UPDATE SET count = "FleetSummaryCount".count + EXCLUDED.count
                RETURNING 1),
              kept AS (
                INSERT INTO "ClusterSummaryKeys" ("clusterId", keys)
                SELECT id, keys FROM fresh WHERE keys <> '{}' ORDER BY id
                ON CONFLICT ("clusterId") DO UPDATE SET keys = EXCLUDED.keys
                RETURNING 1),
              gone AS (
                DELETE FROM "ClusterSummaryKeys" WHERE "clusterId" IN (SELECT id FROM fresh WHERE keys = '{}')
                RETURNING 1)
         SELECT (SELECT count(*) FROM counted) + (SELECT count(*) FROM kept) + (SELECT count(*) FROM gone) AS n`,
        [rows.map((r) => r.id)],
      );
      await client.query(`DELETE FROM "FleetSummaryCount" WHERE count = 0`);
    }
    await client.query('COMMIT');
    return rows.length;
  } catch (err) {
    broken = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(broken);
  }
}
