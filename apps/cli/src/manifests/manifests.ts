import {
  dns1123Label,
  matchesLabelSelector,
  parseLabelSelector,
  type Platform,
  type Topology,
} from '@fleet/contracts';
import {
  PROFILE_SETTINGS,
  ProfileSpec,
  StrategyDefinition,
  canonicalJson,
  profileConflict,
  unsupportedChange,
  type KarpenterSpecValidator,
  type ProfileDefinition,
} from '@fleet/desired-state';
import { parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';

/**
 * The fleet's desired state as Kubernetes-style YAML documents (docs/GITOPS.md): what
 * `kfleet apply -f` reads and `kfleet export` writes. Pure: reading files and talking to the API
 * are the command's (commands/apply.ts).
 */

export const API_VERSION = 'fleet.karpenter.sh/v1alpha1';
/** The kinds this version reads, in the order export writes them and apply applies them. */
export const KINDS = ['RolloutStrategy', 'Profile', 'ClusterOverrides'] as const;
export type Kind = (typeof KINDS)[number];

/** Where a document came from: its file and its 1-based position in it. */
export interface Origin {
  file: string;
  index: number;
}

/**
 * The annotation of a Profile document naming the rollout strategy its writes go through. An
 * annotation, not a spec field: it says how the change reaches the clusters, not what the
 * clusters run, so it is not stored with the profile, changes no plan and export cannot write it.
 */
export const STRATEGY_ANNOTATION = 'fleet.karpenter.sh/rollout-strategy';

export interface ProfileObject {
  kind: 'Profile';
  name: string;
  selector: string;
  priority: number;
  spec: ProfileSpec;
  /** The named strategy of its rollout (STRATEGY_ANNOTATION); else the apply's flags. */
  strategyName?: string;
  origin?: Origin;
}

/** A named rollout strategy as the API stores it: every default filled in, no nulls in stages. */
export interface RolloutStrategyObject {
  kind: 'RolloutStrategy';
  name: string;
  spec: StrategyDefinition;
  origin?: Origin;
}

export interface ClusterOverridesObject {
  kind: 'ClusterOverrides';
  /** The cluster's name. */
  name: string;
  spec: ProfileSpec;
  origin?: Origin;
}

export type FleetObject = RolloutStrategyObject | ProfileObject | ClusterOverridesObject;

/** One problem of one document, printed as `file: document N (Kind name): field: reason`. */
export interface ManifestError {
  origin: Origin;
  kind?: string;
  name?: string;
  field: string;
  reason: string;
}

export function formatManifestError(e: ManifestError): string {
  const what = e.kind ? ` (${e.kind}${e.name ? ` ${e.name}` : ''})` : '';
  return `${e.origin.file}: document ${e.origin.index}${what}: ${e.field ? `${e.field}: ` : ''}${e.reason}`;
}

const Metadata = z.object({ name: dns1123Label }).strict();
/** Annotations are free-form, as in Kubernetes, but a fleet.karpenter.sh/ key must be one we read. */
const ProfileMetadata = z
  .object({
    name: dns1123Label,
    annotations: z
      .record(z.string(), z.string())
      .superRefine((annotations, ctx) => {
        for (const [key, value] of Object.entries(annotations)) {
          if (key === STRATEGY_ANNOTATION) {
            const name = dns1123Label.safeParse(value);
            if (!name.success)
              ctx.addIssue({
                code: 'custom',
                path: [key],
                message: `must name a rollout strategy: ${name.error.issues[0]!.message}`,
              });
          } else if (key.startsWith('fleet.karpenter.sh/'))
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: `unknown fleet annotation; the one read is ${STRATEGY_ANNOTATION}`,
            });
        }
      })
      .optional(),
  })
  .strict();
const Header = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.enum(KINDS),
  metadata: z.unknown(),
  spec: z.unknown(),
});
const ProfileDocumentSpec = ProfileSpec.extend({
  /** A Kubernetes label selector; "" binds every cluster (written explicitly, never a default). */
  selector: z.string().max(4096),
  priority: z.number().int().min(0).max(1000),
}).strict();
const ProfileDocument = z
  .object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Profile'),
    metadata: ProfileMetadata,
    spec: ProfileDocumentSpec,
  })
  .strict();
const ClusterOverridesDocument = z
  .object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('ClusterOverrides'),
    metadata: Metadata,
    spec: ProfileSpec,
  })
  .strict();

