import { canonicalJson, type ProfileSpec, type StrategyDefinition } from '@fleet/desired-state';
import {
  KINDS,
  sortObjects,
  type ClusterOverridesObject,
  type FleetObject,
  type Kind,
  type LiveCluster,
  type LiveProfile,
  type LiveStrategy,
  type ProfileObject,
  type RolloutStrategyObject,
} from './manifests.js';

/**
 * What `kfleet apply` will do, object by object, before it does anything: create, update (with
 * the fields that change), unchanged, or delete (--prune). Pure: computed from the documents and
 * the fleet as the token sees it.
 */

export type Action = 'create' | 'update' | 'unchanged' | 'delete';

export interface FieldChange {
  path: string;
  /** Absent: the field is added. */
  before?: unknown;
  /** Absent: the field is removed. */
  after?: unknown;
}

export type PlanItem =
  | {
      kind: 'RolloutStrategy';
      name: string;
      action: Action;
      changes: FieldChange[];
      object?: RolloutStrategyObject;
      /** The strategy as the plan saw it (update, delete). */
      live?: LiveStrategy;
    }
  | {
      kind: 'Profile';
      name: string;
      action: Action;
      changes: FieldChange[];
      object?: ProfileObject;
      /** The profile as the plan saw it (update, delete). */
      live?: LiveProfile;
    }
  | {
      kind: 'ClusterOverrides';
      name: string;
      action: Action;
      changes: FieldChange[];
      object?: ClusterOverridesObject;
      cluster: LiveCluster;
    };

const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * Field-level differences, keyed by dotted path: objects are compared key by key (sorted), every
 * other value (arrays included: a NodePool's requirements are one list) as a whole.
 */
export function diffValues(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => {
      const p = path ? `${path}.${k}` : k;
      if (!Object.hasOwn(after, k) || after[k] === undefined)
        return before[k] === undefined ? [] : [{ path: p, before: before[k] }];
      if (!Object.hasOwn(before, k) || before[k] === undefined)
        return [{ path: p, after: after[k] }];
      return diffValues(before[k], after[k], p);
    });
  }
  if (canonicalJson(before) === canonicalJson(after)) return [];
  return [{ path, before, after }];
}

export const profileView = (p: { selector: string; priority: number; spec: ProfileSpec }) => ({
  selector: p.selector,
  priority: p.priority,
  ...p.spec,
});

/** A strategy's definition without its off gates (null), as export writes it. */
export const strategyView = (spec: StrategyDefinition): Record<string, unknown> =>
  Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== null));

/**
 * The plan. `prune` deletes, for each kind the documents hold at least one of, the objects of
 * that kind the token sees that no document names: profiles (deleted through their rollout) and
 * cluster overrides (cleared). A kind no document holds is never pruned, so
 * `apply -f profiles/ --prune` cannot clear every cluster's overrides.
 */
