import { describe, expect, it } from '@jest/globals';
import {
  BUILT_IN_SETTINGS,
  ProfileSpec,
  canonicalJson,
  composeEffectiveState,
  isProfileField,
  parseStoredSpec,
  profileConflict,
  sameEffectiveState,
  withoutOverride,
  type BoundProfile,
} from './profiles.js';

const pool = (cpu: string) => ({ limits: { cpu }, template: { spec: { requirements: [] } } });
const aws = { platform: 'AWS', topology: 'STANDALONE' };
const hosted = { platform: 'AWS', topology: 'HOSTED', managementCluster: 'mgmt' };
const bound = (name: string, priority: number, spec: ProfileSpec, revision = 1): BoundProfile => ({
  name,
  priority,
  revision,
  spec,
});

describe('composeEffectiveState', () => {
  it('with nothing bound and nothing overridden is the built-in default, every field from it', () => {
    const state = composeEffectiveState([], {}, aws);
    expect(state.settings).toEqual(BUILT_IN_SETTINGS);
    expect(state.nodePools).toEqual([]);
    expect(Object.values(state.sources).every((s) => s.kind === 'default')).toBe(true);
    expect(state.ignored).toEqual([]);
  });

  it('composes profiles in priority order (higher wins), then the overrides, naming each source', () => {
    const state = composeEffectiveState(
      [
        bound('prod', 20, { logLevel: 'error', nodePools: { general: pool('200') } }, 3),
        bound('base', 10, {
          enabled: true,
          logLevel: 'debug',
          featureGates: { Drift: false },
          nodePools: { general: pool('100'), gpu: pool('8') },
        }),
      ],
      {
        featureGates: { Drift: true, SpotToSpotConsolidation: true },
        nodePools: { gpu: pool('16') },
      },
      aws,
    );
    expect(state.settings).toEqual({
      ...BUILT_IN_SETTINGS,
      enabled: true,
      logLevel: 'error',
      featureGates: { Drift: true, SpotToSpotConsolidation: true },
    });
    expect(state.nodePools).toEqual([
      { name: 'general', spec: pool('200') },
      { name: 'gpu', spec: pool('16') },
    ]);
    expect(state.sources).toMatchObject({
      enabled: { kind: 'profile', profile: 'base', revision: 1 },
      logLevel: { kind: 'profile', profile: 'prod', revision: 3 },
      featureGates: { kind: 'override' },
      clusterAutoscalerMode: { kind: 'default' },
      'nodePools.general': { kind: 'profile', profile: 'prod', revision: 3 },
      'nodePools.gpu': { kind: 'override' },
    });
  });

  it('the order of the input does not matter; same priority falls back to the name', () => {
    const a = bound('a', 5, { logLevel: 'debug' });
    const b = bound('b', 5, { enabled: true });
    const one = composeEffectiveState([a, b], {}, aws);
    const two = composeEffectiveState([b, a], {}, aws);
    expect(one).toEqual(two);
  });

  it('an override of the fleet-default release (null) beats a profile that names one', () => {
    const state = composeEffectiveState(
      [bound('release', 1, { karpenterVersion: '1.14.1' })],
      { karpenterVersion: null },
      aws,
    );
    expect(state.settings.karpenterVersion).toBeNull();
    expect(state.sources.karpenterVersion).toEqual({ kind: 'override' });
  });

  it('ignores, and lists, a profile value the cluster cannot take', () => {
    const state = composeEffectiveState(
      [
        bound('cas-off', 1, {
          enabled: true,
          clusterAutoscalerMode: 'DISABLE',
          karpenterVersion: '1.14.1',
        }),
      ],
      {},
      hosted,
    );
    expect(state.settings.clusterAutoscalerMode).toBe('KEEP');
    expect(state.settings.karpenterVersion).toBeNull();
    expect(state.ignored.map((i) => `${i.profile}:${i.field}`)).toEqual([
      'cas-off:clusterAutoscalerMode',
      'cas-off:karpenterVersion',
    ]);
  });

  it('never leaves a cluster without an autoscaler: a profile DISABLE without Karpenter keeps the Cluster Autoscaler', () => {
    const state = composeEffectiveState(
      [bound('cas', 1, { clusterAutoscalerMode: 'DISABLE' })],
      { enabled: false },
      aws,
    );
    expect(state.settings.clusterAutoscalerMode).toBe('KEEP');
    expect(state.sources.clusterAutoscalerMode).toEqual({ kind: 'default' });
    expect(state.ignored[0]).toMatchObject({ field: 'clusterAutoscalerMode', profile: 'cas' });
  });

  it('an SRE override of the mode is theirs to keep, as setKarpenter allows it today', () => {
    const state = composeEffectiveState(
      [],
      { enabled: false, clusterAutoscalerMode: 'DISABLE' },
      aws,
    );
    expect(state.settings.clusterAutoscalerMode).toBe('DISABLE');
  });

  it('leaving a profile falls back to what remains (the same result as never having joined)', () => {
    const prod = bound('prod', 1, {
      enabled: true,
      clusterAutoscalerMode: 'MIGRATE',
      nodePools: { general: pool('1') },
    });
    const joined = composeEffectiveState([prod], { logLevel: 'debug' }, aws);
    const left = composeEffectiveState([], { logLevel: 'debug' }, aws);
    expect(joined.settings.enabled).toBe(true);
    expect(left).toEqual(composeEffectiveState([], { logLevel: 'debug' }, aws));
    expect(left.settings).toEqual({ ...BUILT_IN_SETTINGS, logLevel: 'debug' });
    expect(left.nodePools).toEqual([]);
    expect(sameEffectiveState(joined, left)).toBe(false);
  });
});

