import { describe, expect, it } from '@jest/globals';
import { age, clusterTable, labelList, render, table } from './format.js';

describe('table', () => {
  it('aligns columns to the widest cell, two spaces apart, no trailing blanks', () => {
    expect(
      table(
        ['NAME', 'ROLE'],
        [
          ['a-very-long-name', 'ADMIN'],
          ['b', ''],
        ],
      ),
    ).toBe('NAME              ROLE\na-very-long-name  ADMIN\nb\n');
  });

  it('prints clusters with the kubectl-like columns', () => {
    const now = new Date('2026-01-10T00:00:00Z');
    const text = clusterTable(
      [
        {
          name: 'ocp-east',
          platform: 'AWS',
          region: 'us-east-1',
          createdAt: '2026-01-07T00:00:00Z',
          inSync: false,
          healthState: 'PAUSED',
          karpenter: { enabled: true, paused: true, generation: 3 },
          status: { observedGeneration: 2, stale: false },
        },
      ],
      now,
    );
    expect(text).toBe(
      'NAME      PLATFORM  REGION     KARPENTER       HEALTH  GEN  OBSERVED  AGE\n' +
        'ocp-east  AWS       us-east-1  Enabled,Paused  Paused  3    2         3d\n',
    );
  });
});

describe('age', () => {
  const now = new Date('2026-01-10T00:00:00Z');
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

  it.each([
    [5, '5s'],
    [119, '119s'],
    [185, '3m5s'],
    [600, '10m'],
    [3 * 3600 + 120, '3h2m'],
    [30 * 3600, '30h'],
    [12 * 86_400, '12d'],
    [800 * 86_400, '2y70d'],
  ])('%i seconds is %s', (seconds, text) => {
    expect(age(ago(seconds), now)).toBe(text);
  });

  it('shows <none> for a missing time and never a negative age', () => {
    expect(age(null, now)).toBe('<none>');
    expect(age(ago(-30), now)).toBe('0s');
  });
});

describe('output', () => {
  it('renders JSON and YAML', () => {
    expect(render({ a: 1 }, 'json')).toBe('{\n  "a": 1\n}\n');
    expect(render({ a: [1] }, 'yaml')).toBe('a:\n  - 1\n');
  });

  it('lists labels like kubectl --show-labels', () => {
    expect(labelList({ env: 'prod', tier: 'gold' })).toBe('env=prod,tier=gold');
    expect(labelList({})).toBe('<none>');
  });
});
