import { Prisma } from '@fleet/database';
import { createHash } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { notFoundError } from '../common/errors.js';
import { toGlobalId } from '../common/global-id.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import { inScopeSql } from './cluster-query.js';
import { lockDesiredState } from '@fleet/desired-state';

/** What the cluster services share: the row shape they load, scope locking, change events. */
export type Tx = Prisma.TransactionClient;

export const withEverything = {
  desired: true,
  status: true,
  nodePools: { orderBy: { name: 'asc' } },
} satisfies Prisma.ClusterInclude;

export const hashToken = (token: string): string =>
  createHash('sha256').update(token).digest('hex');

/** Row lock on the desired state (mutations of one cluster serialize); scope enforced in SQL. */
export async function lockInScope(tx: Tx, principal: Principal, uid: string): Promise<number> {
  const visible = await tx.$queryRaw<{ id: string }[]>(inScopeSql(uid, principal));
  const generation = visible.length ? await lockDesiredState(tx, uid) : undefined;
  if (generation === undefined) throw notFoundError('cluster', toGlobalId('Cluster', uid));
  return generation;
}

/** Subscribers learn of the change; losing the event costs freshness, never state. */
export async function clusterChanged(events: FleetEventsService, clusterId: string): Promise<void> {
  await events.publish({ type: 'cluster-changed', clusterId }).catch(() => undefined);
}
