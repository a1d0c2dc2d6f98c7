import { describe, expect, it } from '@jest/globals';
import type { V1PolicyRule } from '@kubernetes/client-node';
import { desiredState, fixtureInfrastructure } from '@fleet/testing';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { DEFAULT_KARPENTER_IMAGE } from './constants.js';
import { renderAwsOperand } from './operand.js';

const upstream = parse(
  readFileSync(
    fileURLToPath(new URL('./upstream/karpenter-v1.14.1-clusterroles.yaml', import.meta.url)),
    'utf8',
  ),
) as { clusterroles: { name: string; rules: V1PolicyRule[] }[] };

/** Every (group, resource, verb) a set of rules grants, as `group/resource:verb`. */
const grants = (rules: readonly V1PolicyRule[]): Set<string> =>
  new Set(
    rules.flatMap((r) => {
      if (r.resourceNames?.length) return [];
      return (r.apiGroups ?? []).flatMap((g) =>
        (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`)),
      );
    }),
  );

const operandClusterRole = () => {
  const role = renderAwsOperand(fixtureInfrastructure(), desiredState(), {
    image: DEFAULT_KARPENTER_IMAGE,
  }).find((o) => o.kind === 'ClusterRole');
  if (!role) throw new Error('no ClusterRole');
  return grants((role as unknown as { rules: V1PolicyRule[] }).rules);
};

/**
 * What the operand's ClusterRole grants beyond Karpenter v1.14.1's chart, each with its reason.
 * Anything else extra, or anything of the chart missing, fails the comparison.
 */
const BEYOND_THE_CHART: Record<string, string> = {
  // OpenShift enables OwnerReferencesPermissionEnforcement: Karpenter's NodeClaims name their
  // NodePool as blocking owner (nodeclaimtemplate.go) and its registration makes the NodeClaim
  // the Node's blocking owner (utils/nodeclaim UpdateNodeOwnerReferences); each needs update on
  // the owner's finalizers. karpenter-operator's clusterrole-core and Karpenter's own kwok
  // chart grant both.
  'karpenter.sh/nodeclaims/finalizers:update': 'OwnerReferencesPermissionEnforcement',
  'karpenter.sh/nodepools/finalizers:update': 'OwnerReferencesPermissionEnforcement',
  // Karpenter v1.14.1 core has DRA controllers (pkg/controllers/dynamicresources); read-only and
  // inert where the group is not served.
  'resource.k8s.io/deviceclasses:get': 'DRA',
  'resource.k8s.io/deviceclasses:list': 'DRA',
  'resource.k8s.io/deviceclasses:watch': 'DRA',
  'resource.k8s.io/resourceclaims:get': 'DRA',
  'resource.k8s.io/resourceclaims:list': 'DRA',
  'resource.k8s.io/resourceclaims:watch': 'DRA',
  'resource.k8s.io/resourceslices:get': 'DRA',
  'resource.k8s.io/resourceslices:list': 'DRA',
  'resource.k8s.io/resourceslices:watch': 'DRA',
};

describe("the operand's ClusterRole against Karpenter v1.14.1's chart", () => {
  it('grants everything the chart grants', () => {
    const ours = operandClusterRole();
    const chart = upstream.clusterroles.flatMap((r) => [...grants(r.rules)]);
    expect(chart.filter((g) => !ours.has(g))).toEqual([]);
  });

  it('grants beyond the chart only what OpenShift needs, each for a reason', () => {
    const chart = new Set(upstream.clusterroles.flatMap((r) => [...grants(r.rules)]));
    const extra = [...operandClusterRole()].filter((g) => !chart.has(g)).sort();
    expect(extra).toEqual(Object.keys(BEYOND_THE_CHART).sort());
  });
});
