import { Prisma } from '@fleet/database';
import type { Principal } from '../auth/principal.js';
import { labelSelectorSql } from '../clusters/cluster-query.js';
import { RolloutState } from './models/rollout.model.js';

/** What the rollout services share: the transaction type, active states, scope in SQL. */
export type Tx = Prisma.TransactionClient;

export type Labels = Record<string, string>;

/** Rollouts that still hold their clusters: a second rollout may not take them meanwhile. */
export const ACTIVE: RolloutState[] = [
  RolloutState.RUNNING,
  RolloutState.WAITING_APPROVAL,
  RolloutState.PAUSED,
  RolloutState.FAILED,
];

export const scopeSql = (principal: Principal): Prisma.Sql =>
  principal.scope?.length
    ? Prisma.join(labelSelectorSql(principal.scope), ' AND ')
    : Prisma.sql`TRUE`;
