import { Injectable } from '@nestjs/common';
import { Field, Int, ObjectType } from '@nestjs/graphql';
import { Prisma } from '@fleet/database';
import type { Principal } from '../auth/principal.js';
import { labelSelectorSql } from '../clusters/cluster-query.js';
import { DateTimeScalar } from '../common/date-time.scalar.js';
import { userInputError } from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';

@ObjectType({
  description:
    'The fleet in one hour: clusters by the worst state they reported in it, mutually exclusive (degraded, else progressing, else healthy), and stale: registered by the end of the hour yet no report in it. All four null where no roll-up covers the hour (a gap, never zeros): the current hour, or hours before history began. Paused is not in history (the desired state keeps no past).',
})
export class FleetHealthPoint {
  @Field(() => DateTimeScalar, { description: 'Start of the hour.' })
  at!: Date;

  @Field(() => Int, { nullable: true })
  healthy!: number | null;

  @Field(() => Int, { nullable: true })
  progressing!: number | null;

  @Field(() => Int, { nullable: true })
  degraded!: number | null;

  @Field(() => Int, { nullable: true })
  stale!: number | null;
}

/** Longest range one request may ask for: 31 days of hourly points. */
export const MAX_FLEET_HISTORY_DAYS = 31;

/**
 * The fleet's health over time (issue 47, the Overview's chart), one point per hour, from the
 * hourly roll-ups the worker keeps (HealthRollup, by its bucket index): never the raw samples,
 * which at 100,000 clusters are hundreds of millions of rows a day.
 */
@Injectable()
export class FleetHealthHistoryService {
  constructor(private readonly prisma: PrismaService) {}

  async points(principal: Principal, from: Date, to: Date): Promise<FleetHealthPoint[]> {
    const range = to.getTime() - from.getTime();
    if (!(range > 0)) throw userInputError('to', 'must be after from');
    if (range > MAX_FLEET_HISTORY_DAYS * 86_400_000) {
      throw userInputError('from', `the range may span at most ${MAX_FLEET_HISTORY_DAYS} days`);
    }
    const scope = principal.scope ? labelSelectorSql(principal.scope) : [];
    const inScope = scope.length ? Prisma.sql`AND ${Prisma.join(scope, ' AND ')}` : Prisma.empty;
    return this.prisma.client.$queryRaw<FleetHealthPoint[]>(Prisma.sql`
      WITH hours AS (
             SELECT generate_series(date_trunc('hour', ${from}::timestamptz),
                                    ${to}::timestamptz - interval '1 millisecond', interval '1 hour') AS at),
           states AS (
             SELECT r.bucket AS at,
                    count(*) FILTER (WHERE r."degradedSamples" > 0)::int AS degraded,
                    count(*) FILTER (WHERE r."degradedSamples" = 0 AND r."progressingSamples" > 0)::int AS progressing,
                    count(*) FILTER (WHERE r."degradedSamples" = 0 AND r."progressingSamples" = 0)::int AS healthy
               FROM "HealthRollup" r JOIN "Cluster" c ON c.id = r."clusterId"
              WHERE r.bucket >= date_trunc('hour', ${from}::timestamptz) AND r.bucket < ${to} ${inScope}
              GROUP BY r.bucket),
           total AS (SELECT count(*)::int AS n FROM "Cluster" c WHERE true ${inScope})
      -- Registered by the end of the hour: all of them but the few registered since (by the
      -- createdAt index), rather than counting the whole fleet again for every hour.
      SELECT h.at, s.healthy, s.progressing, s.degraded,
             CASE WHEN s.at IS NULL THEN NULL ELSE
               (SELECT n FROM total)
               - (SELECT count(*)::int FROM "Cluster" c
                   WHERE c."createdAt" >= h.at + interval '1 hour' ${inScope})
               - s.healthy - s.progressing - s.degraded
             END AS stale
        FROM hours h LEFT JOIN states s ON s.at = h.at
       ORDER BY h.at`);
  }
}