describe('from per-cluster state (the migration)', () => {
  it('today’s state as overrides, with no profile, is today’s state exactly', () => {
    // What the migration's SQL writes for a cluster: every setting and every NodePool.
    const today = {
      enabled: true,
      clusterAutoscalerMode: 'MIGRATE' as const,
      logLevel: 'debug' as const,
      featureGates: { Drift: false, SpotToSpotConsolidation: true },
      nodeClassOverrides: { tags: { team: 'a' } },
      karpenterVersion: null,
      driftPolicy: 'REPORT' as const,
    };
    const nodePools = [
      { name: 'a', spec: pool('1') },
      { name: 'b', spec: pool('2') },
    ];
    const overrides = ProfileSpec.parse({
      ...today,
      nodePools: Object.fromEntries(nodePools.map((p) => [p.name, p.spec])),
    });
    const state = composeEffectiveState([], overrides, aws);
    expect(state.settings).toEqual(today);
    expect(state.nodePools).toEqual(nodePools);
    expect(Object.values(state.sources).every((s) => s.kind === 'override')).toBe(true);
  });
});

describe('profileConflict', () => {
  const def = (name: string, selector: string, priority: number, spec: ProfileSpec) => ({
    name,
    selector,
    priority,
    spec,
  });

  it('names the first field two same-priority, overlapping profiles set differently', () => {
    expect(
      profileConflict(
        def('a', 'env=prod', 10, { enabled: true, logLevel: 'debug' }),
        def('b', 'region=eu', 10, { enabled: true, logLevel: 'error' }),
      ),
    ).toBe('logLevel');
    expect(
      profileConflict(
        def('a', 'env=prod', 10, { nodePools: { general: pool('1') } }),
        def('b', '', 10, { nodePools: { general: pool('2') } }),
      ),
    ).toBe('nodePools.general');
  });

  it('no conflict: other priority, disjoint selectors, equal values, or different fields', () => {
    expect(
      profileConflict(
        def('a', 'env=prod', 10, { logLevel: 'debug' }),
        def('b', 'env=prod', 11, { logLevel: 'error' }),
      ),
    ).toBeUndefined();
    expect(
      profileConflict(
        def('a', 'env=prod', 10, { logLevel: 'debug' }),
        def('b', 'env=dev', 10, { logLevel: 'error' }),
      ),
    ).toBeUndefined();
    expect(
      profileConflict(
        def('a', 'env=prod', 10, { featureGates: { A: true, B: false } }),
        def('b', 'env=prod', 10, { featureGates: { B: false, A: true } }),
      ),
    ).toBeUndefined();
    expect(
      profileConflict(def('a', '', 10, { logLevel: 'debug' }), def('b', '', 10, { enabled: true })),
    ).toBeUndefined();
    expect(
      profileConflict(
        def('a', '', 10, { logLevel: 'debug' }),
        def('a', '', 10, { logLevel: 'error' }),
      ),
    ).toBeUndefined();
  });
});

