import type { Command } from 'commander';
import { KARPENTER_CRD_DIRECTORY } from '@fleet/crd-schema';
import { KarpenterSpecValidator, parseStoredSpec, type ProfileSpec } from '@fleet/desired-state';
import type { Platform, Topology } from '@fleet/contracts';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Request } from '../client.js';
import * as gql from '../documents.js';
import { approvalNeeded, CliError, usageError } from '../errors.js';
import {
  canonicalStrategy,
  exportPath,
  formatManifestError,
  parseManifests,
  renderDocument,
  renderStream,
  sameValue,
  sortObjects,
  validateObjects,
  type FleetObject,
  type LiveCluster,
  type LiveProfile,
  type LiveStrategy,
  type ManifestError,
} from '../manifests/manifests.js';
import {
  computePlan,
  formatPlan,
  planChanges,
  profileView,
  type PlanItem,
} from '../manifests/plan.js';
import { pages, type CommandContext, type Page, type RolloutRow } from './context.js';
import { strategyOf, type StrategyOptions } from './profiles.js';

interface ClusterNode {
  id: string;
  name: string;
  platform: Platform;
  topology: Topology;
  managementCluster: string | null;
  labels: Record<string, string> | null;
  overrides: unknown;
  karpenter: { generation: number };
}

/**
 * A live spec (a profile's, a cluster's overrides), strictly: a field this kfleet does not know
 * (written by a newer API) or no longer accepts is refused by name, never dropped — a dropped
 * field would be missing from export, and apply would send the whole spec without it and so
 * delete it server side unseen (docs/GITOPS.md).
 */
function liveSpec(raw: unknown, what: string): ProfileSpec {
  const problems: string[] = [];
  const spec = parseStoredSpec(raw, (field, reason) =>
    problems.push(field ? `field ${field} (${reason.replace(/; dropped$/, '')})` : reason),
  );
  if (problems.length)
    throw new CliError(
      `${what} has ${problems.join(', ')} that this kfleet does not know; upgrade kfleet`,
      'UNSUPPORTED',
    );
  return spec;
}

/**
 * The fleet as the token sees it: its profiles (deleting ones included), clusters and named
 * rollout strategies (fleet-wide configuration any token reads).
 */
async function readFleet(
  request: Request,
): Promise<{ profiles: LiveProfile[]; clusters: LiveCluster[]; strategies: LiveStrategy[] }> {
  const { rolloutStrategies } = await request<{
    rolloutStrategies: ({ name: string } & Record<string, unknown>)[];
  }>(gql.LIST_STRATEGIES);
  const { profiles } = await request<{
    profiles: {
      name: string;
      selector: string;
      priority: number;
      spec: unknown;
      deleting: boolean;
    }[];
  }>(gql.LIST_PROFILES);
  const clusters: LiveCluster[] = [];
  for await (const nodes of pages<ClusterNode, { clusters: Page<ClusterNode> }>(
    request,
    gql.CLUSTER_OVERRIDES_PAGE,
    {},
    (d) => d.clusters,
  ))
    for (const c of nodes)
      clusters.push({
        id: c.id,
        name: c.name,
        platform: c.platform,
        topology: c.topology,
        managementCluster: c.managementCluster,
        labels: c.labels ?? {},
        overrides: liveSpec(c.overrides, `the overrides of cluster ${c.name}`),
        generation: c.karpenter.generation,
      });
  return {
    profiles: profiles.map((p) => ({
      name: p.name,
      selector: p.selector,
      priority: p.priority,
      spec: liveSpec(p.spec, `profile ${p.name}`),
      deleting: p.deleting,
    })),
    clusters,
    strategies: rolloutStrategies.map(({ name, ...definition }) => ({
      name,
      spec: canonicalStrategy(definition),
    })),
  };
}

/** The YAML files of a path: the file itself, or every *.yaml / *.yml below a directory, sorted. */
async function manifestFiles(path: string): Promise<string[]> {
  if (path === '-') return ['-'];
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw usageError(`cannot read ${path}: ${(err as Error).message}`, '-f');
  }
  if (!info.isDirectory()) return [path];
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

// Every active state the API names in its overlap CONFLICT (rollout-access.ts, ACTIVE).
export const ROLLOUT_BUSY = /is part of rollout (\S+) \((RUNNING|WAITING_APPROVAL|PAUSED|FAILED)\)/;

