import { isMap, isNode, isScalar, isSeq, parseDocument, type Node } from 'yaml';

/**
 * The API names a refused NodePool field as `input.spec.template.spec.requirements[0].operator`;
 * the editor holds the spec alone. Returns the path inside the spec, or null when the error is
 * about something else (the name, the generation).
 */
export function specPath(field: string | undefined): (string | number)[] | null {
  if (!field) return null;
  const match = /^input\.spec(.*)$/.exec(field);
  if (!match) return null;
  const path: (string | number)[] = [];
  for (const part of match[1]!.matchAll(/\.([^.[\]]+)|\[(\d+)\]/g)) {
    path.push(part[1] !== undefined ? part[1] : Number(part[2]));
  }
  return path;
}

/**
 * The 1-based line of the deepest node of `path` present in the text (YAML, or JSON, which YAML
 * parses with positions too), so an error points at the offending line even when the field itself
 * is missing (then its parent's line).
 */
export function lineOf(text: string, path: (string | number)[]): number | null {
  const doc = parseDocument(text);
  if (doc.errors.length) return null;
  let node: unknown = doc.contents;
  let found: Node | null = doc.contents;
  for (const key of path) {
    // A field's line is its key's line (a nested map only starts on the next one).
    let at: unknown;
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
      at = pair?.key;
      next = pair?.value;
    } else if (isSeq(node) && typeof key === 'number') {
      at = next = node.items[key];
    }
    if (!isNode(at)) break;
    found = at;
    node = next;
  }
  const offset = found?.range?.[0];
  if (offset === undefined) return null;
  return text.slice(0, offset).split('\n').length;
}
