import { describe, expect, it } from '@jest/globals';
import { parse } from 'graphql';
import { unstorableInputErrors } from './storable-input.js';

const fields = (query: string, variables?: Record<string, unknown>) =>
  unstorableInputErrors(parse(query), variables).map((e) => e.extensions.field);

describe('unstorableInputErrors', () => {
  it('names the variable path of NUL, unpaired surrogates and __proto__ keys', () => {
    expect(
      fields(
        'mutation($id: ID!, $reason: String) { abortRollout(id: $id, reason: $reason) { id } }',
        {
          id: 'x',
          reason: 'because\ud800',
        },
      ),
    ).toEqual(['reason']);
    expect(
      fields('mutation($input: SetKarpenterInput!) { a(input: $input) }', {
        input: {
          featureGates: JSON.parse('{"__proto__": true}') as unknown,
          operandImage: 'a\u0000',
        },
      }),
    ).toEqual(['input.featureGates.__proto__']);
    expect(fields('{ a(x: [{ y: 1 }]) }', { list: ['ok', 'no\u0000'] })).toEqual(['list[1]']);
  });

  it('names the argument path of literals', () => {
    expect(fields('mutation { abortRollout(id: "x", reason: "a\\u0000b") { id } }')).toEqual([
      'reason',
    ]);
    expect(fields('mutation { a(input: { labels: { team: "\\u0000" } }) }')).toEqual([
      'input.labels.team',
    ]);
    expect(fields('mutation { a(input: { labels: { __proto__: "x" } }) }')).toEqual([
      'input.labels.__proto__',
    ]);
  });

  it('lets everything else through, astral characters and control characters included', () => {
    expect(
      fields('mutation($r: String) { a(r: $r, s: "😀 \\t ümlaut") }', { r: '😀\u0001\u202e' }),
    ).toEqual([]);
  });
});
