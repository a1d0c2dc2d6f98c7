import { matchesLabelSelector, parseLabelSelector } from '@fleet/contracts';
import type { Prisma } from '@fleet/database';
import {
  ProfileSpec,
  canonicalJson,
  parseStoredSpec,
  composeEffectiveState,
  type BoundProfile,
  type EffectiveState,
} from './profiles.js';

type Tx = Prisma.TransactionClient;

/** A dropped stored field, as storedSpec reports it. */
export interface StoredSpecWarning {
  /** What holds the spec, e.g. `profile prod r3`. */
  spec: string;
  /** The field dropped ('' for the whole spec). */
  field: string;
  reason: string;
}

/**
 * Where storedSpec's warnings go: one plain line on stderr until a process injects its own sink
 * (the worker: its pino logger). Never stdout, and no logger of the library's own: a command
 * line tool importing this library writes its output (kfleet export's YAML) to stdout, where a
 * log line would corrupt it.
 */
let warnSink = (w: StoredSpecWarning): void => {
  process.stderr.write(`warning: stored ${w.spec}: ${w.field || '(whole)'}: ${w.reason}\n`);
};

/** Routes storedSpec's warnings to `sink` (a process's logger). */
export function onStoredSpecWarning(sink: (warning: StoredSpecWarning) => void): void {
  warnSink = sink;
}

/** A stored spec, leniently: what the schema no longer accepts is dropped with a warning. */
export const storedSpec = (raw: unknown, what: string): ProfileSpec =>
  parseStoredSpec(raw, (field, reason) => warnSink({ spec: what, field, reason }));

/**
 * The lock between profile writes and membership syncs, first among the locks either takes on
 * profiles (a cluster's desired-state lock may come before it, never after: profile writes take
 * no cluster lock, so the order is one-way). Profile writes take it exclusive (their conflict
 * checks read every profile); a membership sync (registration, relabelling) takes it shared, so
 * syncs of different clusters still run side by side, and a profile created while a cluster
 * registers either sees that cluster or is seen by it.
 */
export async function lockProfiles(
  tx: Tx,
  mode: 'exclusive' | 'shared' = 'exclusive',
): Promise<void> {
  if (mode === 'shared')
    await tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(hashtext('karpenter-fleet:profiles'))`;
  else await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('karpenter-fleet:profiles'))`;
}

/**
 * The database side of profiles: bindings (which revision of which profile a cluster is on), the
 * cluster's overrides, and the effective state materialized into DesiredState's columns and the
 * NodePool rows — so orders, resync, filters and plans keep reading one place (docs/PROFILES.md).
 * Every function runs in the caller's transaction, which holds the cluster's desired-state lock.
 */

/** The profile revisions a cluster is bound to (one query: the revision each binding names). */
export async function boundProfiles(tx: Tx, clusterId: string): Promise<BoundProfile[]> {
  const rows = await tx.$queryRaw<
    { name: string; priority: number; revision: number; spec: unknown }[]
  >`
    SELECT p.name, r.priority, r.revision, r.spec
      FROM "ClusterProfile" b
      JOIN "Profile" p ON p.id = b."profileId"
      JOIN "ProfileRevision" r ON r."profileId" = b."profileId" AND r.revision = b.revision
     WHERE b."clusterId" = ${clusterId}::uuid`;
  return rows.map((r) => ({ ...r, spec: storedSpec(r.spec, `profile ${r.name} r${r.revision}`) }));
}

/** The cluster's own overrides as stored. */
export async function clusterOverrides(tx: Tx, clusterId: string): Promise<ProfileSpec> {
  const row = await tx.desiredState.findUniqueOrThrow({
    where: { clusterId },
    select: { overrides: true },
  });
  return storedSpec(row.overrides, `overrides of cluster ${clusterId}`);
}

/**
 * The effective state from bindings and overrides (the stored ones, or `overrides` about to be
 * stored), as it would be materialized now.
 */
