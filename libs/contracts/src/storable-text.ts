/**
 * PostgreSQL's text and jsonb hold neither NUL (U+0000: "unsupported Unicode escape sequence")
 * nor unpaired UTF-16 surrogates (no UTF-8 encoding exists for them), though JSON and GraphQL
 * carry both. Input that would reach either is refused at the edge, naming where, instead of
 * failing inside a transaction: an internal error for a GraphQL mutation, or a report the API
 * accepted that the worker could never store (retried, then dead-lettered).
 */
// eslint-disable-next-line no-control-regex -- finding NUL is the point
const NUL = /\u0000/;
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function unstorableTextReason(text: string): string | undefined {
  if (NUL.test(text)) return 'must not contain the NUL character (U+0000)';
  if (UNPAIRED_SURROGATE.test(text))
    return 'must be valid Unicode (it contains an unpaired UTF-16 surrogate)';
  return undefined;
}

export interface UnstorableText {
  /** Keys and indexes from the root to the string (a key itself when the key is the culprit). */
  path: (string | number)[];
  reason: string;
}

/**
 * The first string, or object key, of a JSON value that PostgreSQL cannot store; or a
 * `__proto__` key (what JSON.parse makes an own property), which validation would silently drop
 * and the caller would believe stored.
 */
export function findUnstorableText(
  value: unknown,
  path: (string | number)[] = [],
): UnstorableText | undefined {
  if (typeof value === 'string') {
    const reason = unstorableTextReason(value);
    return reason ? { path, reason } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const reason =
        key === '__proto__'
          ? 'cannot be a key: zod and every plain object drop "__proto__" without a word'
          : unstorableTextReason(key);
      if (reason) return { path: [...path, key], reason: `as a key, ${reason}` };
      const found = findUnstorableText(child, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Whether `findUnstorableText` could find anything in what JSON.parse makes of `json`, read off the
 * text without walking the value (issue 48, target 1: the walk was 7% of the API's time a report).
 * Valid JSON carries a control character only escaped (`\u0000`), a lone surrogate only escaped
 * or as bytes that UTF-8 decoding already replaced with U+FFFD, and a `__proto__` key spelled out
 * or with escapes in it: so JSON text with no `\u` escape and no `__proto__` holds none of them.
 * False means certainly nothing; true means walk the value to find it.
 */
export const mayHoldUnstorableText = (json: string): boolean =>
  json.includes('\\u') || json.includes('__proto__');
