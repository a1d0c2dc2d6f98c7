import type { Prisma } from '@fleet/database';

/** The part of a cluster an audit event shows before and after a change. */
export async function clusterSnapshot(tx: Prisma.TransactionClient, clusterId: string): Promise<Prisma.InputJsonValue | null> {
  const row = await tx.cluster.findUnique({
    where: { id: clusterId },
    include: { desired: true, nodePools: { orderBy: { name: 'asc' } } },
  });
  if (!row?.desired) return null;
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
    nodePools: row.nodePools.map((p) => ({ name: p.name, spec: p.spec as Prisma.InputJsonValue })),
  };
}
