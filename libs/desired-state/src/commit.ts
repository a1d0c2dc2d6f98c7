import type { Prisma } from '@fleet/database';

type Tx = Prisma.TransactionClient;

/** Who a change is recorded against: a token, or a rollout acting for the token that started it. */
export interface Actor {
  name: string;
  tokenId: string | null;
}

/** The part of a cluster an audit event shows before and after a change. */
export async function clusterSnapshot(
  tx: Tx,
  clusterId: string,
): Promise<Prisma.InputJsonValue | null> {
  const row = await tx.cluster.findUnique({
    where: { id: clusterId },
    include: { desired: true, nodePools: { orderBy: { name: 'asc' } } },
  });
  return row?.desired ? snapshotOf({ ...row, desired: row.desired }) : null;
}

/** What a snapshot is made of: the cluster's name and labels, its desired state, its NodePools. */
export interface SnapshotSource {
  name: string;
  labels: unknown;
  desired: {
    generation: number;
    enabled: boolean;
    paused: boolean;
    clusterAutoscalerMode: string;
    logLevel: string;
    featureGates: unknown;
    nodeClassOverrides: unknown;
    driftPolicy: string;
  };
  nodePools: readonly { name: string; spec: unknown }[];
}

/** clusterSnapshot's shape, from rows already read (NodePools in name order). */
export function snapshotOf(row: SnapshotSource): Prisma.InputJsonObject {
  const d = row.desired;
  return {
    name: row.name,
    labels: row.labels as Prisma.InputJsonValue,
    generation: d.generation,
    enabled: d.enabled,
    paused: d.paused,
    clusterAutoscalerMode: d.clusterAutoscalerMode,
    logLevel: d.logLevel,
    featureGates: d.featureGates as Prisma.InputJsonValue,
    nodeClassOverrides: d.nodeClassOverrides as Prisma.InputJsonValue,
    driftPolicy: d.driftPolicy,
    nodePools: row.nodePools.map((p) => ({ name: p.name, spec: p.spec as Prisma.InputJsonValue })),
  };
}

/** Writes the audit trail inside the caller's transaction: no change without its record. */
export async function recordAudit(
  tx: Tx,
  actor: Actor,
  action: string,
  clusterId: string | null,
  before: unknown,
  after: unknown,
): Promise<void> {
  await tx.auditEvent.create({
    data: {
      actor: actor.name,
      actorTokenId: actor.tokenId,
      action,
      clusterId,
      before: before ?? undefined,
      after: after ?? undefined,
    },
  });
}

/**
 * Row lock on a cluster's desired state, so changes to one cluster serialize. Returns the current
 * generation, or undefined when the cluster does not exist.
 */
export async function lockDesiredState(tx: Tx, clusterId: string): Promise<number | undefined> {
  const rows = await tx.$queryRaw<{ generation: number }[]>`
    SELECT generation FROM "DesiredState" WHERE "clusterId" = ${clusterId}::uuid FOR UPDATE`;
  return rows[0]?.generation;
}

/**
 * The one path by which desired state changes, for the API and the rollout driver alike: the
 * change, the generation bump, the reconcile run and the audit event, all in the caller's
 * transaction (which must hold lockDesiredState). The caller asks for the reconcile after commit;
 * if that fails, the resync finds `generation > observedGeneration` and dispatches anyway.
 * Returns the new generation. commitLockedChange (locked-change.ts) writes the same rows in one
 * statement where the change is one DesiredStateChange: keep the two in step.
 */
export async function commitDesiredStateChange(
  tx: Tx,
  args: { clusterId: string; actor: Actor; action: string; change: (tx: Tx) => Promise<void> },
): Promise<number> {
  const { clusterId, actor, action } = args;
  const before = await clusterSnapshot(tx, clusterId);
  await args.change(tx);
  const { generation } = await tx.desiredState.update({
    where: { clusterId },
    data: { generation: { increment: 1 } },
  });
  await tx.reconcileRun.create({ data: { clusterId, generation } });
  await recordAudit(tx, actor, action, clusterId, before, await clusterSnapshot(tx, clusterId));
  return generation;
}
