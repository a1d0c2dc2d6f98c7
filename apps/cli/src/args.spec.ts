import { describe, expect, it } from '@jest/globals';
import {
  applyLabelChanges,
  isClusterId,
  parseCasMode,
  parseDuration,
  parseFeatureGates,
  parseGraceSeconds,
  parseLabelChanges,
  parseLabelPairs,
  parseNodePoolDocument,
  parseWaves,
} from './args.js';
import { CliError } from './errors.js';

const usage = (fn: () => unknown): CliError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error('expected a usage error');
};

describe('label arguments', () => {
  it('parses key=value pairs, values may contain "="', () => {
    expect(parseLabelPairs(['env=prod', 'note=a=b', 'empty='])).toEqual({
      env: 'prod',
      note: 'a=b',
      empty: '',
    });
    expect(usage(() => parseLabelPairs(['env'])).exitCode).toBe(2);
    expect(usage(() => parseLabelPairs(['=x'])).message).toMatch(/key=value/);
  });

  it('sets with key=value and removes with key-, like kubectl label', () => {
    const changes = parseLabelChanges(['tier=gold', 'team-', 'example.com/owner=sre']);
    expect(changes).toEqual({
      set: { tier: 'gold', 'example.com/owner': 'sre' },
      remove: ['team'],
    });
    expect(applyLabelChanges({ env: 'prod', team: 'core', tier: 'silver' }, changes)).toEqual({
      env: 'prod',
      tier: 'gold',
      'example.com/owner': 'sre',
    });
    expect(usage(() => parseLabelChanges([])).exitCode).toBe(2);
    expect(usage(() => parseLabelChanges(['a=1', 'a-'])).message).toMatch(/both set and removed/);
  });
});

describe('flag values', () => {
  it('feature gates are Name=true|false', () => {
    expect(parseFeatureGates(['Drift=true', 'SpotToSpotConsolidation=false'])).toEqual({
      Drift: true,
      SpotToSpotConsolidation: false,
    });
    expect(usage(() => parseFeatureGates(['Drift=yes'])).field).toBe('featureGates');
  });

  it('durations take s, m, h, d, w', () => {
    expect(parseDuration('30d')).toBe(30 * 86_400_000);
    expect(parseDuration('90m')).toBe(90 * 60_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    for (const bad of ['30', '0d', '1.5h', 'd', '-1d'])
      expect(usage(() => parseDuration(bad)).exitCode).toBe(2);
  });

  it('a grace period may be 0, other durations are in seconds', () => {
    expect(['0', '0s', '0h'].map((text) => parseGraceSeconds(text))).toEqual([0, 0, 0]);
    expect(parseGraceSeconds('90m')).toBe(5400);
    expect(usage(() => parseGraceSeconds('soon')).field).toBe('--grace');
  });

  it('Cluster Autoscaler modes, any case', () => {
    expect(parseCasMode('disable')).toBe('DISABLE');
    expect(parseCasMode('Migrate')).toBe('MIGRATE');
    expect(usage(() => parseCasMode('off')).message).toMatch(/disable, keep or migrate/);
  });

  it('waves are cumulative counts or percentages', () => {
    expect(parseWaves('1, 10%,50%,100%')).toEqual([
      { count: 1 },
      { percent: 10 },
      { percent: 50 },
      { percent: 100 },
    ]);
    expect(usage(() => parseWaves('1,ten')).field).toBe('--waves');
  });
});

describe('NodePool files', () => {
  const manifest = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: { name: general }
spec:
  limits: { cpu: "100" }
`;

  it('takes the name from metadata.name, or --name', () => {
    expect(parseNodePoolDocument(manifest)).toEqual({
      name: 'general',
      spec: { limits: { cpu: '100' } },
    });
    expect(parseNodePoolDocument(manifest, 'other').name).toBe('other');
  });

  it('accepts a bare spec with --name only', () => {
    expect(parseNodePoolDocument('limits: {cpu: "1"}', 'small')).toEqual({
      name: 'small',
      spec: { limits: { cpu: '1' } },
    });
    expect(usage(() => parseNodePoolDocument('limits: {cpu: "1"}')).field).toBe('--name');
  });

  it('refuses other kinds, several documents and broken YAML', () => {
    expect(usage(() => parseNodePoolDocument('kind: EC2NodeClass\nspec: {}')).field).toBe('kind');
    expect(usage(() => parseNodePoolDocument(`${manifest}---\n${manifest}`)).message).toMatch(
      /exactly one YAML document, found 2/,
    );
    expect(usage(() => parseNodePoolDocument('spec: [unclosed')).message).toMatch(/invalid YAML/);
    expect(usage(() => parseNodePoolDocument('- a\n- b', 'x')).exitCode).toBe(2);
    expect(usage(() => parseNodePoolDocument('kind: NodePool\nspec: {}')).field).toBe(
      'metadata.name',
    );
  });
});

describe('cluster references', () => {
  const uid = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';

  it('tells IDs from names', () => {
    expect(isClusterId(uid)).toBe(true);
    expect(isClusterId(Buffer.from(`Cluster:${uid}`).toString('base64url'))).toBe(true);
    expect(isClusterId(Buffer.from(`Rollout:${uid}`).toString('base64url'))).toBe(false);
    expect(isClusterId('ocp-east-1')).toBe(false);
    expect(isClusterId('prod')).toBe(false);
  });
});
