import { describe, expect, it } from '@jest/globals';
import {
  LabelSelectorError,
  labelSelectorWithin,
  labelSelectorsOverlap,
  matchesLabelSelector,
  parseLabelSelector,
} from './label-selector.js';

describe('parseLabelSelector', () => {
  it('parses every operator of the Kubernetes grammar', () => {
    expect(
      parseLabelSelector(
        'env=prod, tier!=db,region in (us-east-1, eu-west-1),zone notin (a),gpu,!legacy,x==y',
      ),
    ).toEqual([
      { key: 'env', operator: 'In', values: ['prod'] },
      { key: 'tier', operator: 'NotIn', values: ['db'] },
      { key: 'region', operator: 'In', values: ['eu-west-1', 'us-east-1'] },
      { key: 'zone', operator: 'NotIn', values: ['a'] },
      { key: 'gpu', operator: 'Exists' },
      { key: 'legacy', operator: 'DoesNotExist' },
      { key: 'x', operator: 'In', values: ['y'] },
    ]);
  });

  it('accepts prefixed keys and the empty selector', () => {
    expect(parseLabelSelector('fleet.example.com/team=core')).toEqual([
      { key: 'fleet.example.com/team', operator: 'In', values: ['core'] },
    ]);
    expect(parseLabelSelector('  ')).toEqual([]);
  });

  it.each([
    ['env=prod,', /stray comma/],
    ['region in (a', /unbalanced/],
    ['region in ()', /at least one value/],
    ['Bad Key=1', /not a label requirement|not a valid label key/],
    ['env=' + 'x'.repeat(64), /not a valid label value/],
    ['-env=prod', /not a valid label key/],
  ])('rejects %s', (selector, message) => {
    expect(() => parseLabelSelector(selector)).toThrow(LabelSelectorError);
    expect(() => parseLabelSelector(selector)).toThrow(message);
  });
});

describe('matchesLabelSelector', () => {
  const labels = { env: 'prod', region: 'us-east-1' };
  it.each([
    ['env=prod', true],
    ['env=staging', false],
    ['env!=staging', true],
    ['missing!=x', true],
    ['region in (us-east-1,eu-west-1)', true],
    ['region notin (us-east-1)', false],
    ['env', true],
    ['!env', false],
    ['!gpu', true],
    ['env=prod,gpu', false],
  ])('%s → %s', (selector, expected) => {
    expect(matchesLabelSelector(parseLabelSelector(selector), labels)).toBe(expected);
  });
});

describe('labelSelectorWithin', () => {
  const within = (inner: string, outer: string) =>
    labelSelectorWithin(parseLabelSelector(inner), parseLabelSelector(outer));

  it('admits a selector that repeats or narrows every requirement of the outer one', () => {
    expect(within('team=a', 'team=a')).toBe(true);
    expect(within('team=a,env=prod', 'team=a')).toBe(true);
    expect(within('team in (a)', 'team in (a,b)')).toBe(true);
    expect(within('team=a', 'team')).toBe(true);
    expect(within('team=a', 'team!=b')).toBe(true);
    expect(within('team notin (b,c)', 'team!=b')).toBe(true);
    expect(within('!legacy', 'legacy notin (x)')).toBe(true);
    expect(within('anything', '')).toBe(true);
  });

  it('refuses a selector that widens, drops or contradicts a requirement', () => {
    expect(within('', 'team=a')).toBe(false);
    expect(within('env=prod', 'team=a')).toBe(false);
    expect(within('team in (a,b)', 'team=a')).toBe(false);
    expect(within('team', 'team=a')).toBe(false);
    expect(within('team!=b', 'team=a')).toBe(false);
    expect(within('team=b', 'team!=b')).toBe(false);
    expect(within('team', '!team')).toBe(false);
  });
});

describe('labelSelectorsOverlap', () => {
  const overlap = (a: string, b: string) =>
    labelSelectorsOverlap(parseLabelSelector(a), parseLabelSelector(b));

  it('different keys, or no requirement at all, can meet on one cluster', () => {
    expect(overlap('env=prod', 'region=us-east-1')).toBe(true);
    expect(overlap('', 'env=prod')).toBe(true);
    expect(overlap('env=prod', 'env in (prod,staging)')).toBe(true);
    expect(overlap('env!=prod', 'tier!=db')).toBe(true);
    expect(overlap('env', 'env notin (prod,staging)')).toBe(true);
  });

  it('contradictions on one key never meet', () => {
    expect(overlap('env=prod', 'env=staging')).toBe(false);
    expect(overlap('env in (a,b)', 'env in (c)')).toBe(false);
    expect(overlap('env=prod', 'env!=prod')).toBe(false);
    expect(overlap('env in (a,b)', 'env notin (a,b)')).toBe(false);
    expect(overlap('env', '!env')).toBe(false);
    expect(overlap('env=prod', '!env')).toBe(false);
    expect(overlap('team=a,env=prod', 'env=dev,team=a')).toBe(false);
  });

  it('a NotIn alone is met by a cluster without the key', () => {
    expect(overlap('env!=prod', '!env')).toBe(true);
    expect(overlap('env in (a,b,c)', 'env notin (a,b)')).toBe(true);
  });
});
