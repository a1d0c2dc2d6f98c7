/**
 * Kubernetes label selectors in their string form (`env=prod,tier!=db,region in (a,b),!legacy`),
 * parsed with the same grammar and limits as k8s.io/apimachinery/pkg/labels, and matched either
 * in memory or by the fleet's SQL (see labelSelectorSql in the API).
 */
export type LabelRequirement =
  | { key: string; operator: 'In' | 'NotIn'; values: string[] }
  | { key: string; operator: 'Exists' | 'DoesNotExist' };

export class LabelSelectorError extends Error {
  override readonly name = 'LabelSelectorError';
}

const KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  if (!KEY.test(key) || name.length > 63 || key.length > 253 + 1 + 63) {
    throw new LabelSelectorError(`"${key}" is not a valid label key`);
  }
  return key;
}

function checkValue(value: string): string {
  if (value.length > 63 || !VALUE.test(value)) {
    throw new LabelSelectorError(`"${value}" is not a valid label value`);
  }
  return value;
}

/** Splits on commas that are not inside a value list's parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const ch = selector[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
    if (depth < 0 || depth > 1) throw new LabelSelectorError('unbalanced parentheses');
  }
  if (depth !== 0) throw new LabelSelectorError('unbalanced parentheses');
  terms.push(selector.slice(start));
  return terms.map((t) => t.trim());
}

export function parseLabelSelector(selector: string): LabelRequirement[] {
  if (selector.length > 4096) throw new LabelSelectorError('must be no more than 4096 characters');
  if (selector.trim() === '') return [];
  return splitTerms(selector).map((term): LabelRequirement => {
    if (term === '') throw new LabelSelectorError('empty requirement (stray comma)');
    const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
    if (set) {
      const values = set[3]!.split(',').map((v) => checkValue(v.trim()));
      if (values.length === 0 || (values.length === 1 && values[0] === '')) {
        throw new LabelSelectorError(`"${term}": a set needs at least one value`);
      }
      return {
        key: checkKey(set[1]!),
        operator: set[2] === 'in' ? 'In' : 'NotIn',
        values: [...new Set(values)].sort(),
      };
    }
    const eq = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
    if (eq) {
      return {
        key: checkKey(eq[1]!),
        operator: eq[2] === '!=' ? 'NotIn' : 'In',
        values: [checkValue(eq[3]!)],
      };
    }
    const not = /^!\s*(\S+)$/.exec(term);
    if (not) return { key: checkKey(not[1]!), operator: 'DoesNotExist' };
    if (/^\S+$/.test(term)) return { key: checkKey(term), operator: 'Exists' };
    throw new LabelSelectorError(`"${term}" is not a label requirement`);
  });
}

export function matchesLabelSelector(
  requirements: readonly LabelRequirement[],
  labels: Record<string, string>,
): boolean {
  return requirements.every((r) => {
    const has = Object.hasOwn(labels, r.key);
    switch (r.operator) {
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      case 'In':
        return has && r.values.includes(labels[r.key]!);
      case 'NotIn':
        return !has || !r.values.includes(labels[r.key]!);
    }
  });
}

/** Whether `inner` alone guarantees `outer`: every label set `inner` matches also meets it. */
function implies(inner: LabelRequirement, outer: LabelRequirement): boolean {
  if (inner.key !== outer.key) return false;
  switch (outer.operator) {
    case 'Exists':
      return inner.operator === 'Exists' || inner.operator === 'In';
    case 'DoesNotExist':
      return inner.operator === 'DoesNotExist';
    case 'In':
      return inner.operator === 'In' && inner.values.every((v) => outer.values.includes(v));
    case 'NotIn':
      return (
        inner.operator === 'DoesNotExist' ||
        (inner.operator === 'NotIn' && outer.values.every((v) => inner.values.includes(v))) ||
        (inner.operator === 'In' && inner.values.every((v) => !outer.values.includes(v)))
      );
  }
}

/**
 * Whether every label set `inner` matches is also matched by `outer` (a scope within a scope),
 * decided requirement by requirement: each of `outer`'s must be implied by one of `inner`'s.
 * Sound, not complete: `a in (x),a in (y)` (matches nothing) is not recognised as within
 * everything, which only ever refuses, never admits.
 */
export function labelSelectorWithin(
  inner: readonly LabelRequirement[],
  outer: readonly LabelRequirement[],
): boolean {
  return outer.every((o) => inner.some((i) => implies(i, o)));
}

/**
 * Whether some label set could match both selectors (profiles' overlap, docs/PROFILES.md). Decided
 * key by key over the requirements of both: a key is satisfiable when it may be absent (nothing
 * needs it) or some value passes every In and no NotIn. Exact for this grammar, since keys are
 * independent: the answer covers clusters registered tomorrow, not only today's.
 */
export function labelSelectorsOverlap(
  a: readonly LabelRequirement[],
  b: readonly LabelRequirement[],
): boolean {
  const byKey = new Map<string, LabelRequirement[]>();
  for (const r of [...a, ...b]) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  for (const reqs of byKey.values()) {
    const mustExist = reqs.some((r) => r.operator === 'Exists' || r.operator === 'In');
    const mustNotExist = reqs.some((r) => r.operator === 'DoesNotExist');
    if (mustExist && mustNotExist) return false;
    if (!mustExist) continue; // absent satisfies NotIn and DoesNotExist alike
    let allowed: string[] | null = null; // null: any value
    for (const r of reqs)
      if (r.operator === 'In')
        allowed = allowed === null ? [...r.values] : allowed.filter((v) => r.values.includes(v));
    const excluded = reqs.flatMap((r) => (r.operator === 'NotIn' ? r.values : []));
    // Any value: the label values are infinite, so a finite exclusion list always leaves one.
    if (allowed !== null && allowed.every((v) => excluded.includes(v))) return false;
  }
  return true;
}
