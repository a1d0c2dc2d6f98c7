import { badRequest } from './errors.js';

export type LabelRequirement =
  { key: string; op: 'in' | 'notin'; values: string[] } | { key: string; op: 'exists' | '!' };

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** Splits on commas outside parentheses: `a in (x,y),b!=c`. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter((x) => x.length > 0);
}

export function parseLabelSelector(s: string | null | undefined): LabelRequirement[] {
  if (!s) return [];
  return splitTop(s).map((term) => {
    let m = /^!\s*([^\s=!]+)$/.exec(term);
    if (m) return { key: m[1]!, op: '!' as const };
    m = /^([^\s=!]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    if (m)
      return {
        key: m[1]!,
        op: m[2] as 'in' | 'notin',
        values: m[3]!.split(',').map((v) => v.trim()),
      };
    m = /^([^\s=!]+)\s*(==|=|!=)\s*([^\s=!]*)$/.exec(term);
    if (m)
      return {
        key: m[1]!,
        op: m[2] === '!=' ? ('notin' as const) : ('in' as const),
        values: [m[3]!],
      };
    m = /^([^\s=!(),]+)$/.exec(term);
    if (m) return { key: m[1]!, op: 'exists' as const };
    throw badRequest(
      `unable to parse requirement: found '${term}', expected: in, notin, =, ==, !=, gt, lt`,
    );
  });
}

export function matchesLabels(
  reqs: LabelRequirement[],
  labels: Record<string, string> | undefined,
): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case 'in':
        return has && r.values.includes(l[r.key]!);
      case 'notin':
        return !has || !r.values.includes(l[r.key]!);
    }
  });
}

export function parseFieldSelector(s: string | null | undefined): FieldRequirement[] {
  if (!s) return [];
  return splitTop(s).map((term) => {
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${s}'; can't understand '${term}'`);
    return { field: m[1]!, op: m[2] === '!=' ? '!=' : '=', value: m[3]! };
  });
}

/** A metav1.LabelSelector object (matchLabels, matchExpressions) as requirements. */
export function labelSelectorRequirements(selector: unknown): LabelRequirement[] {
  const sel = (selector ?? {}) as {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
  };
  const reqs: LabelRequirement[] = Object.entries(sel.matchLabels ?? {}).map(([key, v]) => ({
    key,
    op: 'in' as const,
    values: [v],
  }));
  for (const e of sel.matchExpressions ?? []) {
    if (e.operator === 'In' || e.operator === 'NotIn')
      reqs.push({ key: e.key, op: e.operator === 'In' ? 'in' : 'notin', values: e.values ?? [] });
    else if (e.operator === 'Exists') reqs.push({ key: e.key, op: 'exists' });
    else if (e.operator === 'DoesNotExist') reqs.push({ key: e.key, op: '!' });
    else throw badRequest(`"${e.operator}" is not a valid label selector operator`);
  }
  return reqs;
}
