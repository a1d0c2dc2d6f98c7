import {
  ClusterAutoscalerMode,
  DEFAULT_FEATURE_GATES,
  DriftPolicy,
  FeatureGates,
  KarpenterVersion,
  LogLevel,
  dns1123Subdomain,
  labelSelectorsOverlap,
  parseLabelSelector,
} from '@fleet/contracts';
import { z } from 'zod';
import { unsupportedChange, type ChangeTarget } from './change.js';

/**
 * Fleet profiles (docs/PROFILES.md): a named piece of Karpenter desired state, bound by label
 * selector, composed in priority order under the cluster's own overrides. Everything here is
 * pure; the database side is profile-store.ts.
 */

/** The settings a profile (or a cluster's override) may set; NodePools are keyed by name. */
export const PROFILE_SETTINGS = [
  'enabled',
  'clusterAutoscalerMode',
  'logLevel',
  'featureGates',
  'nodeClassOverrides',
  'karpenterVersion',
  'driftPolicy',
] as const;
export type ProfileSetting = (typeof PROFILE_SETTINGS)[number];

/**
 * Only what it names: an absent field is not set (and falls through to a lower-priority profile
 * or the built-in default). `karpenterVersion: null` sets "the fleet default" explicitly.
 * The same shape holds a cluster's overrides (DesiredState.overrides).
 */
export const ProfileSpec = z
  .object({
    enabled: z.boolean().optional(),
    clusterAutoscalerMode: ClusterAutoscalerMode.optional(),
    logLevel: LogLevel.optional(),
    featureGates: FeatureGates.optional(),
    nodeClassOverrides: z.record(z.string(), z.unknown()).optional(),
    karpenterVersion: KarpenterVersion.nullable().optional(),
    driftPolicy: DriftPolicy.optional(),
    nodePools: z.record(dns1123Subdomain, z.record(z.string(), z.unknown())).optional(),
  })
  .strict();
export type ProfileSpec = z.infer<typeof ProfileSpec>;

/**
 * A spec as stored (a profile revision, a cluster's overrides): parsed leniently, so a field the
 * schema has since dropped or narrowed (a KarpenterVersion no longer offered, a setting removed)
 * cannot break the cluster that holds it. Each unknown or invalid field is dropped and reported
 * through `warn`; the rest stands. Input from users stays strict (ProfileSpec).
 */
export function parseStoredSpec(
  raw: unknown,
  warn: (field: string, reason: string) => void = () => undefined,
): ProfileSpec {
  const whole = ProfileSpec.safeParse(raw ?? {});
  if (whole.success) return whole.data;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    warn('', 'not an object; read as no fields');
    return {};
  }
  const shape = ProfileSpec.shape;
  const spec: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'nodePools') continue;
    if (!Object.hasOwn(shape, key)) {
      warn(key, 'unknown field; dropped');
      continue;
    }
    const field = shape[key as ProfileSetting].safeParse(value);
    if (field.success) {
      if (field.data !== undefined) spec[key] = field.data;
    } else warn(key, `${field.error.issues[0]?.message ?? 'invalid'}; dropped`);
  }
  const pools = (raw as { nodePools?: unknown }).nodePools;
  if (pools !== undefined) {
    if (!pools || typeof pools !== 'object' || Array.isArray(pools))
      warn('nodePools', 'not an object; dropped');
    else {
      const kept: Record<string, Record<string, unknown>> = {};
      for (const [name, pool] of Object.entries(pools)) {
        if (
          dns1123Subdomain.safeParse(name).success &&
          pool &&
          typeof pool === 'object' &&
          !Array.isArray(pool)
        )
          kept[name] = pool as Record<string, unknown>;
        else warn(`nodePools.${name}`, 'invalid NodePool name or spec; dropped');
      }
      spec.nodePools = kept;
    }
  }
  return spec;
}

