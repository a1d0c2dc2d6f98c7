import { describe, expect, it } from '@jest/globals';
import { KARPENTER_CRD_DIRECTORY } from '@fleet/crd-schema';
import { KarpenterSpecValidator } from '@fleet/desired-state';
import {
  canonicalStrategy,
  formatManifestError,
  parseManifests,
  renderStream,
  validateObjects,
  type LiveCluster,
  type LiveStrategy,
} from './manifests.js';
import { computePlan, diffValues, formatPlan, planChanges } from './plan.js';

const validator = KarpenterSpecValidator.fromDirectory(KARPENTER_CRD_DIRECTORY);
const GENERAL = `
        template:
          spec:
            nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
            requirements:
              - { key: karpenter.sh/capacity-type, operator: In, values: [on-demand] }
        limits: { cpu: "100" }`;
const FILES = `apiVersion: fleet.karpenter.sh/v1alpha1
kind: Profile
metadata: { name: prod }
spec:
  selector: env=prod
  priority: 10
  enabled: true
  nodePools:
    general:${GENERAL}
---
apiVersion: fleet.karpenter.sh/v1alpha1
kind: ClusterOverrides
metadata: { name: prod-0 }
spec:
  logLevel: debug
---
`;
const cluster = (name: string, overrides = {}): LiveCluster => ({
  id: `id-${name}`,
  name,
  platform: 'AWS',
  topology: 'STANDALONE',
  labels: { env: 'prod' },
  overrides,
  generation: 3,
});

