import type { Platform, Topology } from '@fleet/contracts';
import type { Prisma } from '@fleet/database';
import { randomUUID } from 'node:crypto';
import { splitDesiredStateChange, type ApplyOutcome, type DesiredStateChange } from './change.js';
import { snapshotOf, type Actor, type SnapshotSource } from './commit.js';
import { effectiveColumns, nodePoolWrites, storedSpec } from './profile-store.js';
import { composeEffectiveState, type BoundProfile } from './profiles.js';

type Tx = Prisma.TransactionClient;

/**
 * Everything a desired-state change of one cluster reads — the checks (platform, topology), the
 * audit's before snapshot, the effective state's inputs (stored overrides, bound profiles) — as
 * one statement (issue 48, target 3: setKarpenter was 22 statements). Read after the caller took
 * the desired-state lock, in a statement of its own: a read in the locking statement would use
 * the snapshot taken before it waited for the lock, and miss what the holder had just committed.
 */
export interface ChangeFacts extends SnapshotSource {
  platform: Platform;
  topology: Topology;
  managementCluster: string | null;
  /** DesiredState.overrides as stored (parsed leniently where used). */
  overrides: unknown;
  profiles: BoundProfile[];
}

/** The read's one row: the desired columns flat, NodePools and profiles as JSON. */
type FactsRow = Pick<
  ChangeFacts,
  'name' | 'labels' | 'platform' | 'topology' | 'managementCluster' | 'overrides'
> &
  SnapshotSource['desired'] & {
    nodePools: { name: string; spec: unknown }[];
    profiles: { name: string; priority: number; revision: number; spec: unknown }[];
  };

export async function readChangeFacts(tx: Tx, clusterId: string): Promise<ChangeFacts> {
  const [row] = await tx.$queryRaw<FactsRow[]>`
    SELECT c.name, c.labels, c.platform::text AS platform, c.topology::text AS topology, c."managementCluster",
           d.generation, d.enabled, d.paused, d."clusterAutoscalerMode"::text AS "clusterAutoscalerMode",
           d."logLevel"::text AS "logLevel", d."featureGates", d."nodeClassOverrides",
           d."driftPolicy"::text AS "driftPolicy", d.overrides,
           COALESCE((SELECT jsonb_agg(jsonb_build_object('name', p.name, 'spec', p.spec) ORDER BY p.name)
                       FROM "NodePool" p WHERE p."clusterId" = c.id), '[]'::jsonb) AS "nodePools",
           COALESCE((SELECT jsonb_agg(jsonb_build_object('name', pr.name, 'priority', r.priority,
                                                         'revision', r.revision, 'spec', r.spec))
                       FROM "ClusterProfile" b
                       JOIN "Profile" pr ON pr.id = b."profileId"
                       JOIN "ProfileRevision" r ON r."profileId" = b."profileId" AND r.revision = b.revision
                      WHERE b."clusterId" = c.id), '[]'::jsonb) AS profiles
      FROM "Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id
     WHERE c.id = ${clusterId}::uuid`;
  if (!row) throw new Error(`cluster ${clusterId} has no desired state`);
  const { generation, enabled, paused, clusterAutoscalerMode, logLevel, driftPolicy } = row;
  return {
    name: row.name,
    labels: row.labels,
    platform: row.platform,
    topology: row.topology,
    managementCluster: row.managementCluster,
    desired: {
      generation,
      enabled,
      paused,
      clusterAutoscalerMode,
      logLevel,
      featureGates: row.featureGates,
      nodeClassOverrides: row.nodeClassOverrides,
      driftPolicy,
    },
    nodePools: row.nodePools,
    overrides: row.overrides,
    profiles: row.profiles.map((p) => ({
      ...p,
      spec: storedSpec(p.spec, `profile ${p.name} r${p.revision}`),
    })),
  };
}

/**
 * The DesiredState columns a change may write, as the write statement lists them. A column
 * added to DesiredStateChange or the effective settings must be added here (and to the SET list
 * of commitLockedChange's statement): the guard below refuses the change until it is.
 */
const WRITABLE_COLUMNS = new Set([
  'enabled',
  'paused',
  'clusterAutoscalerMode',
  'logLevel',
  'featureGates',
  'nodeClassOverrides',
  'karpenterVersion',
  'operandImage',
  'interruptionQueue',
  'webIdentityRoleArn',
  'allowedInstanceTypes',
  'driftPolicy',
  'overrides',
  'sources',
]);

/**
 * commitDesiredStateChange with applyDesiredStateChange, for a caller that holds the cluster's
 * desired-state lock and read `facts` after taking it: the same rows written (own columns, the
 * re-materialized effective state when a profile-able field changed, the NodePools, the
 * generation bump, the reconcile run, the audit event with its before and after snapshots), in
 * one statement instead of ten to twenty. The effective state is composed in memory from the
 * facts, as materializeEffectiveState composes it from the same rows. Nothing is written when
 * the outcome is not 'applied'. Returns the new generation.
 */
