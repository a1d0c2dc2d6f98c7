import { Prisma } from '@fleet/database';
import { createHash } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { notFoundError } from '../common/errors.js';
import { toGlobalId } from '../common/global-id.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import type { ClusterView } from './cluster.mapper.js';
import { fromPageRow, inScopeSql, pageSql, type PageRow } from './cluster-query.js';
import { ClusterOrderField, OrderDirection } from './dto/cluster.inputs.js';

/** What the cluster services share: the row shape they load, scope locking, change events. */
export type Tx = Prisma.TransactionClient;

export const withEverything = {
  desired: true,
  status: true,
  nodePools: { orderBy: { name: 'asc' } },
} satisfies Prisma.ClusterInclude;

export const hashToken = (token: string): string =>
  createHash('sha256').update(token).digest('hex');

/**
 * Row lock on the desired state (mutations of one cluster serialize), scope enforced in SQL, in
 * one statement. Returns the generation at the lock.
 */
export async function lockInScope(tx: Tx, principal: Principal, uid: string): Promise<number> {
  const [row] = await tx.$queryRaw<{ generation: number }[]>`
    SELECT d.generation FROM "DesiredState" d
     WHERE d."clusterId" = ${uid}::uuid AND d."clusterId" IN (${inScopeSql(uid, principal)})
       FOR UPDATE`;
  if (!row) throw notFoundError('cluster', toGlobalId('Cluster', uid));
  return row.generation;
}

/**
 * One cluster as the GraphQL answer shows it (cluster, desired state, status, NodePools), in one
 * statement: the list's page query for the one id, where withEverything costs four.
 */
export async function readClusterView(tx: Tx, uid: string): Promise<ClusterView> {
  const [row] = await tx.$queryRaw<PageRow[]>(
    pageSql({
      where: Prisma.sql`c.id = ${uid}::uuid`,
      order: { field: ClusterOrderField.NAME, direction: OrderDirection.ASC },
      size: 1,
      backward: false,
    }),
  );
  if (!row) throw notFoundError('cluster', toGlobalId('Cluster', uid));
  return fromPageRow(row);
}

/** Subscribers learn of the change; losing the event costs freshness, never state. */
export async function clusterChanged(events: FleetEventsService, clusterId: string): Promise<void> {
  await events.publish({ type: 'cluster-changed', clusterId }).catch(() => undefined);
}