/** The options `kfleet apply` declares (commands/apply.ts). */
export interface ApplyOptions extends StrategyOptions {
  filename: string[];
  dryRun?: boolean;
  prune?: boolean;
  timeout: string;
}

/** `kfleet apply -f`: documents checked, the plan printed, then written (commands/apply.ts). */
export async function applyManifests(
  opts: ApplyOptions,
  cmd: Command,
  { io, connect }: CommandContext,
): Promise<void> {
  const strategy = strategyOf(opts);
  const objects: FleetObject[] = [];
  const errors: ManifestError[] = [];
  for (const path of opts.filename)
    for (const file of await manifestFiles(path)) {
      let text: string;
      try {
        text = await io.readFile(file);
      } catch (err) {
        throw usageError(`cannot read ${file}: ${(err as Error).message}`, '-f');
      }
      const parsed = parseManifests(file === '-' ? '(stdin)' : file, text);
      objects.push(...parsed.objects);
      errors.push(...parsed.errors);
    }
  if (!objects.length && !errors.length)
    throw usageError(`no documents in ${opts.filename.join(', ')}`, '-f');
  const refuse = () => {
    for (const e of errors) io.stderr(`${formatManifestError(e)}\n`);
    return new CliError(
      `${errors.length} invalid document field${errors.length === 1 ? '' : 's'}; nothing applied`,
      'BAD_USER_INPUT',
    );
  };
  // A document that is not even well-formed is refused before the API is asked anything.
  if (errors.length) throw refuse();
  const request = connect(cmd);
  const fleet = await readFleet(request);
  errors.push(
    ...validateObjects(objects, KarpenterSpecValidator.fromDirectory(KARPENTER_CRD_DIRECTORY), {
      ...fleet,
      prune: Boolean(opts.prune),
    }),
  );
  if (errors.length) throw refuse();
  const plan = computePlan(objects, fleet, Boolean(opts.prune));
  checkDefaultStrategy(strategy.strategyName, plan, fleet.strategies);
  io.stdout(formatPlan(plan));
  if (!planChanges(plan)) {
    io.stdout('No changes.\n');
    return;
  }
  if (opts.dryRun) {
    io.stdout('Dry run: nothing written.\n');
    return;
  }
  const timeoutMs = Number(opts.timeout) * 1000;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
    throw usageError('--timeout must be a number of seconds', '--timeout');
  // Strategy writes come first (a profile write may name a strategy they create or change)
  // and their deletions last (a profile deleted here may still go through a pruned one).
  await mayWriteStrategies(request, plan);
  // Then profile deletions (they may free a name or settle a conflict), updates, creations,
  // then cluster overrides.
  const rank = (i: PlanItem) =>
    i.kind === 'RolloutStrategy'
      ? i.action === 'delete'
        ? 9
        : 0
      : (i.kind === 'Profile' ? 1 : 4) +
        (i.action === 'delete' ? 0 : i.action === 'update' ? 1 : 2);
  for (const item of plan
    .filter((i) => i.action !== 'unchanged')
    .sort((a, b) => rank(a) - rank(b))) {
    try {
      await withRolloutWait(
        request,
        timeoutMs,
        (line) => io.stdout(line),
        () => applyItem(request, item, strategy, (line) => io.stdout(line)),
      );
    } catch (err) {
      if (err instanceof CliError)
        throw new CliError(
          `${item.kind.toLowerCase()}/${item.name}: ${err.message} (the objects before it were applied; rerun after fixing)`,
          err.code,
          err.field,
        );
      throw err;
    }
  }
}

/** `kfleet export`: the fleet as the documents apply reads (commands/apply.ts). */
export async function exportFleet(
  opts: { output: string },
  cmd: Command,
  { io, connect }: CommandContext,
): Promise<void> {
  const fleet = await readFleet(connect(cmd));
  const objects = sortObjects<FleetObject>([
    ...fleet.strategies.map((st) => ({ kind: 'RolloutStrategy' as const, ...st })),
    ...fleet.profiles.filter((p) => !p.deleting).map((p) => ({ kind: 'Profile' as const, ...p })),
    ...fleet.clusters
      .filter((c) => Object.keys(c.overrides).length)
      .map((c) => ({ kind: 'ClusterOverrides' as const, name: c.name, spec: c.overrides })),
  ]).map((o): FleetObject =>
    o.kind === 'RolloutStrategy'
      ? { kind: 'RolloutStrategy', name: o.name, spec: o.spec }
      : o.kind === 'Profile'
        ? {
            kind: 'Profile',
            name: o.name,
            selector: o.selector,
            priority: o.priority,
            spec: o.spec,
          }
        : o,
  );
  if (opts.output === '-') {
    io.stdout(renderStream(objects));
    return;
  }
  for (const o of objects) await io.writeFile(join(opts.output, exportPath(o)), renderDocument(o));
  io.stderr(`${objects.length} objects written to ${opts.output}\n`);
}

