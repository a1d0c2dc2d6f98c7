import { Prisma } from '@fleet/database';

/** Joins a maintained count's dimension and value (chr 31, as the fleet_summary migration). */
export const SUMMARY_SEP = '\u001f';

/**
 * The counts FleetSummaryCount maintains (all of them, or only `keys`), corrected for the
 * clusters changed since the worker last folded them in (FleetSummaryDirty: each one's current
 * keys in, the keys it is counted under out). One statement, so one snapshot: exact as of it,
 * since every change marks its cluster in its own transaction and the fold updates the counts and
 * the keys together (see the fleet_summary migration). Rows `key, count`; a key counting nothing
 * has no row.
 */
export function maintainedCountsSql(keys?: readonly string[]): Prisma.Sql {
  const only = keys ? Prisma.sql`WHERE key = ANY(${[...keys]}::text[])` : Prisma.empty;
  return Prisma.sql`
    WITH dirty AS (SELECT DISTINCT "clusterId" AS id FROM "FleetSummaryDirty"),
         counted AS (
           SELECT key, count AS n FROM "FleetSummaryCount"
           UNION ALL
           SELECT unnest(k.keys), -1 FROM dirty JOIN "ClusterSummaryKeys" k ON k."clusterId" = dirty.id
           UNION ALL
           SELECT unnest(fleet_summary_keys(dirty.id)), 1 FROM dirty)
    SELECT key, sum(n)::int AS count FROM counted ${only} GROUP BY key HAVING sum(n) <> 0`;
}