/** The built-in value of each setting: DesiredState's column defaults. */
export const BUILT_IN_SETTINGS: EffectiveSettings = {
  enabled: false,
  clusterAutoscalerMode: 'KEEP',
  logLevel: 'info',
  featureGates: DEFAULT_FEATURE_GATES,
  nodeClassOverrides: {},
  karpenterVersion: null,
  driftPolicy: 'CORRECT',
};

export interface EffectiveSettings {
  enabled: boolean;
  clusterAutoscalerMode: ClusterAutoscalerMode;
  logLevel: LogLevel;
  featureGates: FeatureGates;
  nodeClassOverrides: Record<string, unknown>;
  karpenterVersion: KarpenterVersion | null;
  driftPolicy: DriftPolicy;
}

/** Who set a field: the built-in default, a profile at a revision, or the cluster's override. */
export type EffectiveSource =
  | { kind: 'default' }
  | { kind: 'override' }
  | { kind: 'profile'; profile: string; revision: number };

/** A profile as bound to one cluster: the revision the cluster is on. */
export interface BoundProfile {
  name: string;
  priority: number;
  revision: number;
  spec: ProfileSpec;
}

export interface EffectiveState {
  settings: EffectiveSettings;
  /** Sorted by name. */
  nodePools: { name: string; spec: Record<string, unknown> }[];
  /** Keyed by setting, and `nodePools.<name>` for each NodePool. */
  sources: Record<string, EffectiveSource>;
  /** Profile values this cluster cannot take, and why (never silently dropped). */
  ignored: { field: string; profile: string; reason: string }[];
}

/** Every field a spec sets, keyed as sources are (`nodePools.<name>` per NodePool). */
export function specFields(spec: ProfileSpec): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  for (const key of PROFILE_SETTINGS) if (spec[key] !== undefined) fields.set(key, spec[key]);
  for (const [name, pool] of Object.entries(spec.nodePools ?? {}))
    fields.set(`nodePools.${name}`, pool);
  return fields;
}

/** JSON with sorted keys: equal values compare equal whatever order their keys were written in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

/** Profiles in the order they apply: lower priority first (a higher one wins), then by name. */
export function applyOrder<P extends { name: string; priority: number }>(
  profiles: readonly P[],
): P[] {
  return [...profiles].sort((a, b) =>
    a.priority !== b.priority ? a.priority - b.priority : a.name < b.name ? -1 : 1,
  );
}

/**
 * The effective desired state: the built-in defaults, each bound profile in priority order (a
 * higher priority overrides a lower; same-priority profiles never disagree, see profileConflict),
 * then the cluster's own overrides. A profile value the cluster cannot take (a Cluster Autoscaler
 * mode a HOSTED cluster refuses, a Karpenter release where the fleet does not run the operand)
 * is ignored for that cluster and listed. Safety as when disabling by hand: a profile's
 * DISABLE/MIGRATE never holds where Karpenter ends up disabled — the Cluster Autoscaler stays
 * (KEEP), so leaving a profile never leaves a cluster without an autoscaler.
 */