/**
 * `--strategy <name>`, the strategy of every profile write whose document names none, must exist
 * while those writes run: in the fleet or the files, and not pruned by this apply. Checked before
 * anything is written, as the documents are.
 */
function checkDefaultStrategy(
  name: string | undefined,
  plan: readonly PlanItem[],
  live: readonly LiveStrategy[],
): void {
  const usedBy = plan.filter(
    (i) =>
      i.kind === 'Profile' &&
      i.action !== 'unchanged' &&
      (i.action === 'delete' || !i.object?.strategyName),
  );
  if (name === undefined || !usedBy.length) return;
  const item = plan.find((i) => i.kind === 'RolloutStrategy' && i.name === name);
  if (item?.action === 'delete')
    throw usageError(
      `--strategy ${name}: --prune deletes that rollout strategy (no document declares it)`,
      '--strategy',
    );
  if (!item && !live.some((s) => s.name === name))
    throw usageError(
      `--strategy ${name}: no rollout strategy of that name in the fleet or the files (kfleet strategies list)`,
      '--strategy',
    );
}

/**
 * Strategies are fleet-wide: writing one takes an unscoped OPERATOR or ADMIN token, deleting one
 * an unscoped ADMIN token (docs/ROLLOUTS.md). The API checks again; asking here first means a token
 * that may not is refused before the profiles of the same apply are written, not after.
 */
async function mayWriteStrategies(request: Request, plan: readonly PlanItem[]): Promise<void> {
  const writes = plan.filter((i) => i.kind === 'RolloutStrategy' && i.action !== 'unchanged');
  if (!writes.length) return;
  const { viewer } = await request<{ viewer: { name: string; role: string; scoped: boolean } }>(
    gql.VIEWER,
  );
  const deletes = writes.some((i) => i.action === 'delete');
  const allowed = deletes ? viewer.role === 'ADMIN' : viewer.role !== 'VIEWER';
  if (viewer.scoped || !allowed)
    throw new CliError(
      `token ${viewer.name} (${viewer.role}${viewer.scoped ? ', scoped' : ''}) may not ${deletes ? 'delete' : 'write'} rollout strategies: that takes an unscoped ${deletes ? 'ADMIN' : 'OPERATOR or ADMIN'} token; nothing applied`,
      'FORBIDDEN',
    );
}

