import { Injectable } from '@nestjs/common';
import { GraphQLError } from 'graphql';
import { Prisma, type PrismaClient } from '@fleet/database';
import { labelSelectorWithin, parseLabelSelector, dns1123Label } from '@fleet/contracts';
import {
  ProfileSpec,
  applyOrder,
  canonicalJson,
  effectiveStateOf,
  clusterOverrides,
  boundProfiles,
  lockProfiles,
  storedSpec,
  profileConflict,
  specFields,
  type ProfileDefinition,
} from '@fleet/desired-state';
import { z } from 'zod';
import { AuditService } from '../audit/audit.service.js';
import { inScope, type Principal } from '../auth/principal.js';
import { toGlobalId } from '../common/global-id.js';
import type { Rollout } from '../rollouts/models/rollout.model.js';
import { labelSelectorSql, parseSelectorInput } from '../clusters/cluster-query.js';
import { KarpenterSpecValidator } from '../clusters/karpenter-spec.validator.js';
import {
  conflictError,
  forbiddenError,
  notFoundError,
  parseInput,
  userInputError,
} from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';
import type { RolloutStrategyInput } from '../rollouts/dto/rollout.inputs.js';
import { resolveStrategy } from '../rollouts/rollout-strategy.js';
import { RolloutsService } from '../rollouts/rollouts.service.js';
import type {
  CreateProfileInput,
  EffectiveState,
  Profile,
  ProfileBinding,
  ProfileChangePayload,
  ProfileRevisionEntry,
  UpdateProfileInput,
} from './profile.model.js';

type Tx = Prisma.TransactionClient;
type Platform = 'AWS' | 'CAPI' | 'AZURE';
type Topology = 'STANDALONE' | 'HOSTED';
type ProfileRow = Prisma.ProfileGetPayload<object>;
/** The rollout strategy a write names: inline, or a named RolloutStrategy (not both). */
interface StrategyChoice {
  strategy: RolloutStrategyInput | null | undefined;
  strategyName: string | null | undefined;
}

const Priority = z.number().int().min(0).max(1000);

/**
 * Profiles CRUD (docs/PROFILES.md). Every write serializes on one advisory lock (the
 * same-priority conflict check reads every profile), stores a new revision and, in the same
 * transaction, the rollout that takes it to the clusters it affects: nothing reaches a cluster
 * outside the rollout machinery, and a refused write (bad input, conflict, a cluster busy in
 * another rollout) leaves nothing behind.
 */