/** A strategy's fields, in the order export writes them. */
const STRATEGY_FIELDS = [
  'stages',
  'maxFailures',
  'waveTimeoutSeconds',
  'maxNodeClaimLaunchFailures',
  'maxPendingPodSeconds',
] as const;

/**
 * A definition as the API returns it (stages carry null for the share they do not use) or as a
 * document gives it (defaults left out), in one form: parsed by the API's schema, which fills the
 * defaults, and rebuilt in a fixed key order. The plan compares, and export prints, this form.
 */
export function canonicalStrategy(definition: unknown): StrategyDefinition {
  const d = StrategyDefinition.parse(definition);
  return {
    stages: d.stages.map((s) => ({
      ...(s.selector != null ? { selector: s.selector } : {}),
      ...(s.percent != null ? { percent: s.percent } : {}),
      ...(s.count != null ? { count: s.count } : {}),
      minHealthySeconds: s.minHealthySeconds,
      pauseSeconds: s.pauseSeconds,
      approval: s.approval,
    })),
    maxFailures: d.maxFailures,
    waveTimeoutSeconds: d.waveTimeoutSeconds,
    maxNodeClaimLaunchFailures: d.maxNodeClaimLaunchFailures,
    maxPendingPodSeconds: d.maxPendingPodSeconds,
  };
}

/**
 * The API's own definition schema (stages, maxFailures, waveTimeoutSeconds, the Karpenter gates),
 * strict at the top as at every stage, so a misspelt field is refused rather than dropped.
 */
const RolloutStrategyDocument = z
  .object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('RolloutStrategy'),
    metadata: Metadata,
    spec: z
      .record(z.string(), z.unknown())
      .superRefine((spec, ctx) => {
        for (const key of Object.keys(spec))
          if (!STRATEGY_FIELDS.includes(key as (typeof STRATEGY_FIELDS)[number]))
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: `unknown field; a strategy has ${STRATEGY_FIELDS.join(', ')}`,
            });
      })
      .pipe(StrategyDefinition),
  })
  .strict();

const issuePath = (path: readonly PropertyKey[]): string => path.map(String).join('.');

/**
 * Every document of one file's text, each checked for its shape (the API's own zod schemas:
 * ProfileSpec, dns1123Label, priority 0–1000, a parseable selector). Returns the objects and the
 * errors; empty documents (a trailing `---`) are skipped.
 */
export function parseManifests(
  file: string,
  text: string,
): { objects: FleetObject[]; errors: ManifestError[] } {
  const objects: FleetObject[] = [];
  const errors: ManifestError[] = [];
  const docs = parseAllDocuments(text);
  let index = 0;
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    index += 1;
    const origin = { file, index };
    if (doc.errors.length) {
      errors.push({ origin, field: '', reason: `not YAML: ${doc.errors[0]!.message}` });
      continue;
    }
    const value = doc.toJS() as unknown;
    if (value == null) continue;
    const header = Header.safeParse(value);
    const name = (value as { metadata?: { name?: unknown } }).metadata?.name;
    const named = typeof name === 'string' ? name : undefined;
    if (!header.success) {
      const issue = header.error.issues[0]!;
      errors.push({
        origin,
        field: issuePath(issue.path) || '',
        reason:
          issue.path[0] === 'kind'
            ? `must be one of ${KINDS.join(', ')}`
            : issue.path[0] === 'apiVersion'
              ? `must be ${API_VERSION}`
              : issue.message,
      });
      continue;
    }
    const kind = header.data.kind;
    const parsed =
      kind === 'RolloutStrategy'
        ? RolloutStrategyDocument.safeParse(value)
        : kind === 'Profile'
          ? ProfileDocument.safeParse(value)
          : ClusterOverridesDocument.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        errors.push({
          origin,
          kind,
          ...(named ? { name: named } : {}),
          field: issuePath(issue.path),
          reason: issue.message,
        });
      continue;
    }
    if (parsed.data.kind === 'RolloutStrategy') {
      objects.push({
        kind: 'RolloutStrategy',
        name: parsed.data.metadata.name,
        spec: canonicalStrategy(parsed.data.spec),
        origin,
      });
    } else if (parsed.data.kind === 'Profile') {
      const { selector, priority, ...spec } = parsed.data.spec;
      const strategyName = parsed.data.metadata.annotations?.[STRATEGY_ANNOTATION];
      const selectorError = checkSelector(selector);
      if (selectorError) {
        errors.push({
          origin,
          kind,
          name: parsed.data.metadata.name,
          field: 'spec.selector',
          reason: selectorError,
        });
        continue;
      }
      objects.push({
        kind: 'Profile',
        name: parsed.data.metadata.name,
        selector,
        priority,
        spec,
        ...(strategyName ? { strategyName } : {}),
        origin,
      });
    } else
      objects.push({
        kind: 'ClusterOverrides',
        name: parsed.data.metadata.name,
        spec: parsed.data.spec,
        origin,
      });
  }
  return { objects, errors };
}