async function applyItem(
  request: Request,
  item: PlanItem,
  strategy: ReturnType<typeof strategyOf>,
  out: (line: string) => void,
): Promise<void> {
  type Payload = { rollout: RolloutRow | null };
  const rolloutText = (p: Payload) =>
    p.rollout
      ? `; rollout/${p.rollout.id} ${p.rollout.state}, ${p.rollout.counts.total} clusters`
      : '; no cluster affected';
  if (item.kind === 'RolloutStrategy') {
    // As for profiles: a strategy changed since the plan is not overwritten unseen.
    if (item.live) {
      const { rolloutStrategy } = await request<{ rolloutStrategy: Record<string, unknown> }>(
        gql.GET_STRATEGY,
        { name: item.name },
      );
      const { name: _name, ...now } = rolloutStrategy;
      if (!sameValue(canonicalStrategy(now), item.live.spec))
        throw new CliError(
          `rollout strategy ${item.name} changed since the plan; run apply again to see the new plan`,
          'CONFLICT',
        );
    }
    if (item.action === 'delete') {
      await request(gql.DELETE_STRATEGY, { name: item.name });
      out(`rolloutstrategy/${item.name} deleted\n`);
      return;
    }
    const definition = item.object!.spec;
    if (item.action === 'create') {
      await request(gql.CREATE_STRATEGY, { input: { name: item.name, ...definition } });
      out(`rolloutstrategy/${item.name} created\n`);
      return;
    }
    await request(gql.UPDATE_STRATEGY, { name: item.name, input: definition });
    out(`rolloutstrategy/${item.name} updated\n`);
    return;
  }
  if (item.kind === 'Profile') {
    // As for overrides below: a profile changed since the plan is not overwritten unseen.
    if (item.live) {
      const { profile } = await request<{
        profile: { selector: string; priority: number; spec: unknown; deleting: boolean };
      }>(gql.GET_PROFILE, { name: item.name });
      const now = { ...profile, spec: liveSpec(profile.spec, `profile ${item.name}`) };
      if (now.deleting || !sameValue(profileView(now), profileView(item.live)))
        throw new CliError(
          `profile ${item.name} changed since the plan; run apply again to see the new plan`,
          'CONFLICT',
        );
    }
    if (item.action === 'delete') {
      const { deleteProfile } = await request<{ deleteProfile: Payload }>(gql.DELETE_PROFILE, {
        name: item.name,
        ...strategy,
      });
      out(`profile/${item.name} deleted${rolloutText(deleteProfile)}\n`);
      return;
    }
    const o = item.object!;
    // The document's own strategy (its annotation) wins over the apply's flags.
    const rollout = o.strategyName ? { strategyName: o.strategyName } : strategy;
    if (item.action === 'create') {
      const { createProfile } = await request<{ createProfile: Payload }>(gql.CREATE_PROFILE, {
        input: { name: o.name, selector: o.selector, priority: o.priority, spec: o.spec },
        ...rollout,
      });
      out(`profile/${o.name} created${rolloutText(createProfile)}\n`);
      return;
    }
    const { updateProfile } = await request<{ updateProfile: Payload }>(gql.UPDATE_PROFILE, {
      name: o.name,
      input: { selector: o.selector, priority: o.priority, spec: o.spec },
      ...rollout,
    });
    out(`profile/${o.name} updated${rolloutText(updateProfile)}\n`);
    return;
  }
  // Overrides the plan did not see are not overwritten: re-read them now (the profiles this
  // apply wrote moved the generation, so the plan's generation would refuse our own change) and
  // write at the generation they were read at (CONFLICT if the cluster moves in between).
  const { cluster: now } = await request<{
    cluster: { overrides: unknown; karpenter: { generation: number } };
  }>(gql.CLUSTER_OVERRIDES, { id: item.cluster.id });
  if (
    !sameValue(
      liveSpec(now.overrides, `the overrides of cluster ${item.name}`),
      item.cluster.overrides,
    )
  )
    throw new CliError(
      `the overrides of cluster ${item.name} changed since the plan; run apply again to see the new plan`,
      'CONFLICT',
    );
  const expectedGeneration = now.karpenter.generation;
  type Ack = { karpenter: { generation: number } };
  if (item.action === 'delete') {
    const { resetClusterOverrides: c } = await request<{ resetClusterOverrides: Ack }>(
      gql.RESET_CLUSTER_OVERRIDES,
      { clusterId: item.cluster.id, expectedGeneration },
    );
    out(`clusteroverrides/${item.name} cleared (generation ${c.karpenter.generation})\n`);
    return;
  }
  const { setClusterOverrides: c } = await request<{ setClusterOverrides: Ack }>(
    gql.SET_CLUSTER_OVERRIDES,
    { clusterId: item.cluster.id, overrides: item.object!.spec, expectedGeneration },
  );
  out(`clusteroverrides/${item.name} updated (generation ${c.karpenter.generation})\n`);
}

/**
 * A profile write is refused while one of its clusters is in another running rollout (often the
 * previous profile of the same apply): wait for that rollout to complete, then try again; one
 * that fails, is aborted or paused ends the apply.
 */
async function withRolloutWait(
  request: Request,
  timeoutMs: number,
  out: (line: string) => void,
  write: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await write();
    } catch (err) {
      const busy =
        err instanceof CliError && err.code === 'CONFLICT' && ROLLOUT_BUSY.exec(err.message);
      if (!busy) throw err;
      const id = busy[1]!;
      out(`waiting for rollout/${id} to complete\n`);
      for (;;) {
        if (Date.now() > deadline)
          throw new CliError(`rollout ${id} still running after --timeout`, 'TIMEOUT');
        const { rollout } = await request<{
          rollout: { state: string; waitingStage?: number | null };
        }>(gql.GET_ROLLOUT, { id });
        if (rollout.state === 'COMPLETED') break;
        if (rollout.state === 'WAITING_APPROVAL') throw approvalNeeded(id, rollout.waitingStage);
        if (rollout.state !== 'RUNNING')
          throw new CliError(
            `rollout ${id} is ${rollout.state}; resume or abort it first`,
            'CONFLICT',
          );
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
}