export async function effectiveStateOf(
  tx: Tx,
  clusterId: string,
  overrides?: ProfileSpec,
): Promise<EffectiveState> {
  const row = await tx.desiredState.findUniqueOrThrow({
    where: { clusterId },
    select: {
      overrides: true,
      cluster: { select: { platform: true, topology: true, managementCluster: true } },
    },
  });
  return composeEffectiveState(
    await boundProfiles(tx, clusterId),
    overrides ?? storedSpec(row.overrides, `overrides of cluster ${clusterId}`),
    row.cluster,
  );
}

/**
 * Writes the effective state into DesiredState (settings, sources, and `overrides` when given)
 * and the NodePool rows (created, replaced, deleted to match, untouched when equal). The caller
 * bumps the generation when it changed. Kept to a handful of queries: it runs inside every
 * desired-state change's transaction.
 */
export async function materializeEffectiveState(
  tx: Tx,
  clusterId: string,
  overrides?: ProfileSpec,
): Promise<EffectiveState> {
  const state = await effectiveStateOf(tx, clusterId, overrides);
  await tx.desiredState.update({
    where: { clusterId },
    data: effectiveColumns(state, overrides),
  });
  const { gone, put } = nodePoolWrites(
    await tx.nodePool.findMany({ where: { clusterId }, select: { name: true, spec: true } }),
    state.nodePools,
  );
  if (gone.length) await tx.nodePool.deleteMany({ where: { clusterId, name: { in: gone } } });
  for (const pool of put) {
    const spec = pool.spec as Prisma.InputJsonObject;
    await tx.nodePool.upsert({
      where: { clusterId_name: { clusterId, name: pool.name } },
      create: { clusterId, name: pool.name, spec },
      update: { spec },
    });
  }
  return state;
}

/**
 * The DesiredState columns an effective state is materialized into (settings, sources, and
 * `overrides` when given): what materializeEffectiveState and commitLockedChange both write.
 */
export function effectiveColumns(
  state: EffectiveState,
  overrides?: ProfileSpec,
): Record<string, unknown> {
  return { ...state.settings, sources: state.sources, ...(overrides ? { overrides } : {}) };
}

/**
 * The NodePool rows to delete (`gone`) and to create or replace (`put`) so the stored ones
 * match `desired`; a pool whose spec is equal (canonically) is left untouched.
 */
export function nodePoolWrites(
  existing: readonly { name: string; spec: unknown }[],
  desired: readonly { name: string; spec: Record<string, unknown> }[],
): { gone: string[]; put: { name: string; spec: Record<string, unknown> }[] } {
  const stored = new Map(existing.map((p) => [p.name, canonicalJson(p.spec)]));
  const names = new Set(desired.map((p) => p.name));
  return {
    gone: [...stored.keys()].filter((name) => !names.has(name)),
    put: desired.filter((p) => stored.get(p.name) !== canonicalJson(p.spec)),
  };
}

/** Replaces the cluster's overrides and materializes the result. */
export async function writeOverrides(
  tx: Tx,
  clusterId: string,
  overrides: ProfileSpec,
): Promise<EffectiveState> {
  return materializeEffectiveState(tx, clusterId, overrides);
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
  // Under the profile writes' lock: else a profile created concurrently would miss this cluster
  // (not yet visible to its rollout) while this sync misses the profile (not yet committed).
  await lockProfiles(tx, 'shared');
  const profiles = await tx.profile.findMany({
    select: { id: true, selector: true, revision: true, deletedAt: true },
  });
  // No profile, no binding (they cascade): registrations of a fleet without profiles stay as short.
  if (!profiles.length) return false;
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
  // One after another: a transaction is one connection, and pg refuses overlapping queries on a
  // client (deprecated now, an error in pg 9).
  const cluster = await tx.cluster.findUniqueOrThrow({
    where: { id: clusterId },
    select: { labels: true },
  });
  const profile = await tx.profile.findUnique({
    where: { id: profileId },
    select: { deletedAt: true },
  });
  const rev = await tx.profileRevision.findUnique({
    where: { profileId_revision: { profileId, revision } },
  });
  const bound = await tx.clusterProfile.findUnique({
    where: { clusterId_profileId: { clusterId, profileId } },
  });
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