function checkSelector(selector: string): string | undefined {
  if (selector !== '' && selector.trim() === '')
    return 'must not be blank; "" selects every cluster';
  try {
    parseLabelSelector(selector);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** What apply needs to know of a live cluster to check its overrides. */
export interface LiveCluster {
  id: string;
  name: string;
  platform: Platform;
  topology: Topology;
  managementCluster?: string | null;
  labels: Record<string, string>;
  overrides: ProfileSpec;
  generation: number;
}

export interface LiveStrategy {
  name: string;
  spec: StrategyDefinition;
}

export interface LiveProfile {
  name: string;
  selector: string;
  priority: number;
  spec: ProfileSpec;
  deleting: boolean;
}

const errorOf = (o: FleetObject, field: string, reason: string): ManifestError => ({
  origin: o.origin ?? { file: '(input)', index: 0 },
  kind: o.kind,
  name: o.name,
  field,
  reason,
});

/**
 * The checks that need more than one document, the CRDs or the fleet, as the API makes them:
 * one object per kind and name; every NodePool against the real NodePool CRD; NodeClass
 * overrides against the NodeClass of the cluster (ClusterOverrides) or of every platform and
 * topology among the clusters the selector matches (Profile; AWS/STANDALONE when none); what a
 * cluster's platform refuses; a cluster that exists; and same-priority conflicts among the
 * profiles the fleet will hold afterwards. Everything here is checked before anything is sent.
 */
export function validateObjects(
  objects: readonly FleetObject[],
  validator: KarpenterSpecValidator,
  fleet: {
    clusters: readonly LiveCluster[];
    profiles: readonly LiveProfile[];
    strategies: readonly LiveStrategy[];
    prune: boolean;
  },
): ManifestError[] {
  const errors: ManifestError[] = [];
  const seen = new Map<string, FleetObject>();
  for (const o of objects) {
    const key = `${o.kind}/${o.name}`;
    const first = seen.get(key);
    if (first) {
      errors.push(
        errorOf(
          o,
          'metadata.name',
          `${o.kind} ${o.name} is also declared in ${first.origin?.file} document ${first.origin?.index}`,
        ),
      );
      continue;
    }
    seen.set(key, o);
    // A strategy's rules are all its own document's (checked when parsed).
    if (o.kind === 'RolloutStrategy') continue;
    for (const [name, pool] of Object.entries(o.spec.nodePools ?? {})) {
      const v = validator.validateNodePool(name, pool)[0];
      if (v)
        errors.push(errorOf(o, `spec.nodePools.${name}${v.field ? `.${v.field}` : ''}`, v.reason));
    }
    const targets =
      o.kind === 'ClusterOverrides'
        ? fleet.clusters.filter((c) => c.name === o.name)
        : fleet.clusters.filter((c) =>
            matchesLabelSelector(parseLabelSelector(o.selector), c.labels),
          );
    if (o.kind === 'ClusterOverrides') {
      const cluster = targets[0];
      if (!cluster) {
        errors.push(
          errorOf(o, 'metadata.name', `no cluster named ${o.name} (within your token's scope)`),
        );
        continue;
      }
      const refusal = unsupportedChange(cluster, {
        ...o.spec,
        karpenterVersion: o.spec.karpenterVersion ?? undefined,
      });
      if (refusal) errors.push(errorOf(o, `spec.${refusal.field}`, refusal.reason));
    }
    if (o.spec.nodeClassOverrides) {
      const pairs = new Map<string, { platform: Platform; topology: Topology }>();
      for (const c of targets)
        pairs.set(`${c.platform}/${c.topology}`, { platform: c.platform, topology: c.topology });
      if (!pairs.size) pairs.set('AWS/STANDALONE', { platform: 'AWS', topology: 'STANDALONE' });
      for (const { platform, topology } of pairs.values()) {
        const v = validator.validateNodeClassOverrides(
          platform,
          o.spec.nodeClassOverrides,
          topology,
        )[0];
        if (v) {
          errors.push(
            errorOf(
              o,
              `spec.nodeClassOverrides${v.field ? `.${v.field}` : ''}`,
              `${v.reason} (for ${platform}/${topology} clusters)`,
            ),
          );
          break;
        }
      }
    }
  }
  // A profile's strategy must exist once the strategies are written, and go on existing until the
  // profiles are: strategies are created before profiles and pruned after them.
  const strategies = new Set(
    objects.filter((o) => o.kind === 'RolloutStrategy').map((o) => o.name),
  );
  const strategiesPruned = fleet.prune && strategies.size > 0;
  for (const s of fleet.strategies) if (!strategiesPruned) strategies.add(s.name);
  for (const o of objects)
    if (o.kind === 'Profile' && o.strategyName && !strategies.has(o.strategyName))
      errors.push(
        errorOf(
          o,
          `metadata.annotations.${STRATEGY_ANNOTATION}`,
          fleet.strategies.some((s) => s.name === o.strategyName)
            ? `rollout strategy ${o.strategyName} would be deleted by --prune (no document declares it)`
            : `no rollout strategy named ${o.strategyName} in the fleet or the files`,
        ),
      );
  // Conflicts among the profiles as they will stand: the files' ones, and the live ones the files
  // do not name (unless --prune deletes them).
  const declared = objects.filter((o): o is ProfileObject => o.kind === 'Profile');
  const names = new Set(declared.map((p) => p.name));
  const kept: ProfileDefinition[] = fleet.prune
    ? []
    : fleet.profiles.filter((p) => !p.deleting && !names.has(p.name));
  for (const [i, p] of declared.entries()) {
    for (const other of [...declared.slice(i + 1), ...kept]) {
      const field = profileConflict(p, other);
      if (field)
        errors.push(
          errorOf(
            p,
            `spec.${field}`,
            `profile ${p.name} and profile ${other.name} both have priority ${p.priority}, selectors a cluster can match both of ("${p.selector}", "${other.selector}"), and set ${field} differently`,
          ),
        );
    }
  }
  return errors;
}

/** Keys sorted at every depth (arrays keep their order): the same value always prints the same. */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]),
    );
  return value;
}

