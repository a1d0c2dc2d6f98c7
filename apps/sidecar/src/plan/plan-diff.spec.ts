import { describe, expect, it } from '@jest/globals';
import { PLAN_DIFF_FIELDS_MAX } from '@fleet/contracts';
import { objectDiff } from './plan-diff.js';

const live = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: {
    name: 'general',
    uid: 'u-1',
    resourceVersion: '41',
    generation: 2,
    creationTimestamp: '2026-12-01T00:00:00Z',
    managedFields: [{ manager: 'karpenter-fleet' }],
    labels: { 'fleet.karpenter.sh/managed-by': 'karpenter-fleet' },
  },
  spec: {
    limits: { cpu: '100' },
    template: { spec: { expireAfter: 'Never', requirements: [{ key: 'a', values: ['x'] }] } },
  },
  status: { resources: { cpu: '4' } },
};

describe('objectDiff', () => {
  it('lists only the fields that change, leaf by leaf, ignoring metadata noise and status', () => {
    const answer = structuredClone(live);
    answer.metadata.resourceVersion = '42';
    answer.metadata.generation = 3;
    answer.metadata.managedFields = [{ manager: 'karpenter-fleet' }, { manager: 'x' }];
    answer.spec.limits.cpu = '200';
    answer.spec.template.spec.expireAfter = '720h';
    answer.status.resources.cpu = '8';
    expect(objectDiff(live, answer)).toEqual({
      diff: [
        { path: '.spec.limits.cpu', before: '100', after: '200' },
        { path: '.spec.template.spec.expireAfter', before: 'Never', after: '720h' },
      ],
    });
  });

  it('an unchanged object has no diff', () => {
    const answer = structuredClone(live);
    answer.metadata.resourceVersion = '99';
    expect(objectDiff(live, answer)).toEqual({ diff: [] });
  });

  it('added and removed fields carry only the side that exists; quoted keys; list elements', () => {
    const answer = structuredClone(live) as Omit<typeof live, 'spec'> & {
      spec: Partial<typeof live.spec>;
      metadata: { labels: Record<string, string> };
    };
    delete answer.spec.limits;
    answer.metadata.labels['team.example.com/owner'] = 'sre';
    answer.spec.template!.spec.requirements[0]!.values = ['y'];
    expect(objectDiff(live, answer).diff).toEqual([
      { path: '.metadata.labels["team.example.com/owner"]', after: 'sre' },
      { path: '.spec.limits.cpu', before: '100' },
      { path: '.spec.template.spec.requirements[0].values[0]', before: 'x', after: 'y' },
    ]);
  });

  it('a new object lists every field it would be stored with; large diffs are bounded', () => {
    expect(objectDiff(undefined, { kind: 'X', spec: { a: 1 } }).diff).toEqual([
      { path: '.kind', after: 'X' },
      { path: '.spec.a', after: 1 },
    ]);
    const big = { data: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i])) };
    const { diff, moreFields } = objectDiff({}, big);
    expect(diff).toHaveLength(PLAN_DIFF_FIELDS_MAX);
    expect(moreFields).toBe(200 - PLAN_DIFF_FIELDS_MAX);
  });
});