export async function commitLockedChange(
  tx: Tx,
  args: {
    clusterId: string;
    facts: ChangeFacts;
    change: DesiredStateChange;
    actor: Actor;
    action: string;
  },
): Promise<{ outcome: ApplyOutcome; generation: number }> {
  const { clusterId, facts, change, actor, action } = args;
  const split = splitDesiredStateChange(
    storedSpec(facts.overrides, `overrides of cluster ${clusterId}`),
    change,
  );
  if (split.outcome !== 'applied')
    return { outcome: split.outcome, generation: facts.desired.generation };
  let set = split.own;
  let pools: { gone: string[]; put: { name: string; spec: unknown }[] } = { gone: [], put: [] };
  let after: readonly { name: string; spec: unknown }[] = facts.nodePools;
  if (split.overrides) {
    const state = composeEffectiveState(facts.profiles, split.overrides, facts);
    set = { ...set, ...effectiveColumns(state, split.overrides) };
    pools = nodePoolWrites(facts.nodePools, state.nodePools);
    after = state.nodePools;
  }
  const unknown = Object.keys(set).filter((k) => !WRITABLE_COLUMNS.has(k));
  if (unknown.length) throw new Error(`DesiredState columns not written: ${unknown.join(', ')}`);
  const before = snapshotOf(facts);
  // generation and nodePools are filled in by the statement: the bumped row's, and the
  // NodePools in the database's order of names, as clusterSnapshot reads them.
  const { nodePools: _pools, ...afterRest } = snapshotOf({
    ...facts,
    desired: { ...facts.desired, ...(set as Partial<SnapshotSource['desired']>) },
  });
  const now = new Date();
  // Every part in one statement: data-modifying CTEs all run, each exactly once, whether or not
  // the final SELECT reads them; the empty NodePool sets make their parts no-ops.
  // jsonb_populate_record(d, set) is the row with the columns `set` names replaced (text into
  // enums, JSON arrays into text[]) and every other column as it was.
  const [row] = await tx.$queryRaw<{ generation: number }[]>`
    WITH upd AS (
      UPDATE "DesiredState" d
         SET (enabled, paused, "clusterAutoscalerMode", "logLevel", "featureGates", "nodeClassOverrides",
              "karpenterVersion", "operandImage", "interruptionQueue", "webIdentityRoleArn",
              "allowedInstanceTypes", "driftPolicy", overrides, sources)
           = (SELECT n.enabled, n.paused, n."clusterAutoscalerMode", n."logLevel", n."featureGates",
                     n."nodeClassOverrides", n."karpenterVersion", n."operandImage", n."interruptionQueue",
                     n."webIdentityRoleArn", n."allowedInstanceTypes", n."driftPolicy", n.overrides, n.sources
                FROM jsonb_populate_record(d, ${JSON.stringify(set)}::jsonb) n),
             generation = d.generation + 1,
             "updatedAt" = ${now}
       WHERE d."clusterId" = ${clusterId}::uuid
      RETURNING d.generation
    ), gone AS (
      DELETE FROM "NodePool" p
       WHERE p."clusterId" = ${clusterId}::uuid
         AND p.name IN (SELECT jsonb_array_elements_text(${JSON.stringify(pools.gone)}::jsonb))
    ), put AS (
      INSERT INTO "NodePool" (id, "clusterId", name, spec, "createdAt", "updatedAt")
      SELECT gen_random_uuid(), ${clusterId}::uuid, x.name, x.spec, ${now}, ${now}
        FROM jsonb_to_recordset(${JSON.stringify(pools.put)}::jsonb) AS x(name text, spec jsonb)
      ON CONFLICT ("clusterId", name) DO UPDATE SET spec = EXCLUDED.spec, "updatedAt" = EXCLUDED."updatedAt"
    ), run AS (
      INSERT INTO "ReconcileRun" (id, "clusterId", generation, "createdAt")
      SELECT ${randomUUID()}::uuid, ${clusterId}::uuid, upd.generation, ${now} FROM upd
    ), audit AS (
      INSERT INTO "AuditEvent" (at, actor, "actorTokenId", action, "clusterId", before, after)
      SELECT ${now}, ${actor.name}, ${actor.tokenId}::uuid, ${action}, ${clusterId}::uuid,
             ${JSON.stringify(before)}::jsonb,
             ${JSON.stringify(afterRest)}::jsonb || jsonb_build_object(
               'generation', upd.generation,
               'nodePools', COALESCE((SELECT jsonb_agg(jsonb_build_object('name', x.name, 'spec', x.spec) ORDER BY x.name)
                                        FROM jsonb_to_recordset(${JSON.stringify(after)}::jsonb) AS x(name text, spec jsonb)),
                                     '[]'::jsonb))
        FROM upd
    )
    SELECT generation FROM upd`;
  if (!row) throw new Error(`cluster ${clusterId} has no desired state`);
  return { outcome: 'applied', generation: row.generation };
}