/** A spec's fields in the order docs/PROFILES.md lists them, each value with sorted keys. */
function orderedSpec(spec: ProfileSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of PROFILE_SETTINGS) if (spec[key] !== undefined) out[key] = sortedKeys(spec[key]);
  // Kept when empty too: the API compares specs as stored, so dropping `nodePools: {}` here
  // would make every apply of an export an update.
  if (spec.nodePools !== undefined) out.nodePools = sortedKeys(spec.nodePools);
  return out;
}

/** The document of one object, keys in a fixed order. */
export function toDocument(o: FleetObject): Record<string, unknown> {
  if (o.kind === 'RolloutStrategy') {
    // Off gates (null) are left out, as a hand-written document would: they read back as off.
    const spec: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(canonicalStrategy(o.spec))) if (v !== null) spec[k] = v;
    return { apiVersion: API_VERSION, kind: o.kind, metadata: { name: o.name }, spec };
  }
  return {
    apiVersion: API_VERSION,
    kind: o.kind,
    metadata: {
      name: o.name,
      ...(o.kind === 'Profile' && o.strategyName
        ? { annotations: { [STRATEGY_ANNOTATION]: o.strategyName } }
        : {}),
    },
    spec:
      o.kind === 'Profile'
        ? { selector: o.selector, priority: o.priority, ...orderedSpec(o.spec) }
        : orderedSpec(o.spec),
  };
}

/** Objects in export's order: by kind (KINDS), then by name. */
export function sortObjects<T extends FleetObject>(objects: readonly T[]): T[] {
  return [...objects].sort(
    (a, b) =>
      KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}

/** One document as YAML text (no `---`). */
export const renderDocument = (o: FleetObject): string =>
  stringify(toDocument(o), { lineWidth: 0, aliasDuplicateObjects: false });

/** A multi-document stream of every object, in export's order. */
export const renderStream = (objects: readonly FleetObject[]): string =>
  sortObjects(objects)
    .map((o) => `---\n${renderDocument(o)}`)
    .join('');

/** Where `kfleet export -o <dir>` puts an object, relative to the directory. */
export const exportPath = (o: FleetObject): string =>
  `${o.kind === 'RolloutStrategy' ? 'strategies' : o.kind === 'Profile' ? 'profiles' : 'clusters'}/${o.name}.yaml`;

/** Equal as the API would store them (key order aside). */
export const sameValue = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);
