import { Args, Int, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { Prisma } from '@fleet/database';
import { RequireRole } from '../auth/roles.decorator.js';
import { DateTimeScalar } from '../common/date-time.scalar.js';
import { decodeCursor, encodeCursor, pageWindow } from '../common/connection.js';
import { userInputError } from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';
import { Cluster } from './models/cluster.model.js';
import {
  AuditEventConnection,
  CsrDecisionBucket,
  CsrDecisionConnection,
  ReconcileRunConnection,
  ReconcileRunState,
  type AuditEvent,
  type CsrDecision,
  type ReconcileRun,
} from './models/activity.model.js';

interface Page<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
  totalCount: number;
}

/** Newest first, keyset on a monotonic key; `first`/`after` only (activity is read forwards). */
function page<T>(
  rows: (T & { key: bigint | number })[],
  size: number,
  totalCount: number,
  hadCursor: boolean,
): Page<T> {
  const items = rows.slice(0, size);
  const edges = items.map(({ key, ...node }) => ({
    cursor: encodeCursor([String(key)]),
    node: node as unknown as T,
  }));
  return {
    edges,
    nodes: edges.map((e) => e.node),
    pageInfo: {
      hasNextPage: rows.length > size,
      hasPreviousPage: hadCursor,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount,
  };
}

function afterKey(after: string | null): bigint | undefined {
  if (!after) return undefined;
  const [key] = decodeCursor(after, 'after');
  if (typeof key !== 'string' || !/^\d+$/.test(key))
    throw userInputError('after', 'is not a cursor returned by this API');
  return BigInt(key);
}

/** One newest-first page: rows strictly older than the cursor's key, and the cluster's total. */
async function newestFirst<R, T>(
  first: number | null,
  after: string | null,
  load: (before: bigint | undefined, take: number) => Promise<R[]>,
  count: () => Promise<number>,
  toNode: (row: R) => T & { key: bigint | number },
): Promise<Page<T>> {
  const { size } = pageWindow({ first });
  const before = afterKey(after);
  const [rows, total] = await Promise.all([load(before, size + 1), count()]);
  return page<T>(rows.map(toNode), size, total, before !== undefined);
}

/** A cluster's activity: what was dispatched, what its approver decided, who changed it. */
@Resolver(() => Cluster)
export class ClusterActivityResolver {
  constructor(private readonly prisma: PrismaService) {}

  @ResolveField(() => ReconcileRunConnection)
  reconcileRuns(
    @Parent() cluster: Cluster,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<Page<ReconcileRun>> {
    const db = this.prisma.client;
    const clusterId = cluster.uid;
    return newestFirst(
      first,
      after,
      (before, take) =>
        db.reconcileRun.findMany({
          where: {
            clusterId,
            ...(before !== undefined ? { generation: { lt: Number(before) } } : {}),
          },
          orderBy: { generation: 'desc' },
          take,
        }),
      () => db.reconcileRun.count({ where: { clusterId } }),
      (r) => ({
        key: r.generation,
        generation: r.generation,
        state: r.state as ReconcileRunState,
        error: r.error,
        createdAt: r.createdAt,
        dispatchedAt: r.dispatchedAt,
        finishedAt: r.finishedAt,
      }),
    );
  }

  @ResolveField(() => CsrDecisionConnection)
  csrDecisions(
    @Parent() cluster: Cluster,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<Page<CsrDecision>> {
    const db = this.prisma.client;
    const clusterId = cluster.uid;
    return newestFirst(
      first,
      after,
      (before, take) =>
        db.csrDecision.findMany({
          where: { clusterId, ...(before !== undefined ? { id: { lt: before } } : {}) },
          orderBy: { id: 'desc' },
          take,
        }),
      () => db.csrDecision.count({ where: { clusterId } }),
      ({ id, clusterId: _c, ...d }) => ({ key: id, ...d }),
    );
  }

  @ResolveField(() => AuditEventConnection)
  auditEvents(
    @Parent() cluster: Cluster,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<Page<AuditEvent>> {
    const db = this.prisma.client;
    const clusterId = cluster.uid;
    return newestFirst(
      first,
      after,
      (before, take) =>
        db.auditEvent.findMany({
          where: { clusterId, ...(before !== undefined ? { id: { lt: before } } : {}) },
          orderBy: { id: 'desc' },
          take,
        }),
      () => db.auditEvent.count({ where: { clusterId } }),
      (e) => ({
        key: e.id,
        at: e.at,
        actor: e.actor,
        action: e.action,
        before: e.before,
        after: e.after,
      }),
    );
  }

  @ResolveField(() => [CsrDecisionBucket], {
    description:
      'CSR decisions between from and to, counted per step (seconds; default range/48, at least range/500) by decision and reason, oldest first.',
  })
  @RequireRole('VIEWER')
  csrDecisionHistory(
    @Parent() cluster: Cluster,
    @Args('from', { type: () => DateTimeScalar }) from: Date,
    @Args('to', { type: () => DateTimeScalar }) to: Date,
    @Args('step', { type: () => Int, nullable: true }) step: number | null,
  ): Promise<CsrDecisionBucket[]> {
    const range = (to.getTime() - from.getTime()) / 1000;
    if (!(range > 0)) throw userInputError('to', 'must be after from');
    if (range > 31 * 86_400) throw userInputError('from', 'the range may span at most 31 days');
    if (step != null && step < 1) throw userInputError('step', 'must be at least 1 second');
    const seconds = Math.max(step ?? Math.ceil(range / 48), Math.ceil(range / 500), 1);
    // By the (clusterId, decidedAt) index.
    return this.prisma.client.$queryRaw<CsrDecisionBucket[]>(Prisma.sql`
      SELECT date_bin(make_interval(secs => ${seconds}), "decidedAt", ${from}::timestamptz) AS at,
             decision, reason, count(*)::int AS count
        FROM "CsrDecision"
       WHERE "clusterId" = ${cluster.uid}::uuid AND "decidedAt" >= ${from} AND "decidedAt" < ${to}
       GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
  }
}