export function computePlan(
  objects: readonly FleetObject[],
  fleet: {
    profiles: readonly LiveProfile[];
    clusters: readonly LiveCluster[];
    strategies: readonly LiveStrategy[];
  },
  prune: boolean,
): PlanItem[] {
  const items: PlanItem[] = [];
  const live = new Map(fleet.profiles.filter((p) => !p.deleting).map((p) => [p.name, p]));
  const clusters = new Map(fleet.clusters.map((c) => [c.name, c]));
  const strategies = new Map(fleet.strategies.map((s) => [s.name, s]));
  for (const o of sortObjects(objects)) {
    if (o.kind === 'RolloutStrategy') {
      const before = strategies.get(o.name);
      const changes = diffValues(
        before ? strategyView(before.spec) : {},
        strategyView(o.spec),
        'spec',
      );
      items.push({
        kind: 'RolloutStrategy',
        name: o.name,
        action: !before ? 'create' : changes.length ? 'update' : 'unchanged',
        changes,
        object: o,
        ...(before ? { live: before } : {}),
      });
    } else if (o.kind === 'Profile') {
      const before = live.get(o.name);
      if (!before) {
        items.push({
          kind: 'Profile',
          name: o.name,
          action: 'create',
          changes: diffValues({}, profileView(o), 'spec'),
          object: o,
        });
        continue;
      }
      const changes = diffValues(profileView(before), profileView(o), 'spec');
      items.push({
        kind: 'Profile',
        name: o.name,
        action: changes.length ? 'update' : 'unchanged',
        changes,
        object: o,
        live: before,
      });
    } else {
      const cluster = clusters.get(o.name);
      if (!cluster) throw new Error(`cluster ${o.name} not in the fleet (validate first)`);
      const changes = diffValues(cluster.overrides, o.spec, 'spec');
      items.push({
        kind: 'ClusterOverrides',
        name: o.name,
        action: changes.length ? 'update' : 'unchanged',
        changes,
        object: o,
        cluster,
      });
    }
  }
  if (prune) {
    const kinds = new Set<Kind>(objects.map((o) => o.kind));
    const named = new Set(objects.map((o) => `${o.kind}/${o.name}`));
    if (kinds.has('RolloutStrategy'))
      for (const st of [...strategies.values()].sort((a, b) => (a.name < b.name ? -1 : 1)))
        if (!named.has(`RolloutStrategy/${st.name}`))
          items.push({
            kind: 'RolloutStrategy',
            name: st.name,
            action: 'delete',
            changes: diffValues(strategyView(st.spec), {}, 'spec'),
            live: st,
          });
    if (kinds.has('Profile'))
      for (const p of [...live.values()].sort((a, b) => (a.name < b.name ? -1 : 1)))
        if (!named.has(`Profile/${p.name}`))
          items.push({
            kind: 'Profile',
            name: p.name,
            action: 'delete',
            changes: diffValues(profileView(p), {}, 'spec'),
            live: p,
          });
    if (kinds.has('ClusterOverrides'))
      for (const c of [...fleet.clusters].sort((a, b) => (a.name < b.name ? -1 : 1)))
        if (!named.has(`ClusterOverrides/${c.name}`) && Object.keys(c.overrides).length)
          items.push({
            kind: 'ClusterOverrides',
            name: c.name,
            action: 'delete',
            changes: diffValues(c.overrides, {}, 'spec'),
            cluster: c,
          });
  }
  return items;
}

const SIGN: Record<Action, string> = { create: '+', update: '~', unchanged: '=', delete: '-' };
const short = (v: unknown): string => {
  const text = JSON.stringify(v);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/** The plan as text: a summary line, then each object that changes with its fields. */
export function formatPlan(items: readonly PlanItem[]): string {
  const count = (a: Action) => items.filter((i) => i.action === a).length;
  const lines = [
    `Plan: ${count('create')} to create, ${count('update')} to update, ${count('delete')} to delete, ${count('unchanged')} unchanged`,
  ];
  const order = (i: PlanItem) => KINDS.indexOf(i.kind);
  for (const item of [...items].sort((a, b) => order(a) - order(b))) {
    if (item.action === 'unchanged') continue;
    const what =
      item.kind === 'RolloutStrategy'
        ? item.action
        : item.action === 'delete'
          ? item.kind === 'Profile'
            ? 'delete, through its rollout'
            : 'clear every override'
          : item.action === 'create' && item.kind === 'Profile'
            ? 'create, through its rollout'
            : item.kind === 'Profile'
              ? 'update, through its rollout'
              : 'update';
    lines.push(`${SIGN[item.action]} ${item.kind.toLowerCase()}/${item.name} (${what})`);
    for (const c of item.changes)
      lines.push(
        !Object.hasOwn(c, 'before')
          ? `    + ${c.path}: ${short(c.after)}`
          : !Object.hasOwn(c, 'after')
            ? `    - ${c.path}: ${short(c.before)}`
            : `    ~ ${c.path}: ${short(c.before)} -> ${short(c.after)}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

/** Whether the plan writes anything. */
export const planChanges = (items: readonly PlanItem[]): boolean =>
  items.some((i) => i.action !== 'unchanged');