describe('overrides', () => {
  it('withoutOverride clears a setting or a NodePool, and says when there is none', () => {
    const o: ProfileSpec = { logLevel: 'debug', nodePools: { a: pool('1'), b: pool('2') } };
    expect(withoutOverride(o, 'logLevel')).toEqual({ nodePools: o.nodePools });
    expect(withoutOverride(o, 'nodePools.a')).toEqual({
      logLevel: 'debug',
      nodePools: { b: pool('2') },
    });
    expect(withoutOverride(o, 'enabled')).toBeUndefined();
    expect(withoutOverride(o, 'nodePools.c')).toBeUndefined();
    expect(withoutOverride(o, 'paused')).toBeUndefined();
  });

  it('isProfileField knows the settings and nodePools.<name>', () => {
    expect(isProfileField('driftPolicy')).toBe(true);
    expect(isProfileField('nodePools.general')).toBe(true);
    expect(isProfileField('nodePools.Bad_Name')).toBe(false);
    expect(isProfileField('paused')).toBe(false);
  });

  it('ProfileSpec refuses what a profile cannot set, naming the field', () => {
    const r = ProfileSpec.safeParse({ paused: true });
    expect(r.success).toBe(false);
    expect(ProfileSpec.safeParse({ logLevel: 'loud' }).error?.issues[0]?.path).toEqual([
      'logLevel',
    ]);
  });

  it('canonicalJson ignores key order', () => {
    expect(canonicalJson({ b: 1, a: [{ y: 1, x: 2 }] })).toBe(
      canonicalJson({ a: [{ x: 2, y: 1 }], b: 1 }),
    );
  });
});

describe('parseStoredSpec (stored data, lenient)', () => {
  it('keeps a valid stored spec as it is', () => {
    const spec = { enabled: true, logLevel: 'debug', nodePools: { general: { limits: {} } } };
    const warnings: string[] = [];
    expect(parseStoredSpec(spec, (f) => warnings.push(f))).toEqual(spec);
    expect(warnings).toEqual([]);
  });

  it('drops a field the schema no longer accepts (an old release, a removed setting), warning per field, and keeps the rest', () => {
    const warnings: [string, string][] = [];
    const spec = parseStoredSpec(
      {
        enabled: true,
        karpenterVersion: '0.37.0',
        retiredSetting: 1,
        logLevel: 'debug',
        nodePools: { general: { limits: {} }, Bad_Name: {} },
      },
      (field, reason) => warnings.push([field, reason]),
    );
    expect(spec).toEqual({
      enabled: true,
      logLevel: 'debug',
      nodePools: { general: { limits: {} } },
    });
    expect(warnings.map(([f]) => f)).toEqual([
      'karpenterVersion',
      'retiredSetting',
      'nodePools.Bad_Name',
    ]);
    expect(warnings[1]![1]).toMatch(/unknown field/);
  });

  it('input stays strict: the same document is refused by ProfileSpec', () => {
    expect(ProfileSpec.safeParse({ karpenterVersion: '0.37.0' }).success).toBe(false);
    expect(parseStoredSpec(null)).toEqual({});
  });
});
