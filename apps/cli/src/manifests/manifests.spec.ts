import { describe, expect, it } from '@jest/globals';
import { KARPENTER_CRD_DIRECTORY } from '@fleet/crd-schema';
import { KarpenterSpecValidator } from '@fleet/desired-state';
import {
  formatManifestError,
  parseManifests,
  renderStream,
  validateObjects,
  type LiveCluster,
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
        /^profiles\/prod\.yaml: document 3: kind: must be one of Profile, ClusterOverrides/,
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
    const fleet = {
      profiles: [
        { name: 'prod', selector: 'env=prod', priority: 10, spec: prod.spec, deleting: false },
      ],
      clusters: [cluster('prod-0', { logLevel: 'debug' })],
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
        computePlan(objects, { profiles: [], clusters: [cluster('prod-0', stored)] }, true),
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
});
