import { matchesLabelSelector, parseLabelSelector } from '@fleet/contracts';
import type { Prisma } from '@fleet/database';
import {
  ProfileSpec,
  composeEffectiveState,
  type BoundProfile,
  type EffectiveState,
} from './profiles.js';

type Tx = Prisma.TransactionClient;

/**
 * The database side of profiles: bindings (which revision of which profile a cluster is on), the
 * cluster's overrides, and the effective state materialized into DesiredState's columns and the
 * NodePool rows — so orders, resync, filters and plans keep reading one place (docs/PROFILES.md).
 * Every function runs in the caller's transaction, which holds the cluster's desired-state lock.
 */

/** The profile revisions a cluster is bound to. */
export async function boundProfiles(tx: Tx, clusterId: string): Promise<BoundProfile[]> {
  const rows = await tx.clusterProfile.findMany({
    where: { clusterId },
    include: { profile: { select: { name: true, revisions: true } } },
  });
  return rows.flatMap((b) => {
    const rev = b.profile.revisions.find((r) => r.revision === b.revision);
    if (!rev) return [];
    return [
      {
        name: b.profile.name,
        priority: rev.priority,
        revision: rev.revision,
        spec: ProfileSpec.parse(rev.spec),
      },
    ];
  });
}

/** The cluster's own overrides as stored. */
export async function clusterOverrides(tx: Tx, clusterId: string): Promise<ProfileSpec> {
  const row = await tx.desiredState.findUniqueOrThrow({
    where: { clusterId },
    select: { overrides: true },
  });
  return ProfileSpec.parse(row.overrides ?? {});
}

/** The effective state from bindings and overrides, as it would be materialized now. */
export async function effectiveStateOf(
  tx: Tx,
  clusterId: string,
  overrides?: ProfileSpec,
): Promise<EffectiveState> {
  const cluster = await tx.cluster.findUniqueOrThrow({
    where: { id: clusterId },
    select: { platform: true, topology: true, managementCluster: true },
  });
  return composeEffectiveState(
    await boundProfiles(tx, clusterId),
    overrides ?? (await clusterOverrides(tx, clusterId)),
    cluster,
  );
}

/**
 * Writes the effective state into DesiredState (settings, sources) and the NodePool rows
 * (created, replaced, deleted to match). The caller bumps the generation when it changed.
 */
export async function materializeEffectiveState(
  tx: Tx,
  clusterId: string,
): Promise<EffectiveState> {
  const state = await effectiveStateOf(tx, clusterId);
  const { featureGates, nodeClassOverrides, ...rest } = state.settings;
  await tx.desiredState.update({
    where: { clusterId },
    data: {
      ...rest,
      featureGates: featureGates,
      nodeClassOverrides: nodeClassOverrides as Prisma.InputJsonObject,
      sources: state.sources,
    },
  });
  const names = state.nodePools.map((p) => p.name);
  await tx.nodePool.deleteMany({ where: { clusterId, name: { notIn: names } } });
  const existing = new Map(
    (await tx.nodePool.findMany({ where: { clusterId }, select: { name: true, spec: true } })).map(
      (p) => [p.name, JSON.stringify(p.spec)],
    ),
  );
  for (const pool of state.nodePools) {
    const spec = pool.spec as Prisma.InputJsonObject;
    if (existing.get(pool.name) === JSON.stringify(pool.spec)) continue;
    await tx.nodePool.upsert({
      where: { clusterId_name: { clusterId, name: pool.name } },
      create: { clusterId, name: pool.name, spec },
      update: { spec },
    });
  }
  return state;
}

/** Replaces the cluster's overrides and materializes the result. */
export async function writeOverrides(
  tx: Tx,
  clusterId: string,
  overrides: ProfileSpec,
): Promise<EffectiveState> {
  await tx.desiredState.update({
    where: { clusterId },
    data: { overrides: overrides as Prisma.InputJsonObject },
  });
  return materializeEffectiveState(tx, clusterId);
}

/**
 * Membership follows labels: binds the cluster to every live profile its labels now match that it
 * is not bound to yet (at the profile's current revision), unbinds it from every profile it no
 * longer matches (a deleted profile matches nothing); a profile it stays in keeps the revision it
 * is on (a running rollout of that profile moves it). Returns whether any binding changed.
 */
export async function syncMemberships(
  tx: Tx,
  clusterId: string,
  labels: Record<string, string>,
): Promise<boolean> {
  const profiles = await tx.profile.findMany({
    select: { id: true, selector: true, revision: true, deletedAt: true },
  });
  const bound = new Map(
    (await tx.clusterProfile.findMany({ where: { clusterId } })).map((b) => [b.profileId, b]),
  );
  let changed = false;
  for (const p of profiles) {
    const matches = !p.deletedAt && matchesLabelSelector(parseLabelSelector(p.selector), labels);
    if (matches && !bound.has(p.id)) {
      await tx.clusterProfile.create({
        data: { clusterId, profileId: p.id, revision: p.revision },
      });
      changed = true;
    } else if (!matches && bound.has(p.id)) {
      await tx.clusterProfile.delete({
        where: { clusterId_profileId: { clusterId, profileId: p.id } },
      });
      changed = true;
    }
  }
  return changed;
}

/**
 * A profile rollout's step on one cluster: bound at `revision` when the profile is live and that
 * revision's selector matches the cluster's labels now, unbound otherwise. Returns whether the
 * binding changed.
 */
export async function syncProfileBinding(
  tx: Tx,
  clusterId: string,
  profileId: string,
  revision: number,
): Promise<boolean> {
  const [cluster, profile, rev, bound] = await Promise.all([
    tx.cluster.findUniqueOrThrow({ where: { id: clusterId }, select: { labels: true } }),
    tx.profile.findUnique({ where: { id: profileId }, select: { deletedAt: true } }),
    tx.profileRevision.findUnique({ where: { profileId_revision: { profileId, revision } } }),
    tx.clusterProfile.findUnique({ where: { clusterId_profileId: { clusterId, profileId } } }),
  ]);
  const labels = (cluster.labels ?? {}) as Record<string, string>;
  const matches =
    !!profile &&
    !profile.deletedAt &&
    !!rev &&
    matchesLabelSelector(parseLabelSelector(rev.selector), labels);
  const key = { clusterId_profileId: { clusterId, profileId } };
  if (matches) {
    if (bound?.revision === revision) return false;
    await tx.clusterProfile.upsert({
      where: key,
      create: { clusterId, profileId, revision },
      update: { revision },
    });
    return true;
  }
  if (!bound) return false;
  await tx.clusterProfile.delete({ where: key });
  return true;
}
