import { Injectable } from '@nestjs/common';
import { type PrismaClient } from '@fleet/database';
import { AuditService } from '../audit/audit.service.js';
import { inScope, type Principal } from '../auth/principal.js';
import {
  conflictError,
  forbiddenError,
  notFoundError,
  parseInput,
  userInputError,
} from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import { QueuesService } from '../queues/queues.service.js';
import {
  Labels,
  NodePoolNameSchema,
  ExpectedGeneration,
  SetKarpenterSchema,
} from './cluster-input.schemas.js';
import {
  PROFILE_SETTINGS,
  ProfileSpec,
  canonicalJson,
  applyDesiredStateChange,
  clusterOverrides,
  clusterSnapshot,
  commitDesiredStateChange,
  commitLockedChange,
  readChangeFacts,
  type ChangeFacts,
  effectiveStateOf,
  isProfileField,
  materializeEffectiveState,
  sameEffectiveState,
  syncMemberships,
  withoutOverride,
  writeOverrides,
  type DesiredStateChange,
} from '@fleet/desired-state';
import { findDriver } from '@fleet/cloud-provider';
import type { Platform, Topology } from '@fleet/contracts';
import { unsupportedChangeFor } from './unsupported-change.js';
import {
  type NodeClassOverridesInput,
  type SetKarpenterInput,
  type UpsertNodePoolInput,
} from './dto/cluster.inputs.js';
import { KarpenterSpecValidator } from './karpenter-spec.validator.js';
import { migrationPlanOf } from './migration-plan.js';
import type { Cluster } from './models/cluster.model.js';
import {
  withEverything,
  lockInScope,
  clusterChanged,
  readClusterView,
  type Tx,
} from './cluster-access.js';
import { ClusterQueries } from './cluster-queries.service.js';

/** The instance types a plan's NodePools allow (their node.kubernetes.io/instance-type In values). */
function instanceTypesOf(pools: readonly { spec: Record<string, unknown> }[]): string[] {
  const types = new Set<string>();
  for (const pool of pools) {
    const template = pool.spec.template as
      | { spec?: { requirements?: { key: string; operator: string; values?: string[] }[] } }
      | undefined;
    for (const r of template?.spec?.requirements ?? [])
      if (r.key === 'node.kubernetes.io/instance-type' && r.operator === 'In')
        for (const v of r.values ?? []) types.add(v);
  }
  return [...types].sort();
}

