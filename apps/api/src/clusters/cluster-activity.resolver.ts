import { Args, Int, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { decodeCursor, encodeCursor, pageWindow } from '../common/connection.js';
import { userInputError } from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';
import { Cluster } from './models/cluster.model.js';
import {
  AuditEventConnection,
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

/** A cluster's activity: what was dispatched, what its approver decided, who changed it. */
@Resolver(() => Cluster)
export class ClusterActivityResolver {
  constructor(private readonly prisma: PrismaService) {}

  @ResolveField(() => ReconcileRunConnection)
  async reconcileRuns(
    @Parent() cluster: Cluster,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<Page<ReconcileRun>> {
    const { size } = pageWindow({ first });
    const before = afterKey(after);
    const where = {
      clusterId: cluster.uid,
      ...(before !== undefined ? { generation: { lt: Number(before) } } : {}),
    };
    const [rows, total] = await Promise.all([
      this.prisma.client.reconcileRun.findMany({
        where,
        orderBy: { generation: 'desc' },
        take: size + 1,
      }),
      this.prisma.client.reconcileRun.count({ where: { clusterId: cluster.uid } }),
    ]);
    return page(
      rows.map((r) => ({
        key: r.generation,
        generation: r.generation,
        state: r.state as ReconcileRunState,
        error: r.error,
        createdAt: r.createdAt,
        dispatchedAt: r.dispatchedAt,
        finishedAt: r.finishedAt,
      })),
      size,
      total,
      before !== undefined,
    );
  }

  @ResolveField(() => CsrDecisionConnection)
  async csrDecisions(
    @Parent() cluster: Cluster,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<Page<CsrDecision>> {
    const { size } = pageWindow({ first });
    const before = afterKey(after);
    const where = {
      clusterId: cluster.uid,
      ...(before !== undefined ? { id: { lt: before } } : {}),
    };
    const [rows, total] = await Promise.all([
      this.prisma.client.csrDecision.findMany({ where, orderBy: { id: 'desc' }, take: size + 1 }),
      this.prisma.client.csrDecision.count({ where: { clusterId: cluster.uid } }),
    ]);
    return page(
      rows.map(({ id, clusterId: _c, ...d }) => ({ key: id, ...d })),
      size,
      total,
      before !== undefined,
    );
  }

  @ResolveField(() => AuditEventConnection)
  async auditEvents(
    @Parent() cluster: Cluster,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<Page<AuditEvent>> {
    const { size } = pageWindow({ first });
    const before = afterKey(after);
    const where = {
      clusterId: cluster.uid,
      ...(before !== undefined ? { id: { lt: before } } : {}),
    };
    const [rows, total] = await Promise.all([
      this.prisma.client.auditEvent.findMany({ where, orderBy: { id: 'desc' }, take: size + 1 }),
      this.prisma.client.auditEvent.count({ where: { clusterId: cluster.uid } }),
    ]);
    return page(
      rows.map((e) => ({
        key: e.id,
        at: e.at,
        actor: e.actor,
        action: e.action,
        before: e.before,
        after: e.after,
      })),
      size,
      total,
      before !== undefined,
    );
  }
}
