import { Injectable } from '@nestjs/common';
import { Prisma } from '@fleet/database';
import { userInputError } from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';
import type { HealthPoint } from './health-point.model.js';

const HOUR = 3600;
/** Raw samples are kept this long (the worker's HISTORY_RAW_RETENTION_DAYS default). */
const RAW_RETENTION_SECONDS = 7 * 86_400;
const MAX_POINTS = 1000;
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
                 avg((metrics->>'nodes')::float8) AS nodes, avg((metrics->>'vcpus')::float8) AS vcpus
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
                 sum("vcpusAvg" * samples) / nullif(sum(samples) FILTER (WHERE "vcpusAvg" IS NOT NULL), 0) AS vcpus
            FROM "HealthRollup"
           WHERE "clusterId" = ${clusterId}::uuid AND bucket >= date_trunc('hour', ${from}::timestamptz) AND bucket < ${to}
           GROUP BY 1 ORDER BY 1`);
    return rows;
  }
}