export function composeEffectiveState(
  profiles: readonly BoundProfile[],
  overrides: ProfileSpec,
  target?: ChangeTarget,
): EffectiveState {
  const settings: EffectiveSettings = { ...BUILT_IN_SETTINGS };
  const sources: Record<string, EffectiveSource> = {};
  for (const key of PROFILE_SETTINGS) sources[key] = { kind: 'default' };
  const pools = new Map<string, Record<string, unknown>>();
  const ignored: EffectiveState['ignored'] = [];
  const layers: { spec: ProfileSpec; source: EffectiveSource; name: string }[] = [
    ...applyOrder(profiles).map((p) => ({
      spec: p.spec,
      name: p.name,
      source: { kind: 'profile', profile: p.name, revision: p.revision } as const,
    })),
    { spec: overrides, name: 'override', source: { kind: 'override' } },
  ];
  for (const { spec, source, name } of layers) {
    for (const key of PROFILE_SETTINGS) {
      const value = spec[key];
      if (value === undefined) continue;
      if (source.kind === 'profile' && target) {
        const refusal = unsupportedChange(target, { [key]: value });
        if (refusal) {
          ignored.push({ field: key, profile: name, reason: refusal.reason });
          continue;
        }
      }
      (settings as unknown as Record<string, unknown>)[key] = value;
      sources[key] = source;
    }
    for (const [pool, poolSpec] of Object.entries(spec.nodePools ?? {})) {
      pools.set(pool, poolSpec);
      sources[`nodePools.${pool}`] = source;
    }
  }
  const mode = sources.clusterAutoscalerMode;
  if (!settings.enabled && settings.clusterAutoscalerMode !== 'KEEP' && mode?.kind === 'profile') {
    ignored.push({
      field: 'clusterAutoscalerMode',
      profile: mode.profile,
      reason: `${settings.clusterAutoscalerMode} only with Karpenter enabled: the Cluster Autoscaler stays (KEEP) so the cluster is never left without an autoscaler`,
    });
    settings.clusterAutoscalerMode = 'KEEP';
    sources.clusterAutoscalerMode = { kind: 'default' };
  }
  return {
    settings,
    nodePools: [...pools.entries()]
      .map(([name, spec]) => ({ name, spec }))
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
    sources,
    ignored,
  };
}

/** Whether two effective states would give the same order (sources aside). */
export function sameEffectiveState(a: EffectiveState, b: EffectiveState): boolean {
  return (
    canonicalJson({ s: a.settings, p: a.nodePools }) ===
    canonicalJson({ s: b.settings, p: b.nodePools })
  );
}

export interface ProfileDefinition {
  name: string;
  selector: string;
  priority: number;
  spec: ProfileSpec;
}

/**
 * Why two profiles cannot both stand: the same priority, selectors some cluster could match both
 * of (today's clusters or tomorrow's: decided on the selectors, labelSelectorsOverlap), and one
 * field set to different values — composition would then depend on a tie-break nobody chose.
 * Returns the first such field (settings in their order, then NodePools by name), or undefined.
 */
export function profileConflict(a: ProfileDefinition, b: ProfileDefinition): string | undefined {
  if (a.name === b.name || a.priority !== b.priority) return undefined;
  if (!labelSelectorsOverlap(parseLabelSelector(a.selector), parseLabelSelector(b.selector)))
    return undefined;
  const theirs = specFields(b.spec);
  const fields = [...specFields(a.spec)].sort(
    ([x], [y]) => fieldRank(x) - fieldRank(y) || (x < y ? -1 : 1),
  );
  for (const [field, value] of fields)
    if (theirs.has(field) && canonicalJson(theirs.get(field)) !== canonicalJson(value))
      return field;
  return undefined;
}

const fieldRank = (field: string): number => {
  const i = PROFILE_SETTINGS.indexOf(field as ProfileSetting);
  return i < 0 ? PROFILE_SETTINGS.length : i;
};

/**
 * A field an SRE may reset on a cluster (clear its override): a setting, or `nodePools.<name>`.
 * Returns the override without it, or undefined when the cluster does not override that field.
 */
export function withoutOverride(overrides: ProfileSpec, field: string): ProfileSpec | undefined {
  if (field.startsWith('nodePools.')) {
    const name = field.slice('nodePools.'.length);
    if (!overrides.nodePools || !Object.hasOwn(overrides.nodePools, name)) return undefined;
    const nodePools = Object.fromEntries(
      Object.entries(overrides.nodePools).filter(([n]) => n !== name),
    );
    return { ...overrides, nodePools };
  }
  if (!PROFILE_SETTINGS.includes(field as ProfileSetting)) return undefined;
  if (overrides[field as ProfileSetting] === undefined) return undefined;
  const next = { ...overrides };
  delete next[field as ProfileSetting];
  return next;
}

/** Whether `field` names something a profile or override can set (for error messages). */
export const isProfileField = (field: string): boolean =>
  PROFILE_SETTINGS.includes(field as ProfileSetting) ||
  (field.startsWith('nodePools.') && dns1123Subdomain.safeParse(field.slice(10)).success);
