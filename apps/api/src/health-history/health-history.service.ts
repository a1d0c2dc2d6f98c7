import { Injectable } from '@nestjs/common';
import { Prisma } from '@fleet/database';
import { userInputError } from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';
import { toMachineConfigPools } from '../clusters/cluster.mapper.js';
import type { HealthPoint } from './health-point.model.js';
import type { MachineConfigPoolSample } from './machine-config-pool-sample.model.js';

const HOUR = 3600;
/** Raw samples are kept this long (the worker's HISTORY_RAW_RETENTION_DAYS default). */
const RAW_RETENTION_SECONDS = 7 * 86_400;
const MAX_POINTS = 1000;
/** Most pool samples one request returns (the newest). */
// Every `first`/`last` of the API is 1–100 (the query limits refuse others before any resolver).
export const MAX_POOL_SAMPLES = 100;
/** Up to this range (and within raw retention) points come from raw samples. */
const RAW_RANGE_SECONDS = 48 * HOUR;

/**
 * One cluster's health over a range, downsampled to `step`: from the raw partitioned samples for
 * recent, short ranges (one or two daily partitions, by primary-key index), from the hourly
 * roll-ups otherwise.
 */
@Injectable()
export class HealthHistoryService {
  constructor(private readonly prisma: PrismaService) {}

  async points(
    clusterId: string,
    from: Date,
    to: Date,
    stepSeconds: number | null | undefined,
  ): Promise<HealthPoint[]> {
    const range = (to.getTime() - from.getTime()) / 1000;
    if (!(range > 0)) throw userInputError('to', 'must be after from');
    if (range > 400 * 86_400) throw userInputError('from', 'the range may span at most 400 days');
    if (stepSeconds != null && stepSeconds < 1)
      throw userInputError('step', 'must be at least 1 second');
    let step = Math.max(stepSeconds ?? Math.ceil(range / 200), Math.ceil(range / MAX_POINTS), 1);
    const raw =
      range <= RAW_RANGE_SECONDS &&
      from.getTime() >= Date.now() - RAW_RETENTION_SECONDS * 1000 &&
      step < 6 * HOUR;
    if (!raw) step = Math.ceil(step / HOUR) * HOUR;
    const rows = raw
      ? await this.prisma.client.$queryRaw<HealthPoint[]>(Prisma.sql`
          SELECT date_bin(make_interval(secs => ${step}), "observedAt", ${from}::timestamptz) AS at,
                 count(*)::int AS samples,
                 avg(available::int)::float8 AS available, avg(degraded::int)::float8 AS degraded,
                 avg(progressing::int)::float8 AS progressing,
                 avg((metrics->>'nodes')::float8) AS nodes, avg((metrics->>'vcpus')::float8) AS vcpus,
                 -- Each state's count summed over the step's reports (a report without it: 0),
                 -- divided by the reports that carried the map at all; null when none did.
                 (SELECT jsonb_object_agg(e.key, e.total / nullif(count(*) FILTER (WHERE metrics ? 'nodeClaimsByState'), 0))
                    FROM (SELECT key, sum(value::float8) AS total
                            FROM unnest(array_agg(metrics->'nodeClaimsByState')) m(v),
                                 jsonb_each_text(CASE WHEN jsonb_typeof(m.v) = 'object' THEN m.v ELSE '{}' END)
                           GROUP BY key) e) AS "nodeClaimsByState"
            FROM "HealthSample"
           WHERE "clusterId" = ${clusterId}::uuid AND "observedAt" >= ${from} AND "observedAt" < ${to}
           GROUP BY 1 ORDER BY 1`)
      : await this.prisma.client.$queryRaw<HealthPoint[]>(Prisma.sql`
          SELECT date_bin(make_interval(secs => ${step}), bucket, ${from}::timestamptz) AS at,
                 sum(samples)::int AS samples,
                 sum("availableSamples")::float8 / sum(samples) AS available,
                 sum("degradedSamples")::float8 / sum(samples) AS degraded,
                 sum("progressingSamples")::float8 / sum(samples) AS progressing,
                 sum("nodesAvg" * samples) / nullif(sum(samples) FILTER (WHERE "nodesAvg" IS NOT NULL), 0) AS nodes,
                 sum("vcpusAvg" * samples) / nullif(sum(samples) FILTER (WHERE "vcpusAvg" IS NOT NULL), 0) AS vcpus,
                 NULL::jsonb AS "nodeClaimsByState"
            FROM "HealthRollup"
           WHERE "clusterId" = ${clusterId}::uuid AND bucket >= date_trunc('hour', ${from}::timestamptz) AND bucket < ${to}
           GROUP BY 1 ORDER BY 1`);
    return rows;
  }

  /**
   * The pools over a range, from the raw samples: each sample whose pools differ from the one
   * stored before it (a report every few seconds would otherwise repeat the same state), oldest
   * first, at most `last` of the newest. The rolled-up hours keep no pools, so a range reaches
   * back only as far as raw samples are kept.
   */
  async machineConfigPools(
    clusterId: string,
    from: Date,
    to: Date,
    last: number,
  ): Promise<MachineConfigPoolSample[]> {
    if (!(to.getTime() > from.getTime())) throw userInputError('to', 'must be after from');
    if (!Number.isInteger(last) || last < 1 || last > MAX_POOL_SAMPLES)
      throw userInputError('last', `must be between 1 and ${MAX_POOL_SAMPLES}`);
    const rows = await this.prisma.client.$queryRaw<
      { observedAt: Date; observedGeneration: number; pools: unknown }[]
    >(Prisma.sql`
      SELECT "observedAt", "observedGeneration", pools FROM (
        SELECT "observedAt", "observedGeneration", "machineConfigPools" AS pools,
               "machineConfigPools" IS DISTINCT FROM lag("machineConfigPools") OVER (ORDER BY "observedAt") AS changed
          FROM "HealthSample"
         WHERE "clusterId" = ${clusterId}::uuid AND "observedAt" >= ${from} AND "observedAt" < ${to}
           AND "machineConfigPools" IS NOT NULL
      ) s
       WHERE changed
       ORDER BY "observedAt" DESC
       LIMIT ${last}`);
    return rows.reverse().map((r) => ({
      observedAt: r.observedAt,
      observedGeneration: r.observedGeneration,
      pools: toMachineConfigPools(r.pools) ?? [],
    }));
  }
}
