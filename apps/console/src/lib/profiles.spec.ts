import { describe, expect, it } from '@jest/globals';
import {
  VALUE_MAX,
  describeBinding,
  describeSource,
  fieldLabel,
  formatValue,
  specEntries,
} from './profiles.js';

describe('fieldLabel', () => {
  it('names settings and NodePools as an SRE reads them', () => {
    expect(fieldLabel('logLevel')).toBe('Log level');
    expect(fieldLabel('nodePools.general')).toBe('NodePool general');
    expect(fieldLabel('somethingNew')).toBe('somethingNew');
  });
});

describe('describeSource', () => {
  it('names the profile and its revision', () => {
    expect(describeSource({ source: 'profile', profile: 'prod-base', profileRevision: 3 })).toBe(
      'profile prod-base@3',
    );
    expect(describeSource({ source: 'profile', profile: 'prod-base', profileRevision: null })).toBe(
      'profile prod-base',
    );
  });

  it('says default or override as they are', () => {
    expect(describeSource({ source: 'default', profile: null, profileRevision: null })).toBe(
      'default',
    );
    expect(describeSource({ source: 'override' })).toBe('override');
  });
});

describe('formatValue', () => {
  it('shows strings bare, null as the fleet default and the rest as JSON', () => {
    expect(formatValue('debug').text).toBe('debug');
    expect(formatValue(null).text).toBe('fleet default');
    expect(formatValue(true).text).toBe('true');
    expect(formatValue({ Drift: true }).text).toBe('{"Drift":true}');
  });

  it('cuts a long value and keeps the whole for its title', () => {
    const spec = { template: { spec: { requirements: 'x'.repeat(300) } } };
    const { text, full } = formatValue(spec);
    expect(text).toHaveLength(VALUE_MAX);
    expect(text.endsWith('…')).toBe(true);
    expect(full).toBe(JSON.stringify(spec));
  });
});

describe('specEntries', () => {
  it('lists settings then NodePools by name', () => {
    expect(
      specEntries({ logLevel: 'debug', nodePools: { general: { limits: {} } }, enabled: true }),
    ).toEqual([
      { field: 'logLevel', value: 'debug' },
      { field: 'enabled', value: true },
      { field: 'nodePools.general', value: { limits: {} } },
    ]);
    expect(specEntries(null)).toEqual([]);
  });
});

describe('describeBinding', () => {
  it('says how many clusters are bound and how many on the current revision', () => {
    expect(describeBinding({ boundClusters: 0, currentClusters: 0, revision: 1 })).toBe('none');
    expect(describeBinding({ boundClusters: 3, currentClusters: 3, revision: 2 })).toBe(
      '3 (all on revision 2)',
    );
    expect(describeBinding({ boundClusters: 3, currentClusters: 1, revision: 2 })).toBe(
      '3 (1 on revision 2)',
    );
  });
});
