import { createHash } from 'node:crypto';

import type { ResourceDef } from './resources.js';
import type { JsonObject } from './util.js';

// The OpenAPI v3 documents kubectl reads (`/openapi/v3` and one document per group-version):
// before `apply` it checks that the PATCH operation of the kind takes `fieldValidation`, so that
// validation happens on the server; `explain` reads the component schemas. Built-in kinds carry
// no schema beyond their type metadata (the emulator has none).

const gvPath = (group: string, version: string): string =>
  group ? `apis/${group}/${version}` : `api/${version}`;

/** `sh.karpenter.v1.NodePool`, `io.k8s.api.core.v1.ConfigMap`: the names kube-apiserver uses. */
function schemaName(def: ResourceDef): string {
  if (!def.group) return `io.k8s.api.core.${def.version}.${def.kind}`;
  if (!def.custom) {
    const short = def.group.replace(/\.k8s\.io$/, '').replace(/\.authorization$/, '');
    const pkg = def.group === 'rbac.authorization.k8s.io' ? 'rbac' : short.split('.')[0]!;
    const root = def.group.endsWith('.k8s.io') || !def.group.includes('.') ? 'io.k8s.api' : '';
    if (root) return `${root}.${pkg}.${def.version}.${def.kind}`;
  }
  return `${def.group.split('.').reverse().join('.')}.${def.version}.${def.kind}`;
}

const param = (name: string, description: string, type = 'string'): JsonObject => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});
const DRY_RUN = param(
  'dryRun',
  'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed',
);
const FIELD_MANAGER = param(
  'fieldManager',
  'fieldManager is a name associated with the actor or entity that is making these changes.',
);
const FIELD_VALIDATION = param(
  'fieldValidation',
  'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict',
);
const FORCE = param('force', 'Force is going to "force" Apply requests.', 'boolean');
const PATCH_BODY = {
  content: Object.fromEntries(
    [
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ].map((t) => [
      t,
      { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
    ]),
  ),
  required: true,
};

function operations(def: ResourceDef, ref: string, sub?: string): JsonObject {
  const gvk = { group: def.group, version: def.version, kind: def.kind };
  const op = (action: string, extra: JsonObject = {}): JsonObject => ({
    operationId: `${action}${def.kind}${sub ? sub[0]!.toUpperCase() + sub.slice(1) : ''}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    responses: { '200': { content: { 'application/json': { schema: { $ref: ref } } } } },
    ...extra,
  });
  return {
    get: op('get'),
    put: op('put', { parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION] }),
    patch: op('patch', {
      parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE],
      requestBody: PATCH_BODY,
    }),
    ...(sub ? {} : { delete: op('delete', { parameters: [DRY_RUN] }) }),
  };
}

export function groupVersionDocument(
  defs: ResourceDef[],
  group: string,
  version: string,
  gitVersion: string,
): JsonObject | undefined {
  const mine = defs.filter((d) => d.group === group && d.version === version);
  if (!mine.length) return undefined;
  const paths: JsonObject = {};
  const schemas: JsonObject = {
    'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': {
      description:
        'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    },
  };
  for (const def of mine) {
    const name = schemaName(def);
    const ref = `#/components/schemas/${name}`;
    const gvk = [{ group: def.group, version: def.version, kind: def.kind }];
    schemas[name] = def.schema
      ? { ...(def.schema.schema as JsonObject), 'x-kubernetes-group-version-kind': gvk }
      : {
          type: 'object',
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: { type: 'object' },
          },
          'x-kubernetes-group-version-kind': gvk,
        };
    const base = `/${gvPath(group, version)}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.plural}`;
    const list = {
      'x-kubernetes-action': 'list',
      'x-kubernetes-group-version-kind': gvk[0],
      responses: { '200': { description: 'OK' } },
    };
    if (def.review) {
      paths[base] = {
        post: {
          'x-kubernetes-action': 'post',
          'x-kubernetes-group-version-kind': gvk[0],
          parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
          responses: { '201': { content: { 'application/json': { schema: { $ref: ref } } } } },
        },
      };
      continue;
    }
    paths[base] = {
      get: list,
      post: {
        'x-kubernetes-action': 'post',
        'x-kubernetes-group-version-kind': gvk[0],
        parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
        responses: { '201': { content: { 'application/json': { schema: { $ref: ref } } } } },
      },
    };
    if (def.namespaced) paths[`/${gvPath(group, version)}/${def.plural}`] = { get: list };
    paths[`${base}/{name}`] = operations(def, ref);
    for (const sub of [...(def.status ? ['status'] : []), ...def.subresources])
      paths[`${base}/{name}/${sub}`] = operations(def, ref, sub);
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: gitVersion },
    paths,
    components: { schemas },
  };
}

/** `/openapi/v3`: where each group-version's document is, with a content hash as real servers give. */
export function openApiRoot(defs: ResourceDef[], gitVersion: string): JsonObject {
  const gvs = [...new Set(defs.map((d) => `${d.group}\u0000${d.version}`))].sort();
  const paths: JsonObject = {};
  for (const gv of gvs) {
    const [group = '', version = ''] = gv.split('\u0000');
    const doc = groupVersionDocument(defs, group, version, gitVersion);
    const hash = createHash('sha512')
      .update(JSON.stringify(doc))
      .digest('hex')
      .slice(0, 128)
      .toUpperCase();
    paths[gvPath(group, version)] = {
      serverRelativeURL: `/openapi/v3/${gvPath(group, version)}?hash=${hash}`,
    };
  }
  return { paths };
}
