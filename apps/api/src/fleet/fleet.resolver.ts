import { Args, Context, ID, Query, Resolver, Subscription } from '@nestjs/graphql';

import { principalOf, type AuthCarrier } from '../auth/auth.guard.js';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { RequireRole } from '../auth/roles.decorator.js';
import { clusterWhere } from '../clusters/cluster-query.js';
import { ClusterQueries } from '../clusters/cluster-queries.service.js';
import { ClusterFilter } from '../clusters/dto/cluster.inputs.js';
import { Cluster } from '../clusters/models/cluster.model.js';
import { notFoundError } from '../common/errors.js';
import { parseGlobalId } from '../common/global-id.js';
import { Node } from '../common/node.interface.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import { coalesce } from '../events/coalesce.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import { RolloutsService } from '../rollouts/rollouts.service.js';
import { FleetSummary } from './fleet-summary.model.js';
import { FleetSummaryService } from './fleet-summary.service.js';
import { FleetHealthHistoryService, FleetHealthPoint } from './fleet-health-history.js';
import { DateTimeScalar } from '../common/date-time.scalar.js';
import { Inject } from '@nestjs/common';

type SubscriptionContext = { req?: AuthCarrier; connection?: AuthCarrier };

/** Summaries are recomputed at most this often per subscriber, however busy the fleet is. */
const SUMMARY_INTERVAL_MS = 1000;

@Resolver()
export class FleetResolver {
  constructor(
    private readonly summaries: FleetSummaryService,
    private readonly history: FleetHealthHistoryService,
    private readonly clusters: ClusterQueries,
    private readonly rollouts: RolloutsService,
    private readonly events: FleetEventsService,
    private readonly prisma: PrismaService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  @Query(() => FleetSummary)
  @RequireRole('VIEWER')
  fleetSummary(@CurrentPrincipal() principal: Principal): Promise<FleetSummary> {
    return this.summaries.summary(principal);
  }

  @Query(() => [FleetHealthPoint], {
    description:
      'The fleet (the clusters the caller may see) by health state, one point per hour between from and to (at most 31 days), from the hourly roll-ups; an hour no roll-up covers is a gap (nulls).',
  })
  @RequireRole('VIEWER')
  fleetHealthHistory(
    @CurrentPrincipal() principal: Principal,
    @Args('from', { type: () => DateTimeScalar }) from: Date,
    @Args('to', { type: () => DateTimeScalar }) to: Date,
  ): Promise<FleetHealthPoint[]> {
    return this.history.points(principal, from, to);
  }

  @Query(() => Node, { nullable: true, description: 'Any object by its global ID.' })
  @RequireRole('VIEWER')
  async node(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<Node | null> {
    const parsed = parseGlobalId(id);
    if (parsed?.type === 'Cluster') return this.clusters.get(principal, parsed.uid);
    if (parsed?.type === 'Rollout') return this.rollouts.get(principal, parsed.uid);
    throw notFoundError('node', id);
  }

  @Subscription(() => Cluster, {
    description: 'Each change of a cluster that matches the filter (and the token scope).',
    resolve: (cluster: Cluster) => cluster,
  })
  @RequireRole('VIEWER')
  clusterChanged(
    @Context() context: SubscriptionContext,
    @Args('filter', { type: () => ClusterFilter, nullable: true }) filter: ClusterFilter | null,
  ): AsyncIterableIterator<Cluster> {
    const principal = principalOf(context);
    const where = clusterWhere(filter, principal, this.config.STALE_AFTER_SECONDS);
    const events = this.events.iterator<{ clusterId: string }>('cluster-changed');
    const { prisma, clusters } = this;
    return (async function* () {
      for await (const event of { [Symbol.asyncIterator]: () => events }) {
        const match = await prisma.client.$queryRaw<{ id: string }[]>`
          SELECT c.id FROM "Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id
            JOIN "ClusterStatus" s ON s."clusterId" = c.id
           WHERE c.id = ${event.clusterId}::uuid AND ${where}`;
        if (match.length) yield await clusters.get(principal, event.clusterId);
      }
    })();
  }

  @Subscription(() => FleetSummary, { resolve: (summary: FleetSummary) => summary })
  @RequireRole('VIEWER')
  fleetSummaryChanged(
    @Context() context: SubscriptionContext,
  ): AsyncIterableIterator<FleetSummary> {
    const principal = principalOf(context);
    const events = this.events.iterator<unknown>('cluster-changed');
    const { summaries } = this;
    return (async function* () {
      yield await summaries.summary(principal);
      for await (const _tick of coalesce(events, SUMMARY_INTERVAL_MS)) {
        yield await summaries.summary(principal);
      }
    })();
  }
}
