import { Injectable } from '@nestjs/common';
import { Prisma, type PrismaClient } from '@fleet/database';
import type { Principal } from '../auth/principal.js';
import { decodeCursor, encodeCursor, pageWindow } from '../common/connection.js';
import { notFoundError, userInputError } from '../common/errors.js';
import { isUuid, toGlobalId } from '../common/global-id.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Rollout, RolloutConnection, RolloutState } from './models/rollout.model.js';
import { scopeSql, type Tx } from './rollout-access.js';
import { toRollout, type RolloutRow } from './rollout.mapper.js';

/** Reads: one rollout, pages of rollouts, and whether a caller may see one (scoped in SQL). */
@Injectable()
export class RolloutQueries {
  private readonly db: PrismaClient;

  constructor(prisma: PrismaService) {
    this.db = prisma.client;
  }

  async get(principal: Principal, uid: string): Promise<Rollout> {
    if (!(await this.visible(this.db, principal, uid)))
      throw notFoundError('rollout', toGlobalId('Rollout', uid));
    const row = await this.db.rollout.findUnique({
      where: { id: uid },
      include: {
        waves: { orderBy: { index: 'asc' } },
        clusters: { orderBy: [{ wave: 'asc' }, { clusterName: 'asc' }] },
      },
    });
    if (!row) throw notFoundError('rollout', toGlobalId('Rollout', uid));
    return toRollout(await this.withinScope(principal, row));
  }

  /**
   * The rollout as the reader may see it: only the clusters within its scope (and the counts of
   * those), so a rollout visible through one cluster does not reveal the others.
   */
  private async withinScope<R extends RolloutRow>(principal: Principal, row: R): Promise<R> {
    const rows = await this.withinScopeAll(principal, [row]);
    return rows[0]!;
  }

  private async withinScopeAll<R extends RolloutRow>(
    principal: Principal,
    rows: R[],
  ): Promise<R[]> {
    if (!principal.scope) return rows;
    const ids = [...new Set(rows.flatMap((r) => r.clusters.map((c) => c.clusterId)))];
    const visible = ids.length
      ? await this.db.$queryRaw<{ id: string }[]>`
          SELECT c.id::text AS id FROM "Cluster" c WHERE c.id = ANY(${ids}::uuid[]) AND ${scopeSql(principal)}`
      : [];
    const mine = new Set(visible.map((v) => v.id));
    return rows.map((r) => ({ ...r, clusters: r.clusters.filter((c) => mine.has(c.clusterId)) }));
  }

  /** Newest first; scoped tokens see rollouts that touch at least one of their clusters. */
  async list(
    principal: Principal,
    page: { first?: number | null; after?: string | null },
    state: RolloutState | null | undefined,
  ): Promise<RolloutConnection> {
    const { size } = pageWindow(page);
    const conds: Prisma.Sql[] = [Prisma.sql`TRUE`];
    if (state) conds.push(Prisma.sql`r.state = ${state}::"RolloutState"`);
    if (principal.scope?.length) {
      conds.push(Prisma.sql`EXISTS (SELECT 1 FROM "RolloutCluster" rc JOIN "Cluster" c ON c.id = rc."clusterId"
                                     WHERE rc."rolloutId" = r.id AND ${scopeSql(principal)})`);
    }
    const where = Prisma.join(conds, ' AND ');
    let after = Prisma.empty;
    if (page.after) {
      const [at, id] = decodeCursor(page.after, 'after');
      if (typeof at !== 'string' || !isUuid(id) || Number.isNaN(Date.parse(at))) {
        throw userInputError('after', 'is not a cursor returned by this API');
      }
      after = Prisma.sql`AND (r."createdAt", r.id) < (${new Date(at)}, ${id}::uuid)`;
    }
    const [ids, [{ count }]] = await Promise.all([
      this.db.$queryRaw<{ id: string; createdAt: Date }[]>`
        SELECT r.id, r."createdAt" FROM "Rollout" r WHERE ${where} ${after}
         ORDER BY r."createdAt" DESC, r.id DESC LIMIT ${size + 1}`,
      this.db.$queryRaw<
        [{ count: number }]
      >`SELECT count(*)::int AS count FROM "Rollout" r WHERE ${where}`,
    ]);
    const pageIds = ids.slice(0, size);
    const rows = await this.withinScopeAll(
      principal,
      await this.db.rollout.findMany({
        where: { id: { in: pageIds.map((r) => r.id) } },
        include: {
          waves: { orderBy: { index: 'asc' } },
          clusters: { orderBy: [{ wave: 'asc' }, { clusterName: 'asc' }] },
        },
      }),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const edges = pageIds.flatMap((r) => {
      const row = byId.get(r.id);
      return row
        ? [{ cursor: encodeCursor([r.createdAt.toISOString(), r.id]), node: toRollout(row) }]
        : [];
    });
    return {
      edges,
      nodes: edges.map((e) => e.node),
      pageInfo: {
        hasNextPage: ids.length > size,
        hasPreviousPage: Boolean(page.after),
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
      totalCount: count,
    };
  }

  async visible(db: Tx | PrismaClient, principal: Principal, uid: string): Promise<boolean> {
    const rows = principal.scope?.length
      ? await db.$queryRaw<{ id: string }[]>`
          SELECT r.id FROM "Rollout" r WHERE r.id = ${uid}::uuid AND EXISTS (
            SELECT 1 FROM "RolloutCluster" rc JOIN "Cluster" c ON c.id = rc."clusterId"
             WHERE rc."rolloutId" = r.id AND ${scopeSql(principal)})`
      : await db.$queryRaw<
          { id: string }[]
        >`SELECT r.id FROM "Rollout" r WHERE r.id = ${uid}::uuid`;
    return rows.length > 0;
  }
}