describe('kfleet apply documents', () => {
  it('reads every document of a multi-document file (an empty trailing one skipped)', () => {
    const { objects, errors } = parseManifests('fleet.yaml', FILES);
    expect(errors).toEqual([]);
    expect(objects.map((o) => [o.kind, o.name, o.origin?.index])).toEqual([
      ['Profile', 'prod', 1],
      ['ClusterOverrides', 'prod-0', 2],
    ]);
    expect(objects[0]).toMatchObject({
      selector: 'env=prod',
      priority: 10,
      spec: { enabled: true },
    });
  });

  it('names file, document, kind, name and field of a shape error; unknown fields and kinds are refused', () => {
    const { errors } = parseManifests(
      'profiles/prod.yaml',
      `apiVersion: fleet.karpenter.sh/v1alpha1
kind: Profile
metadata: { name: ok }
spec: { selector: "", priority: 1 }
---
apiVersion: fleet.karpenter.sh/v1alpha1
kind: Profile
metadata: { name: prod }
spec: { selector: env=prod, priority: 2000, logLevl: debug }
---
apiVersion: fleet.karpenter.sh/v1alpha1
kind: Deployment
metadata: { name: x }
---
apiVersion: fleet.karpenter.sh/v1alpha1
kind: Profile
metadata: { name: sel }
spec: { selector: "env in ()", priority: 1 }
`,
    );
    expect(errors.map(formatManifestError)).toEqual([
      expect.stringMatching(/^profiles\/prod\.yaml: document 2 \(Profile prod\): spec\.priority: /),
      expect.stringMatching(/^profiles\/prod\.yaml: document 2 \(Profile prod\): spec: .*logLevl/),
      expect.stringMatching(
        /^profiles\/prod\.yaml: document 3: kind: must be one of RolloutStrategy, Profile, ClusterOverrides$/,
      ),
      expect.stringMatching(/^profiles\/prod\.yaml: document 4 \(Profile sel\): spec\.selector: /),
    ]);
  });

  it('checks NodePools against the real NodePool CRD, clusters that exist, duplicates and same-priority conflicts', () => {
    const { objects } = parseManifests(
      'p.yaml',
      `${FILES}apiVersion: fleet.karpenter.sh/v1alpha1
kind: Profile
metadata: { name: bad }
spec:
  selector: region=eu
  priority: 10
  enabled: false
  nodePools:
    general: { limits: { cpu: "100" }, template: { spec: { requirements: [], nodeClassRef: {} } } }
---
apiVersion: fleet.karpenter.sh/v1alpha1
kind: ClusterOverrides
metadata: { name: nowhere }
spec: {}
---
apiVersion: fleet.karpenter.sh/v1alpha1
kind: ClusterOverrides
metadata: { name: prod-0 }
spec: {}
`,
    );
    const errors = validateObjects(objects, validator, {
      clusters: [cluster('prod-0')],
      profiles: [],
      strategies: [],
      prune: false,
    }).map(formatManifestError);
    expect(errors).toEqual([
      expect.stringMatching(
        /^p\.yaml: document 3 \(Profile bad\): spec\.nodePools\.general\.template\.spec\.nodeClassRef/,
      ),
      "p.yaml: document 4 (ClusterOverrides nowhere): metadata.name: no cluster named nowhere (within your token's scope)",
      'p.yaml: document 5 (ClusterOverrides prod-0): metadata.name: ClusterOverrides prod-0 is also declared in p.yaml document 2',
      expect.stringMatching(
        /^p\.yaml: document 1 \(Profile prod\): spec\.enabled: profile prod and profile bad both have priority 10/,
      ),
    ]);
  });

  it('plans create, update with field-level changes, unchanged, and prunes only kinds the files hold', () => {
    const { objects } = parseManifests('f.yaml', FILES);
    const fleet = {
      profiles: [
        {
          name: 'prod',
          selector: 'env=prod',
          priority: 10,
          spec: { enabled: false },
          deleting: false,
        },
        { name: 'old', selector: 'env=dev', priority: 1, spec: {}, deleting: false },
      ],
      clusters: [cluster('prod-0', { logLevel: 'debug' }), cluster('prod-1', { enabled: true })],
      strategies: [],
    };
    const plan = computePlan(objects, fleet, false);
    expect(plan.map((i) => [i.kind, i.name, i.action])).toEqual([
      ['Profile', 'prod', 'update'],
      ['ClusterOverrides', 'prod-0', 'unchanged'],
    ]);
    expect(plan[0]!.changes.map((c) => c.path)).toEqual(['spec.enabled', 'spec.nodePools']);
    const pruned = computePlan(objects, fleet, true);
    expect(pruned.filter((i) => i.action === 'delete').map((i) => `${i.kind}/${i.name}`)).toEqual([
      'Profile/old',
      'ClusterOverrides/prod-1',
    ]);
    // Profiles only: overrides are never pruned by a directory that holds none.
    const profilesOnly = computePlan(objects.slice(0, 1), fleet, true);
    expect(profilesOnly.filter((i) => i.action === 'delete').map((i) => i.name)).toEqual(['old']);
    expect(formatPlan(pruned)).toMatch(
      /^Plan: 0 to create, 1 to update, 2 to delete, 1 unchanged\n~ profile\/prod \(update, through its rollout\)\n {4}~ spec\.enabled: false -> true\n/,
    );
  });

  it('a second apply of what the fleet holds plans no change', () => {
    const { objects } = parseManifests('f.yaml', FILES);
    const prod = objects[0]!;
    if (prod.kind !== 'Profile') throw new Error('FILES starts with a Profile');
    const fleet = {
      profiles: [
        { name: 'prod', selector: 'env=prod', priority: 10, spec: prod.spec, deleting: false },
      ],
      clusters: [cluster('prod-0', { logLevel: 'debug' })],
      strategies: [],
    };
    expect(planChanges(computePlan(objects, fleet, true))).toBe(false);
  });

  it('an exported spec plans no change however it was stored (empty nodePools, karpenterVersion null)', () => {
    const stored = { karpenterVersion: null, nodePools: {} };
    const text = renderStream([{ kind: 'ClusterOverrides', name: 'prod-0', spec: stored }]);
    const { objects, errors } = parseManifests('export.yaml', text);
    expect(errors).toEqual([]);
    expect(
      planChanges(
        computePlan(
          objects,
          { profiles: [], clusters: [cluster('prod-0', stored)], strategies: [] },
          true,
        ),
      ),
    ).toBe(false);
  });

  it('diffs key by key, lists as a whole', () => {
    expect(
      diffValues({ a: { b: 1, c: [1] }, d: 1 }, { a: { b: 2, c: [1, 2] }, e: 1 }, 'spec'),
    ).toEqual([
      { path: 'spec.a.b', before: 1, after: 2 },
      { path: 'spec.a.c', before: [1], after: [1, 2] },
      { path: 'spec.d', before: 1 },
      { path: 'spec.e', after: 1 },
    ]);
  });

  it('export renders deterministically (kind, then name; fixed key order) and reads back as the same objects', () => {
    const { objects } = parseManifests('f.yaml', FILES);
    const text = renderStream([...objects].reverse());
    expect(text).toBe(renderStream(objects));
    expect(text.indexOf('kind: Profile')).toBeLessThan(text.indexOf('kind: ClusterOverrides'));
    expect(text).toMatch(/spec:\n {2}selector: env=prod\n {2}priority: 10\n {2}enabled: true\n/);
    const again = parseManifests('export.yaml', text);
    expect(again.errors).toEqual([]);
    expect(renderStream(again.objects)).toBe(text);
  });

  describe('RolloutStrategy', () => {
    const CANARY = `apiVersion: fleet.karpenter.sh/v1alpha1
kind: RolloutStrategy
metadata: { name: canary }
spec:
  stages:
    - { selector: canary=true, approval: true }
    - { percent: 100, minHealthySeconds: 5 }
  waveTimeoutSeconds: 600
---
apiVersion: fleet.karpenter.sh/v1alpha1
kind: Profile
metadata:
  name: prod
  annotations: { fleet.karpenter.sh/rollout-strategy: canary, team: platform }
spec: { selector: env=prod, priority: 10, logLevel: debug }
`;
    const noProfiles = { clusters: [cluster('prod-0')], profiles: [], prune: false };

    it('reads a strategy with the API defaults filled in, and the profile annotation naming it', () => {
      const { objects, errors } = parseManifests('s.yaml', CANARY);
      expect(errors).toEqual([]);
      expect(objects[0]).toEqual({
        kind: 'RolloutStrategy',
        name: 'canary',
        spec: {
          stages: [
            { selector: 'canary=true', minHealthySeconds: 60, pauseSeconds: 0, approval: true },
            { percent: 100, minHealthySeconds: 5, pauseSeconds: 0, approval: false },
          ],
          maxFailures: 0,
          waveTimeoutSeconds: 600,
          maxNodeClaimLaunchFailures: null,
          maxPendingPodSeconds: null,
        },
        origin: { file: 's.yaml', index: 1 },
      });
      expect(objects[1]).toMatchObject({ kind: 'Profile', strategyName: 'canary' });
      // The annotation is not part of what the profile holds.
      expect(objects[1]!.spec).toEqual({ logLevel: 'debug' });
      expect(validateObjects(objects, validator, { ...noProfiles, strategies: [] })).toEqual([]);
    });

    it('refuses what the API refuses, naming file, document and field', () => {
      const bad = (spec: string) =>
        parseManifests(
          'bad.yaml',
          `apiVersion: fleet.karpenter.sh/v1alpha1\nkind: RolloutStrategy\nmetadata: { name: s }\nspec: ${spec}\n`,
        ).errors.map(formatManifestError);
      expect(bad('{ stages: [{ percent: 50 }, { percent: 40 }] }')).toEqual([
        'bad.yaml: document 1 (RolloutStrategy s): spec.stages.1.percent: percentages must increase from stage to stage',
      ]);
      expect(bad('{ stages: [{ percent: 50, count: 2 }] }')).toEqual([
        'bad.yaml: document 1 (RolloutStrategy s): spec.stages.0.count: give exactly one of selector, percent or count',
      ]);
      expect(
        bad('{ stages: [{ percent: 100, minHealthySeconds: 900 }], waveTimeoutSeconds: 600 }'),
      ).toEqual([
        "bad.yaml: document 1 (RolloutStrategy s): spec.waveTimeoutSeconds: must exceed every stage's minHealthySeconds (900), or that stage could never succeed",
      ]);
      expect(bad('{ stages: [{ percent: 100 }], maxFailure: 1 }')).toEqual([
        expect.stringMatching(
          /^bad\.yaml: document 1 \(RolloutStrategy s\): spec\.maxFailure: unknown field/,
        ),
      ]);
      expect(bad('{ stages: [] }')).toEqual([
        'bad.yaml: document 1 (RolloutStrategy s): spec.stages: must name at least one stage',
      ]);
    });

    it('a profile names a strategy the files or the fleet hold; not one --prune deletes', () => {
      const { objects } = parseManifests('s.yaml', CANARY);
      const profileOnly = objects.slice(1);
      const live: LiveStrategy[] = [{ name: 'canary', spec: canonicalStrategy(objects[0]!.spec) }];
      expect(
        validateObjects(profileOnly, validator, { ...noProfiles, strategies: [] }).map(
          formatManifestError,
        ),
      ).toEqual([
        's.yaml: document 2 (Profile prod): metadata.annotations.fleet.karpenter.sh/rollout-strategy: no rollout strategy named canary in the fleet or the files',
      ]);
      expect(validateObjects(profileOnly, validator, { ...noProfiles, strategies: live })).toEqual(
        [],
      );
      // With a strategy document of another name and --prune, canary would be deleted.
      const other = parseManifests(
        'o.yaml',
        'apiVersion: fleet.karpenter.sh/v1alpha1\nkind: RolloutStrategy\nmetadata: { name: other }\nspec: { stages: [{ percent: 100 }] }\n',
      ).objects;
      expect(
        validateObjects([...other, ...profileOnly], validator, {
          ...noProfiles,
          prune: true,
          strategies: live,
        }).map(formatManifestError),
      ).toEqual([expect.stringContaining('rollout strategy canary would be deleted by --prune')]);
      expect(
        parseManifests(
          'a.yaml',
          'apiVersion: fleet.karpenter.sh/v1alpha1\nkind: Profile\nmetadata: { name: p, annotations: { fleet.karpenter.sh/strategy: x } }\nspec: { selector: "", priority: 1 }\n',
        ).errors.map(formatManifestError),
      ).toEqual([
        'a.yaml: document 1 (Profile p): metadata.annotations.fleet.karpenter.sh/strategy: unknown fleet annotation; the one read is fleet.karpenter.sh/rollout-strategy',
      ]);
    });

    it('plans create, update (field diff), unchanged and delete, and renders back to itself', () => {
      const { objects } = parseManifests('s.yaml', CANARY);
      const strategy = objects[0]!;
      const fleet = {
        profiles: [],
        clusters: [],
        strategies: [] as LiveStrategy[],
      };
      expect(computePlan(objects.slice(0, 1), fleet, false)[0]).toMatchObject({
        action: 'create',
      });
      // As the API returns it: nulls in the stages, every field given.
      const stored = canonicalStrategy({
        stages: [
          {
            selector: 'canary=true',
            percent: null,
            count: null,
            minHealthySeconds: 60,
            pauseSeconds: 0,
            approval: true,
          },
          {
            selector: null,
            percent: 100,
            count: null,
            minHealthySeconds: 5,
            pauseSeconds: 0,
            approval: false,
          },
        ],
        maxFailures: 0,
        waveTimeoutSeconds: 600,
        maxNodeClaimLaunchFailures: null,
        maxPendingPodSeconds: null,
      });
      const same = computePlan(
        objects.slice(0, 1),
        {
          ...fleet,
          strategies: [
            { name: 'canary', spec: stored },
            { name: 'old', spec: stored },
          ],
        },
        true,
      );
      expect(same.map((i) => [i.name, i.action])).toEqual([
        ['canary', 'unchanged'],
        ['old', 'delete'],
      ]);
      const changed = computePlan(
        objects.slice(0, 1),
        {
          ...fleet,
          strategies: [{ name: 'canary', spec: { ...stored, maxFailures: 2 } }],
        },
        false,
      );
      expect(formatPlan(changed)).toBe(
        'Plan: 0 to create, 1 to update, 0 to delete, 0 unchanged\n~ rolloutstrategy/canary (update)\n    ~ spec.maxFailures: 2 -> 0\n',
      );
      const text = renderStream([strategy]);
      expect(text).toBe(
        '---\napiVersion: fleet.karpenter.sh/v1alpha1\nkind: RolloutStrategy\nmetadata:\n  name: canary\nspec:\n  stages:\n    - selector: canary=true\n      minHealthySeconds: 60\n      pauseSeconds: 0\n      approval: true\n    - percent: 100\n      minHealthySeconds: 5\n      pauseSeconds: 0\n      approval: false\n  maxFailures: 0\n  waveTimeoutSeconds: 600\n',
      );
      expect(renderStream(parseManifests('e.yaml', text).objects)).toBe(text);
      // Strategies come first in a stream, as they are applied first.
      expect(renderStream([...objects].reverse()).indexOf('kind: RolloutStrategy')).toBeLessThan(
        renderStream([...objects].reverse()).indexOf('kind: Profile'),
      );
    });
  });
});