/** Every change to a cluster's labels and desired state, each in one audited transaction. */
@Injectable()
export class DesiredStateChanges {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly queries: ClusterQueries,
    private readonly queues: QueuesService,
    private readonly audit: AuditService,
    private readonly specs: KarpenterSpecValidator,
    private readonly events: FleetEventsService,
  ) {
    this.db = prisma.client;
  }

  /**
   * Labels decide which profiles a cluster is bound to (docs/PROFILES.md § Membership): a change
   * that moves the cluster into or out of a profile and so changes its effective state bumps the
   * generation and sends an order, like any desired-state change of this one cluster; one that
   * changes no effective field stays fleet metadata (no generation, no order).
   */
  async updateLabels(principal: Principal, uid: string, labels: unknown): Promise<Cluster> {
    const valid = parseInput(Labels, labels, 'labels');
    if (!inScope(principal, valid)) {
      throw forbiddenError(`token ${principal.name} cannot move a cluster outside its selector`);
    }
    const { row, bumped } = await this.db.$transaction(async (tx) => {
      await lockInScope(tx, principal, uid);
      const before = await clusterSnapshot(tx, uid);
      const effectiveBefore = await effectiveStateOf(tx, uid);
      await tx.cluster.update({ where: { id: uid }, data: { labels: valid } });
      let bumped = false;
      if (await syncMemberships(tx, uid, valid)) {
        const after = await effectiveStateOf(tx, uid);
        if (!sameEffectiveState(effectiveBefore, after)) {
          await commitDesiredStateChange(tx, {
            clusterId: uid,
            actor: principal,
            action: 'updateClusterLabels',
            change: async (t) => {
              await materializeEffectiveState(t, uid);
            },
          });
          bumped = true;
        } else await materializeEffectiveState(tx, uid); // sources name the new profile
      }
      if (!bumped)
        await this.audit.record(
          tx,
          principal,
          'updateClusterLabels',
          uid,
          before,
          await clusterSnapshot(tx, uid),
        );
      const row = await tx.cluster.findUniqueOrThrow({
        where: { id: uid },
        include: withEverything,
      });
      return { row, bumped };
    });
    if (bumped)
      await this.queues.requestReconcile({ clusterId: uid, generation: row.desired!.generation });
    await clusterChanged(this.events, uid);
    return this.queries.toModel(row);
  }

  /**
   * Clears the cluster's override of `field` (a setting, or `nodePools.<name>`): the profiles'
   * value (or the built-in default) applies again, as a desired-state change of this cluster.
   */
  async resetOverride(
    principal: Principal,
    uid: string,
    field: string,
    expectedGeneration?: number | null,
  ): Promise<Cluster> {
    const expected = parseInput(ExpectedGeneration, expectedGeneration, 'expectedGeneration');
    if (!isProfileField(field))
      throw userInputError(
        'field',
        `"${field}" is not a field a cluster overrides: one of ${PROFILE_SETTINGS.join(', ')}, or nodePools.<name>`,
      );
    return this.changeDesiredState(principal, uid, 'resetClusterOverride', expected, async (tx) => {
      const next = withoutOverride(await clusterOverrides(tx, uid), field);
      if (!next) throw userInputError('field', `the cluster does not override ${field}`);
      await writeOverrides(tx, uid, next);
    });
  }

  /**
   * Replaces the cluster's own overrides whole (`kfleet apply`'s ClusterOverrides; `{}` clears
   * every one, `kfleet clusters reset --all`): checked as the per-field mutations check them
   * (the ProfileSpec shape strictly, NodePools against the CRD, NodeClass overrides against this
   * cluster's NodeClass, what its platform refuses), then one desired-state change — one
   * generation, one audit entry (`action`), one order.
   */
  async replaceOverrides(
    principal: Principal,
    uid: string,
    overrides: unknown,
    action: 'setClusterOverrides' | 'resetClusterOverrides',
    expectedGeneration?: number | null,
  ): Promise<Cluster> {
    const expected = parseInput(ExpectedGeneration, expectedGeneration, 'expectedGeneration');
    const next = parseInput(ProfileSpec, overrides, 'overrides');
    return this.changeDesiredState(principal, uid, action, expected, async (tx) => {
      // The raw stored JSON, not the lenient view: overrides holding only a field the schema no
      // longer accepts read as {}, yet they are there to reset (and a replace must remove them).
      const { overrides: current } = await tx.desiredState.findUniqueOrThrow({
        where: { clusterId: uid },
        select: { overrides: true },
      });
      if (canonicalJson(current ?? {}) === canonicalJson(next))
        // resetClusterOverrides has no overrides argument: its error names the cluster it was
        // given, so a caller sees which of its arguments the refusal is about.
        throw action === 'resetClusterOverrides'
          ? userInputError('clusterId', 'the cluster overrides nothing')
          : userInputError(
              'overrides',
              'changes nothing: the cluster already has exactly these overrides',
            );
      const cluster = await tx.cluster.findUniqueOrThrow({
        where: { id: uid },
        select: { platform: true, topology: true, managementCluster: true },
      });
      const { nodePools, ...settings } = next;
      const refusal = unsupportedChangeFor(cluster, {
        ...settings,
        karpenterVersion: settings.karpenterVersion ?? undefined,
      });
      if (refusal) throw userInputError(`overrides.${refusal.field}`, refusal.reason);
      for (const [name, pool] of Object.entries(nodePools ?? {})) {
        const violation = this.specs.validateNodePool(name, pool)[0];
        if (violation)
          throw userInputError(
            `overrides.nodePools.${name}${violation.field ? `.${violation.field}` : ''}`,
            violation.reason,
          );
      }
      if (next.nodeClassOverrides)
        this.checkNodeClassOverrides(
          cluster,
          next.nodeClassOverrides,
          'overrides.nodeClassOverrides',
        );
      await writeOverrides(tx, uid, next);
    });
  }

  async setKarpenter(
    principal: Principal,
    uid: string,
    input: SetKarpenterInput,
    action = 'setKarpenter',
  ): Promise<Cluster> {
    const { expectedGeneration, ...fields } = parseInput(SetKarpenterSchema, input, 'input');
    const change = Object.fromEntries(
      Object.entries(fields).filter(([, v]) => v != null),
    ) as DesiredStateChange;
    return this.commitChange(principal, uid, action, expectedGeneration, (facts) => {
      this.checkChangeAgainst(facts, change, 'input');
      return change;
    });
  }

  /**
   * Why this change cannot apply to this cluster, as BAD_USER_INPUT under `root` (setKarpenter's
   * `input`, a plan's `change`): the cluster's platform and topology, and a NodePool upsert
   * against the real CRD. The one check setKarpenter and applyPlan share.
   */
  async checkChange(tx: Tx, uid: string, change: DesiredStateChange, root: string): Promise<void> {
    const cluster = await tx.cluster.findUniqueOrThrow({
      where: { id: uid },
      select: { platform: true, topology: true, managementCluster: true },
    });
    this.checkChangeAgainst(cluster, change, root);
  }

  /** checkChange against the cluster facts a caller has already read. */
  private checkChangeAgainst(
    cluster: { platform: Platform; topology: Topology; managementCluster: string | null },
    change: DesiredStateChange,
    root: string,
  ): void {
    const refusal = unsupportedChangeFor(cluster, change);
    if (refusal) throw userInputError(`${root}.${refusal.field}`, refusal.reason);
    if (change.upsertNodePool) {
      const violation = this.specs.validateNodePool(
        change.upsertNodePool.name,
        change.upsertNodePool.spec,
      )[0];
      if (violation)
        throw userInputError(
          `${root}.upsertNodePool.spec${violation.field ? `.${violation.field}` : ''}`,
          violation.reason,
        );
      const ignored = nodeClassRefRefusal(cluster, change.upsertNodePool.spec);
      if (ignored)
        throw userInputError(`${root}.upsertNodePool.spec.template.spec.nodeClassRef`, ignored);
    }
  }

  /** NodeClass overrides checked against this cluster's NodeClass CRD, the error under `root`. */
  private checkNodeClassOverrides(
    cluster: { platform: Platform; topology: Topology },
    overrides: Record<string, unknown>,
    root: string,
  ): void {
    const violation = this.specs.validateNodeClassOverrides(
      cluster.platform,
      overrides,
      cluster.topology,
    )[0];
    if (violation)
      throw userInputError(
        `${root}${violation.field ? `.${violation.field}` : ''}`,
        violation.reason,
      );
  }

  /**
   * Applies one change to several clusters, each at the generation it was reviewed at: every
   * cluster is locked (in id order) and checked first, then each change is committed through
   * the one path (commitDesiredStateChange), all in one transaction — a cluster that moved makes
   * the whole call CONFLICT, naming it, and nothing is written.
   */
  async applyAtGenerations(
    principal: Principal,
    targets: readonly { clusterId: string; clusterName: string; generation: number }[],
    change: DesiredStateChange,
    action: string,
    extra?: (tx: Tx) => Promise<void>,
  ): Promise<Cluster[]> {
    const sorted = [...targets].sort((a, b) => (a.clusterId < b.clusterId ? -1 : 1));
    const rows = await this.db.$transaction(
      async (tx) => {
        for (const t of sorted) {
          const current = await lockInScope(tx, principal, t.clusterId);
          if (current !== t.generation)
            throw conflictError(
              `cluster ${t.clusterName} is at generation ${current}, not the ${t.generation} the plan was computed against`,
            );
          await this.checkChange(tx, t.clusterId, change, 'change');
        }
        for (const t of sorted)
          await commitDesiredStateChange(tx, {
            clusterId: t.clusterId,
            actor: principal,
            action,
            change: async (inner) => {
              if (
                (await applyDesiredStateChange(inner, t.clusterId, change)) === 'no-such-nodepool'
              )
                throw notFoundError('NodePool', change.deleteNodePool ?? '');
            },
          });
        await extra?.(tx);
        return tx.cluster.findMany({
          where: { id: { in: sorted.map((t) => t.clusterId) } },
          include: withEverything,
          orderBy: { name: 'asc' },
        });
      },
      { timeout: 60_000 },
    );
    for (const row of rows) {
      await this.queues.requestReconcile({
        clusterId: row.id,
        generation: row.desired!.generation,
      });
      await clusterChanged(this.events, row.id);
    }
    return rows.map((row) => this.queries.toModel(row));
  }

  async upsertNodePool(
    principal: Principal,
    uid: string,
    input: UpsertNodePoolInput,
  ): Promise<Cluster> {
    const name = parseInput(NodePoolNameSchema, input.name, 'input.name');
    const expected = parseInput(
      ExpectedGeneration,
      input.expectedGeneration,
      'input.expectedGeneration',
    );
    const violation = this.specs.validateNodePool(name, input.spec)[0];
    if (violation)
      throw userInputError(
        `input.spec${violation.field ? `.${violation.field}` : ''}`,
        violation.reason,
      );
    const spec = input.spec as Record<string, unknown>;
    return this.commitChange(principal, uid, 'upsertNodePool', expected, (cluster) => {
      const ignored = nodeClassRefRefusal(cluster, spec);
      if (ignored) throw userInputError('input.spec.template.spec.nodeClassRef', ignored);
      return { upsertNodePool: { name, spec } };
    });
  }

  async deleteNodePool(
    principal: Principal,
    uid: string,
    name: string,
    expectedGeneration?: number | null,
  ): Promise<Cluster> {
    const expected = parseInput(ExpectedGeneration, expectedGeneration, 'expectedGeneration');
    return this.commitChange(principal, uid, 'deleteNodePool', expected, () => ({
      deleteNodePool: name,
    }));
  }

  async setNodeClassOverrides(
    principal: Principal,
    uid: string,
    input: NodeClassOverridesInput,
  ): Promise<Cluster> {
    const expected = parseInput(
      ExpectedGeneration,
      input.expectedGeneration,
      'input.expectedGeneration',
    );
    const overrides = Object.fromEntries(
      (['blockDeviceMappings', 'tags', 'metadataOptions', 'kubelet'] as const)
        .filter((k) => input[k] != null)
        .map((k) => [k, input[k]]),
    );
    return this.commitChange(principal, uid, 'setNodeClassOverrides', expected, (cluster) => {
      this.checkNodeClassOverrides(cluster, overrides, 'input');
      return { nodeClassOverrides: overrides };
    });
  }

  /**
   * Applies the cluster's migration plan as one desired-state change (one generation, one audit
   * event `applyMigrationPlan`): the proposed NodePools upserted (others kept), the proposed
   * NodeClass overrides set over the current ones, Karpenter enabled and the Cluster Autoscaler
   * mode MIGRATE, so both run side by side; DISABLE is the SRE's separate second step. The plan
   * is checked again with the real CRDs, as upsertNodePool and setNodeClassOverrides check.
   */
  async applyMigrationPlan(
    principal: Principal,
    uid: string,
    expectedGeneration: number,
  ): Promise<Cluster> {
    const expected = parseInput(ExpectedGeneration, expectedGeneration, 'expectedGeneration');
    return this.changeDesiredState(principal, uid, 'applyMigrationPlan', expected, async (tx) => {
      const cluster = await tx.cluster.findUniqueOrThrow({
        where: { id: uid },
        select: {
          platform: true,
          topology: true,
          managementCluster: true,
          status: true,
          desired: { select: { nodeClassOverrides: true } },
        },
      });
      const { plan, reason } = migrationPlanOf(cluster.status);
      if (!plan) throw userInputError('clusterId', `no migration plan: ${reason}`);
      const refusal = unsupportedChangeFor(cluster, { clusterAutoscalerMode: 'MIGRATE' });
      if (refusal) throw userInputError('clusterId', refusal.reason);
      for (const pool of plan.proposal.nodePools) {
        const violation = this.specs.validateNodePool(pool.name, pool.spec)[0];
        if (violation)
          throw userInputError(
            `plan.nodePools.${pool.name}${violation.field ? `.${violation.field}` : ''}`,
            violation.reason,
          );
      }
      const overrides = {
        ...((cluster.desired?.nodeClassOverrides ?? {}) as Record<string, unknown>),
        ...plan.proposal.nodeClassOverrides,
      };
      this.checkNodeClassOverrides(cluster, overrides, 'plan.nodeClassOverrides');
      // Cluster API: Karpenter launches only the instance types the fleet renders a
      // MachineDeployment for, so the plan's types become allowedInstanceTypes.
      const allowedInstanceTypes =
        cluster.platform === 'CAPI' ? instanceTypesOf(plan.proposal.nodePools) : [];
      if (allowedInstanceTypes.length > 32)
        throw userInputError(
          'plan.nodePools',
          `the plan allows ${allowedInstanceTypes.length} instance types; a Cluster API cluster takes at most 32 (allowedInstanceTypes)`,
        );
      await applyDesiredStateChange(tx, uid, {
        enabled: true,
        clusterAutoscalerMode: 'MIGRATE',
        ...(allowedInstanceTypes.length > 0 ? { allowedInstanceTypes } : {}),
      });
      for (const pool of plan.proposal.nodePools)
        await applyDesiredStateChange(tx, uid, {
          upsertNodePool: { name: pool.name, spec: pool.spec },
        });
      await applyDesiredStateChange(tx, uid, { nodeClassOverrides: overrides });
    });
  }

  /** Re-sends the current desired state even if the cluster reports it applied. */
  async forceReconcile(principal: Principal, uid: string): Promise<Cluster> {
    const row = await this.db.$transaction(async (tx) => {
      await lockInScope(tx, principal, uid);
      const snapshot = await clusterSnapshot(tx, uid);
      await this.audit.record(tx, principal, 'reconcileCluster', uid, snapshot, snapshot);
      return tx.cluster.findUniqueOrThrow({ where: { id: uid }, include: withEverything });
    });
    await this.queues.requestReconcile({
      clusterId: uid,
      generation: row.desired!.generation,
      force: true,
    });
    return this.queries.toModel(row);
  }

  /**
   * changeDesiredState for a change that is one DesiredStateChange, checked against what
   * `decide` is given: four statements (issue 48, target 3) — the scoped lock, one read of
   * everything the checks, the audit snapshot and the effective state need (readChangeFacts),
   * one write of the change, generation, reconcile run and audit event (commitLockedChange), and
   * the answer's read-back — where changeDesiredState's helpers issue one per row they touch.
   * The same rows, the same CONFLICT and errors, the reconcile request after commit.
   */
  private async commitChange(
    principal: Principal,
    uid: string,
    action: string,
    expectedGeneration: number | null | undefined,
    decide: (facts: ChangeFacts) => DesiredStateChange,
  ): Promise<Cluster> {
    return this.lockedChange(principal, uid, expectedGeneration, async (tx) => {
      const facts = await readChangeFacts(tx, uid);
      const change = decide(facts);
      const { outcome } = await commitLockedChange(tx, {
        clusterId: uid,
        facts,
        change,
        actor: principal,
        action,
      });
      if (outcome === 'no-such-nodepool') throw notFoundError('NodePool', change.deleteNodePool!);
    });
  }

  /**
   * The one path by which desired state changes: the change, the generation bump, the reconcile
   * run and the audit event commit together, then the worker is asked to reconcile. If Redis is
   * down at that moment the resync finds `generation > observedGeneration` and dispatches anyway.
   */
  private async changeDesiredState(
    principal: Principal,
    uid: string,
    action: string,
    expectedGeneration: number | null | undefined,
    change: (tx: Tx) => Promise<void>,
  ): Promise<Cluster> {
    return this.lockedChange(principal, uid, expectedGeneration, (tx) =>
      commitDesiredStateChange(tx, { clusterId: uid, actor: principal, action, change }),
    );
  }

  /**
   * What every desired-state change of one cluster shares: the scoped lock, CONFLICT when the
   * cluster moved past `expectedGeneration`, `write`, the answer read back in the same
   * transaction, then the reconcile request and the change event after commit.
   */
  private async lockedChange(
    principal: Principal,
    uid: string,
    expectedGeneration: number | null | undefined,
    write: (tx: Tx) => Promise<unknown>,
  ): Promise<Cluster> {
    const view = await this.db.$transaction(async (tx) => {
      const current = await lockInScope(tx, principal, uid);
      if (expectedGeneration != null && current !== expectedGeneration) {
        throw conflictError(
          `cluster is at generation ${current}, not the expected ${expectedGeneration}`,
        );
      }
      await write(tx);
      return readClusterView(tx, uid);
    });
    await this.queues.requestReconcile({ clusterId: uid, generation: view.desired!.generation });
    await clusterChanged(this.events, uid);
    return this.queries.toModel(view);
  }
}

/** Why Karpenter on this cluster's platform would ignore a NodePool of this spec, if it would. */
function nodeClassRefRefusal(
  cluster: { platform: Platform; topology: Topology },
  spec: Record<string, unknown>,
): string | undefined {
  const template = spec.template as { spec?: { nodeClassRef?: unknown } } | undefined;
  return findDriver(cluster.platform, cluster.topology)?.rules.nodeClassRefProblem(
    template?.spec?.nodeClassRef,
  );
}
