import type { V1PolicyRule } from '@kubernetes/client-node';
import {
  DEFAULT_KARPENTER_IMAGE,
  renderAwsOperand,
  renderAzureOperand,
  renderClusterApiOperand,
} from '@fleet/cloud-provider';
import {
  azureFixtureInfrastructure,
  capiFixtureInfrastructure,
  deployDocuments,
  desiredState,
  fixtureInfrastructure,
} from '@fleet/testing';
import {
  isRequest,
  type DifferentialScript,
  type DifferentialStep,
} from '../support/control-plane/differential.js';

// Which (verb, resource) pairs the product is granted, and which the differential scripts send:
// every grant must be proven on both servers (differential-coverage.spec.ts).

/** `verb group/resource`, the group empty for the core group: `get /pods`, `update apps/deployments/scale`. */
export type Grant = string;

const grantKey = (verb: string, group: string, resource: string): Grant =>
  `${verb} ${group}/${resource}`;

function rulesGrants(rules: readonly V1PolicyRule[]): Grant[] {
  return rules.flatMap((rule) =>
    (rule.apiGroups ?? []).flatMap((group) =>
      (rule.resources ?? []).flatMap((resource) =>
        rule.verbs.map((verb) => grantKey(verb, group, resource)),
      ),
    ),
  );
}

interface RbacDocument {
  kind?: string;
  metadata?: { name?: string };
  rules?: V1PolicyRule[];
}

const rolesIn = (objects: readonly unknown[]): RbacDocument[] =>
  (objects as RbacDocument[]).filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');

/** Every role the product ships (deploy/) or renders for an operand, by where it comes from. */
async function productRoles(): Promise<{ source: string; role: RbacDocument }[]> {
  const out: { source: string; role: RbacDocument }[] = [];
  for (const { file, docs } of deployDocuments())
    for (const role of rolesIn(docs)) out.push({ source: `deploy/${file}`, role });

  const desired = desiredState();
  for (const role of rolesIn(
    renderAwsOperand(fixtureInfrastructure(), desired, { image: DEFAULT_KARPENTER_IMAGE }),
  ))
    out.push({ source: 'renderAwsOperand', role });
  for (const role of rolesIn(
    renderAzureOperand(azureFixtureInfrastructure(), desired, { image: 'operand' }),
  ))
    out.push({ source: 'renderAzureOperand', role });

  const capi = await capiFixtureInfrastructure();
  for (const access of ['same-cluster', 'separate-cluster'] as const)
    for (const role of rolesIn(
      renderClusterApiOperand(capi, desired, { image: 'operand', access }).map((t) => t.object),
    ))
      out.push({ source: `renderClusterApiOperand (${access})`, role });

  return out;
}

/** Every (verb, resource) granted by the product's roles, each with the roles granting it. */
export async function productGrants(): Promise<Map<Grant, string[]>> {
  const grants = new Map<Grant, string[]>();
  for (const { source, role } of await productRoles())
    for (const grant of rulesGrants(role.rules ?? [])) {
      const by = `${source}: ${role.kind}/${role.metadata?.name ?? ''}`;
      grants.set(grant, [...new Set([...(grants.get(grant) ?? []), by])]);
    }
  return grants;
}

/**
 * The (verb, resource) a request is authorized as, read from its method and path the way
 * kube-apiserver's RequestInfoFactory does.
 */
export function requestGrant(method: string, path: string): Grant | undefined {
  const url = new URL(path, 'https://server');
  const parts = url.pathname.split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1]!;
    rest = parts.slice(3);
  } else return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource, name, subresource] = rest;
  if (!resource) return undefined;
  const watch = ['1', 'true'].includes(url.searchParams.get('watch') ?? '');
  const verb = ((): string | undefined => {
    switch (method) {
      case 'GET':
        if (watch) return 'watch';
        return name ? 'get' : 'list';
      case 'POST':
        return 'create';
      case 'PUT':
        return 'update';
      case 'PATCH':
        return 'patch';
      case 'DELETE':
        return name ? 'delete' : 'deletecollection';
      default:
        return undefined;
    }
  })();
  if (!verb) return undefined;
  return grantKey(verb, group, subresource ? `${resource}/${subresource}` : resource);
}

const stepGrants = (step: DifferentialStep): Grant[] =>
  isRequest(step)
    ? [
        ...[requestGrant(step.method, step.path)].filter((g) => g !== undefined),
        ...(step.authorizes ?? []),
      ]
    : [];

/** Every (verb, resource) the scripts send or, by `authorizes`, have authorized. */
export function scriptGrants(scripts: readonly DifferentialScript[]): Set<Grant> {
  return new Set(scripts.flatMap((s) => s.steps.flatMap(stepGrants)));
}

/**
 * Whether any request is authorized as this grant: kube-apiserver never asks for a collection
 * verb on a subresource (Karpenter's chart grants `list nodeclaims/status`, which no request uses).
 */
export function requestable(grant: Grant): boolean {
  const [verb, resource] = grant.split(' ') as [string, string];
  const subresource = resource.split('/').length > 2;
  return !(subresource && ['list', 'watch', 'deletecollection'].includes(verb));
}