@Injectable()
export class ProfilesService {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly specs: KarpenterSpecValidator,
    private readonly rollouts: RolloutsService,
  ) {
    this.db = prisma.client;
  }

  /** A scoped token sees a profile only when its selector is within the token's scope. */
  private visible(principal: Principal, selector: string): boolean {
    return (
      principal.scope === null || labelSelectorWithin(parseLabelSelector(selector), principal.scope)
    );
  }

  async list(principal: Principal): Promise<Profile[]> {
    const rows = await this.db.profile.findMany({
      orderBy: [{ priority: 'asc' }, { name: 'asc' }],
    });
    const visible = rows.filter((r) => this.visible(principal, r.selector));
    return Promise.all(visible.map((r) => this.toModel(this.db, r)));
  }

  async get(principal: Principal, name: string): Promise<Profile> {
    const row = await this.db.profile.findUnique({ where: { name } });
    if (!row || !this.visible(principal, row.selector)) throw notFoundError('profile', name);
    return this.toModel(this.db, row);
  }

  async create(
    principal: Principal,
    input: CreateProfileInput,
    strategy: StrategyChoice,
  ): Promise<ProfileChangePayload> {
    const name = parseInput(dns1123Label, input.name, 'input.name');
    const selector = this.selector(principal, input.selector, 'input.selector');
    const priority = parseInput(Priority, input.priority, 'input.priority');
    const spec = parseInput(ProfileSpec, input.spec, 'input.spec');
    return this.write(principal, async (tx) => {
      const existing = await tx.profile.findUnique({
        where: { name },
        include: { _count: { select: { bindings: true } } },
      });
      // A name held by a profile outside the token's scope is refused without saying more
      // (neither that profile's selector nor whether it is being deleted).
      if (existing && !this.visible(principal, existing.selector))
        throw userInputError(
          'input.name',
          `the name "${name}" is taken by a profile outside the scope of token ${principal.name}; choose another`,
        );
      if (existing && !existing.deletedAt)
        throw userInputError('input.name', `a profile named "${name}" already exists`);
      if (existing) {
        if (existing._count.bindings > 0)
          throw conflictError(
            `profile ${name} is being deleted (${existing._count.bindings} clusters still bound); wait for its rollout or abort it`,
          );
        await tx.profile.delete({ where: { id: existing.id } });
      }
      await this.checkSpec(tx, selector, spec, 'input.spec');
      await this.checkConflicts(tx, principal, { name, selector, priority, spec }, 'input.spec');
      const row = await tx.profile.create({
        data: {
          name,
          selector,
          priority,
          spec: spec as Prisma.InputJsonObject,
          createdBy: principal.name,
          revisions: {
            create: { revision: 1, selector, priority, spec: spec as Prisma.InputJsonObject },
          },
        },
      });
      await this.audit.record(tx, principal, 'createProfile', null, null, snapshot(row));
      return { row, rolloutId: await this.rollout(tx, principal, row, strategy) };
    });
  }

  async update(
    principal: Principal,
    name: string,
    input: UpdateProfileInput,
    strategy: StrategyChoice,
  ): Promise<ProfileChangePayload> {
    const selector =
      input.selector != null ? this.selector(principal, input.selector, 'input.selector') : null;
    const priority =
      input.priority != null ? parseInput(Priority, input.priority, 'input.priority') : null;
    const spec = input.spec != null ? parseInput(ProfileSpec, input.spec, 'input.spec') : null;
    return this.write(principal, async (tx) => {
      const before = await this.live(tx, principal, name);
      const next = {
        name,
        selector: selector ?? before.selector,
        priority: priority ?? before.priority,
        spec: spec ?? storedSpec(before.spec, `profile ${name}`),
      };
      if (
        next.selector === before.selector &&
        next.priority === before.priority &&
        canonicalJson(next.spec) === canonicalJson(before.spec)
      )
        throw userInputError(
          'input',
          'changes nothing: give a different selector, priority or spec',
        );
      await this.checkSpec(tx, next.selector, next.spec, 'input.spec');
      await this.checkConflicts(tx, principal, next, 'input.spec');
      const revision = before.revision + 1;
      const spec_ = next.spec as Prisma.InputJsonObject;
      const row = await tx.profile.update({
        where: { id: before.id },
        data: {
          selector: next.selector,
          priority: next.priority,
          spec: spec_,
          revision,
          revisions: {
            create: { revision, selector: next.selector, priority: next.priority, spec: spec_ },
          },
        },
      });
      await this.audit.record(
        tx,
        principal,
        'updateProfile',
        null,
        snapshot(before),
        snapshot(row),
      );
      return { row, rolloutId: await this.rollout(tx, principal, row, strategy) };
    });
  }

  async delete(
    principal: Principal,
    name: string,
    strategy: StrategyChoice,
  ): Promise<ProfileChangePayload> {
    return this.write(principal, async (tx) => {
      const before = await this.live(tx, principal, name);
      const row = await tx.profile.update({
        where: { id: before.id },
        data: { deletedAt: new Date() },
      });
      await this.audit.record(tx, principal, 'deleteProfile', null, snapshot(before), null);
      const rolloutId = await this.rollout(tx, principal, row, strategy);
      if (!rolloutId) {
        await tx.profile.delete({ where: { id: row.id } });
        return { row: null, rolloutId };
      }
      return { row, rolloutId };
    });
  }

  /** The cluster's own overrides, keys in a stable order (Cluster.overrides). */
  async overrides(clusterId: string): Promise<unknown> {
    return JSON.parse(canonicalJson(await clusterOverrides(this.db, clusterId)));
  }

  /**
   * Every revision of the profile as written, newest first (Profile.revisions). A scoped token
   * sees only the revisions whose selector was within its scope: an earlier one may have pointed
   * elsewhere, and its selector and spec are not the token's to read (left out, not redacted, so
   * the entry's fields stay non-null).
   */
  async revisions(principal: Principal, profileId: string): Promise<ProfileRevisionEntry[]> {
    const rows = await this.db.profileRevision.findMany({
      where: { profileId },
      orderBy: { revision: 'desc' },
      select: { revision: true, selector: true, priority: true, spec: true, createdAt: true },
    });
    return rows.filter((r) => this.visible(principal, r.selector));
  }

  /**
   * The clusters bound to the profile and their revision, by name (Profile.clusters). A cluster
   * outside the caller's scope is left out: one bound at an older revision may no longer match
   * the (in-scope) selector the caller sees.
   */
  async bindings(principal: Principal, profileId: string): Promise<ProfileBinding[]> {
    const rows = await this.db.clusterProfile.findMany({
      where: { profileId },
      select: { revision: true, cluster: { select: { id: true, name: true, labels: true } } },
      orderBy: { cluster: { name: 'asc' } },
    });
    return rows
      .filter((r) => inScope(principal, r.cluster.labels))
      .map((r) => ({
        clusterId: toGlobalId('Cluster', r.cluster.id),
        clusterName: r.cluster.name,
        revision: r.revision,
      }));
  }

  /** The profile's latest rollout (running or finished), if the caller may see it. */
  async latestRollout(principal: Principal, profileId: string): Promise<Rollout | null> {
    const row = await this.db.rollout.findFirst({
      where: { profileId },
      orderBy: { createdAt: 'desc' },
      select: { id: true },
    });
    if (!row) return null;
    // Hidden only when the caller may not see it (NOT_FOUND); any other failure is reported.
    return this.rollouts.get(principal, row.id).catch((err: unknown) => {
      if (err instanceof GraphQLError && err.extensions.code === 'NOT_FOUND') return null;
      throw err;
    });
  }

  /** The cluster's effective state with its sources (Cluster.effectiveState). */
  async effectiveState(clusterId: string): Promise<EffectiveState> {
    const [state, bound, overrides] = await Promise.all([
      effectiveStateOf(this.db, clusterId),
      boundProfiles(this.db, clusterId),
      clusterOverrides(this.db, clusterId),
    ]);
    const values: [string, unknown][] = [
      ...Object.entries(state.settings),
      ...state.nodePools.map((p): [string, unknown] => [`nodePools.${p.name}`, p.spec]),
    ];
    return {
      fields: values.map(([field, value]) => {
        const source = state.sources[field] ?? { kind: 'default' };
        return {
          field,
          value,
          source: source.kind,
          profile: source.kind === 'profile' ? source.profile : null,
          profileRevision: source.kind === 'profile' ? source.revision : null,
        };
      }),
      profiles: applyOrder(bound).map((p) => ({
        name: p.name,
        priority: p.priority,
        revision: p.revision,
      })),
      overrides: [...specFields(overrides).keys()],
      ignored: state.ignored,
    };
  }

  private selector(principal: Principal, selector: string, field: string): string {
    if (selector !== '' && selector.trim() === '')
      throw userInputError(field, 'must not be blank; "" selects every cluster');
    parseSelectorInput(selector, field);
    if (!this.visible(principal, selector))
      throw forbiddenError(
        `token ${principal.name} may only write profiles whose selector is within its scope (${principal.labelSelector ?? ''})`,
      );
    return selector;
  }

  /** The live profile as the caller may see it; NOT_FOUND otherwise (its existence not revealed). */
  private async live(tx: Tx, principal: Principal, name: string): Promise<ProfileRow> {
    const row = await tx.profile.findUnique({ where: { name } });
    if (!row || row.deletedAt || !this.visible(principal, row.selector))
      throw notFoundError('profile', name);
    return row;
  }

  /**
   * NodePools against the real NodePool CRD; NodeClass overrides against the NodeClass of every
   * platform and topology among the clusters the selector matches now (AWS/STANDALONE when none).
   */
  private async checkSpec(
    tx: Tx,
    selector: string,
    spec: ProfileSpec,
    root: string,
  ): Promise<void> {
    for (const [name, pool] of Object.entries(spec.nodePools ?? {})) {
      const violation = this.specs.validateNodePool(name, pool)[0];
      if (violation)
        throw userInputError(
          `${root}.nodePools.${name}${violation.field ? `.${violation.field}` : ''}`,
          violation.reason,
        );
    }
    if (!spec.nodeClassOverrides) return;
    const conds = [Prisma.sql`TRUE`, ...labelSelectorSql(parseLabelSelector(selector))];
    const pairs = await tx.$queryRaw<{ platform: Platform; topology: Topology }[]>`
      SELECT DISTINCT c.platform::text AS platform, c.topology::text AS topology
        FROM "Cluster" c WHERE ${Prisma.join(conds, ' AND ')}`;
    for (const { platform, topology } of pairs.length
      ? pairs
      : [{ platform: 'AWS' as Platform, topology: 'STANDALONE' as Topology }]) {
      const violation = this.specs.validateNodeClassOverrides(
        platform,
        spec.nodeClassOverrides,
        topology,
      )[0];
      if (violation)
        throw userInputError(
          `${root}.nodeClassOverrides${violation.field ? `.${violation.field}` : ''}`,
          `${violation.reason} (for ${platform}/${topology} clusters the selector matches)`,
        );
    }
  }

  /** Same priority, overlapping selectors, one field set differently: refused naming both. */
  private async checkConflicts(
    tx: Tx,
    principal: Principal,
    next: ProfileDefinition,
    root: string,
  ): Promise<void> {
    const others = await tx.profile.findMany({
      where: { deletedAt: null, name: { not: next.name } },
      orderBy: { name: 'asc' },
    });
    for (const other of others) {
      const def = {
        name: other.name,
        selector: other.selector,
        priority: other.priority,
        spec: storedSpec(other.spec, `profile ${other.name}`),
      };
      const field = profileConflict(next, def);
      if (field && !this.visible(principal, other.selector))
        // Still refused (composition would be ambiguous), but a profile the token cannot see is
        // neither named nor described.
        throw userInputError(
          `${root}.${field}`,
          `profile ${next.name} conflicts with a profile outside the scope of token ${principal.name}: ` +
            `both have priority ${next.priority}, selectors a cluster can match both of, and set ${field} ` +
            `differently; give ${next.name} another priority, or ask someone who sees the fleet`,
        );
      if (field)
        throw userInputError(
          `${root}.${field}`,
          `profile ${next.name} and profile ${other.name} both have priority ${next.priority}, ` +
            `selectors a cluster can match both of ("${next.selector}", "${other.selector}"), ` +
            `and set ${field} differently; give one of them another priority, or the same value`,
        );
    }
  }

  /**
   * The rollout of this revision (or of the deletion) over the clusters it affects: those bound
   * to the profile and those its selector matches now. Null when none.
   */
  private async rollout(
    tx: Tx,
    principal: Principal,
    row: ProfileRow,
    strategy: StrategyChoice,
  ): Promise<string | null> {
    const matches = row.deletedAt
      ? Prisma.sql`FALSE`
      : Prisma.join(
          [Prisma.sql`TRUE`, ...labelSelectorSql(parseLabelSelector(row.selector))],
          ' AND ',
        );
    const clusters = await tx.$queryRaw<
      { id: string; name: string; labels: Record<string, string> | null }[]
    >`
      SELECT c.id, c.name, c.labels FROM "Cluster" c
       WHERE (${matches})
          OR c.id IN (SELECT "clusterId" FROM "ClusterProfile" WHERE "profileId" = ${row.id}::uuid)
       ORDER BY c.name, c.id`;
    if (!clusters.length) {
      // Nothing to roll out, but a bad or unknown strategy is still the caller's mistake.
      await resolveStrategy(tx, strategy.strategy, strategy.strategyName);
      return null;
    }
    return this.rollouts.createForProfile(tx, principal, {
      profileId: row.id,
      profileName: row.name,
      revision: row.revision,
      selector: row.selector,
      strategy: strategy.strategy,
      strategyName: strategy.strategyName,
      clusters,
    });
  }

  private async write(
    principal: Principal,
    body: (tx: Tx) => Promise<{ row: ProfileRow | null; rolloutId: string | null }>,
  ): Promise<ProfileChangePayload> {
    const { row, rolloutId } = await this.db.$transaction(
      async (tx) => {
        await lockProfiles(tx);
        return body(tx);
      },
      { timeout: 60_000 },
    );
    if (rolloutId) await this.rollouts.announce(rolloutId);
    return {
      profile: row ? await this.toModel(this.db, row) : null,
      rollout: rolloutId ? await this.rollouts.get(principal, rolloutId) : null,
    };
  }

  private async toModel(db: Tx | PrismaClient, row: ProfileRow): Promise<Profile> {
    const [bound, current] = await Promise.all([
      db.clusterProfile.count({ where: { profileId: row.id } }),
      db.clusterProfile.count({ where: { profileId: row.id, revision: row.revision } }),
    ]);
    return {
      uid: row.id,
      name: row.name,
      selector: row.selector,
      priority: row.priority,
      spec: row.spec,
      revision: row.revision,
      deleting: row.deletedAt !== null,
      boundClusters: bound,
      currentClusters: current,
      createdBy: row.createdBy,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }
}

/** What the audit trail shows of a profile. */
function snapshot(row: ProfileRow): Prisma.InputJsonObject {
  return {
    profileId: row.id,
    name: row.name,
    selector: row.selector,
    priority: row.priority,
    revision: row.revision,
    spec: row.spec,
  };
}
