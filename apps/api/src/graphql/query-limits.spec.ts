import { describe, expect, it } from '@jest/globals';
import { buildSchema, GraphQLError, parse, specifiedRules, validate } from 'graphql';
import {
  keepQueryLimitCode,
  selectionCounts,
  selectionLimitErrors,
  selectionLimitsRule,
} from './query-limits.js';

const schema = buildSchema(`
  type Viewer { name: String role: String }
  type Query { viewer: Viewer }
`);
const limits = { maxFields: 10, maxAliases: 3 };
const aliases = (n: number) =>
  Array.from({ length: n }, (_, i) => `a${i}: viewer { name }`).join(' ');

describe('selection limits (issue 48, target 6)', () => {
  it('counts fields and aliases through fragments and inline fragments, where each is spread', () => {
    const counts = selectionCounts(
      parse(`
        query { viewer { name } ...Two ... on Query { x: viewer { ...Name } } }
        fragment Two on Query { a: viewer { ...Name } b: viewer { ...Name } }
        fragment Name on Viewer { n: name role }`),
    );
    // viewer name | Two: a b + 2×(n role) | inline: x + (n role)
    expect(counts).toEqual({ fields: 2 + 2 + 4 + 1 + 2, aliases: 2 + 2 + 1 + 1 });
  });

  it('counts a fragment spread twice, thirty deep, without walking 2^30 spreads', () => {
    const bomb = parse(
      `query { ...F0 } ${Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ')} fragment F30 on Query { v: viewer { name } }`,
    );
    expect(selectionCounts(bomb)).toEqual({ fields: 2 ** 31, aliases: 2 ** 30 });
    expect(selectionLimitErrors(bomb, limits).map((e) => e.message)).toEqual([
      `query selects ${2 ** 31} fields; the limit is 10 (fragments count where they are spread)`,
      `query uses ${2 ** 30} aliases; the limit is 3 (fragments count where they are spread)`,
    ]);
  });

  it('counts unused fragments and stops at a cycle (both refused by validation after)', () => {
    expect(
      selectionCounts(
        parse(`query { viewer { name } } fragment U on Query { u: viewer { name } }`),
      ),
    ).toEqual({ fields: 4, aliases: 1 });
    expect(
      selectionCounts(
        parse(
          `query { ...A } fragment A on Query { viewer { name } ...B } fragment B on Query { ...A }`,
        ),
      ),
    ).toEqual({ fields: 2, aliases: 0 });
  });

  it('refuses at the limit plus one, naming the limit, and keeps a document at the limit', () => {
    expect(selectionLimitErrors(parse(`{ ${aliases(3)} }`), limits)).toEqual([]);
    const [error] = selectionLimitErrors(parse(`{ ${aliases(4)} }`), limits);
    expect(error?.message).toBe(
      'query uses 4 aliases; the limit is 3 (fragments count where they are spread)',
    );
    expect(error?.extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      aliases: 4,
      maxAliases: 3,
    });
    expect(selectionLimitErrors(parse(`{ viewer { ${'name '.repeat(9)} } }`), limits)).toEqual([]);
    expect(
      selectionLimitErrors(parse(`{ viewer { ${'name '.repeat(10)} } }`), limits)[0]?.extensions,
    ).toMatchObject({ fields: 11, maxFields: 10 });
  });

  it('as a validation rule, leaves nothing of a refused document to the other rules', () => {
    const rules = [...specifiedRules, selectionLimitsRule({ maxFields: 1000, maxAliases: 100 })];
    // Over the limit, with a field the schema lacks: only the limit is reported.
    const flood = parse(`{ nope ${aliases(3000)} }`);
    expect(validate(schema, flood, rules).map((e) => e.message)).toEqual([
      'query selects 6001 fields; the limit is 1000 (fragments count where they are spread)',
      'query uses 3000 aliases; the limit is 100 (fragments count where they are spread)',
    ]);
    // Within the limits the other rules still run.
    expect(
      validate(schema, parse(`{ nope ${aliases(100)} }`), rules).map((e) => e.message),
    ).toEqual(['Cannot query field "nope" on type "Query".']);
    expect(validate(schema, parse(`{ ${aliases(100)} }`), rules)).toEqual([]);
  });

  it("keeps QUERY_TOO_COMPLEX through Apollo's relabelling of validation errors", () => {
    const [refusal] = selectionLimitErrors(parse(`{ ${aliases(4)} }`), limits);
    // What Apollo's ValidationError makes of a rule's error: its own code, the rule's as original.
    const relabelled = new GraphQLError(refusal!.message, {
      originalError: refusal,
      extensions: { ...refusal!.extensions, code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    expect(keepQueryLimitCode(relabelled.toJSON(), relabelled).extensions?.code).toBe(
      'QUERY_TOO_COMPLEX',
    );
    const other = new GraphQLError('Cannot query field', {
      originalError: new GraphQLError('Cannot query field'),
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    expect(keepQueryLimitCode(other.toJSON(), other).extensions?.code).toBe(
      'GRAPHQL_VALIDATION_FAILED',
    );
  });
});
