import { celEnvironment } from '@fleet/crd-schema';

import type { Attributes, RbacAuthorizer, UserInfo } from './authorization.js';
import { ApiError, forbidden } from './errors.js';
import type { ResourceDef } from './resources.js';
import { labelSelectorRequirements, matchesLabels } from './selectors.js';
import { deepEqual, isObject, type JsonObject, type KubeObject } from './util.js';

// Validating admission as a real OpenShift API server runs it after schema validation:
// OwnerReferencesPermissionEnforcement (OpenShift enables it) and ValidatingAdmissionPolicies
// with their bindings, evaluated with the same CEL engine as CRD validation rules.

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  operation: Operation;
  def: ResourceDef;
  subresource?: string;
  name: string;
  namespace?: string;
  object?: KubeObject;
  oldObject?: KubeObject;
  user: UserInfo;
  dryRun: boolean;
}

/** What admission reads from the server: stored objects, RBAC, the kinds it serves. */
export interface AdmissionContext {
  authorizer: RbacAuthorizer;
  list(apiVersion: string, kind: string): KubeObject[];
  get(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined;
  /** resource definitions a kind is served as (owner references name kinds) */
  defsForKind(apiVersion: string, kind: string): ResourceDef[];
}

// ------------------------------------------------------------ OwnerReferencesPermissionEnforcement

interface OwnerRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  blockOwnerDeletion?: boolean;
}
const refs = (o: KubeObject | undefined): OwnerRef[] =>
  (o?.metadata?.ownerReferences as OwnerRef[] | undefined) ?? [];

/** kube's admission.NewForbidden: `<resource> "<name>" is forbidden: <why>`. */
function admissionForbidden(a: AdmissionAttributes, why: string): ApiError {
  return forbidden(a.def.plural, a.def.group, a.name, why);
}

/**
 * plugin/pkg/admission/gc: changing ownerReferences needs `delete` on the object (except on
 * create); setting blockOwnerDeletion needs `update` on the owner's `finalizers` subresource.
 */
export function enforceOwnerReferences(ctx: AdmissionContext, a: AdmissionAttributes): void {
  if (a.operation === 'DELETE') return;
  if (a.def.group === '' && a.def.plural === 'pods' && a.subresource === 'status') return;
  const next = refs(a.object);
  const prev = refs(a.oldObject);
  if (a.operation === 'CREATE' ? next.length === 0 : deepEqual(next, prev)) return;
  const allowed = (attrs: Omit<Attributes, 'user' | 'resourceRequest'>): boolean =>
    ctx.authorizer.authorize({ user: a.user, resourceRequest: true, ...attrs }).allowed;
  if (
    a.operation !== 'CREATE' &&
    !allowed({
      verb: 'delete',
      apiGroup: a.def.group,
      apiVersion: a.def.version,
      resource: a.def.plural,
      ...(a.subresource ? { subresource: a.subresource } : {}),
      name: a.name,
      ...(a.namespace ? { namespace: a.namespace } : {}),
    })
  )
    throw admissionForbidden(a, "cannot set an ownerRef on a resource you can't delete: , <nil>");
  const blocking = next.filter(
    (r) =>
      r.blockOwnerDeletion === true &&
      !prev.some((p) => p.uid === r.uid && p.blockOwnerDeletion === true),
  );
  if (!blocking.length) return;
  if (allowed({ verb: 'update', apiGroup: '*', resource: '*', subresource: 'finalizers' })) return;
  for (const ref of blocking) {
    const defs = ctx.defsForKind(ref.apiVersion ?? '', ref.kind ?? '');
    if (!defs.length)
      throw admissionForbidden(
        a,
        `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion ?? ''} Kind ${ref.kind ?? ''}: no matches for kind "${ref.kind ?? ''}" in version "${ref.apiVersion ?? ''}"`,
      );
    for (const d of defs)
      if (
        !allowed({
          verb: 'update',
          apiGroup: d.group,
          apiVersion: d.version,
          resource: d.plural,
          subresource: 'finalizers',
          name: ref.name ?? '',
          ...(d.namespaced && a.namespace ? { namespace: a.namespace } : {}),
        })
      )
        throw admissionForbidden(
          a,
          `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`,
        );
  }
}

// ------------------------------------------------------------ ValidatingAdmissionPolicy

const VAP = 'admissionregistration.k8s.io/v1';

interface Compiled {
  run?: (ctx: Record<string, unknown>) => unknown;
  error?: string;
}
const compiled = new Map<string, Compiled>();
let vapEnv: ReturnType<typeof celEnvironment> | undefined;

function compile(expression: string): Compiled {
  const hit = compiled.get(expression);
  if (hit) return hit;
  vapEnv ??= celEnvironment()
    .clone()
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'dyn')
    .registerVariable('params', 'dyn')
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('variables', 'dyn');
  let c: Compiled;
  try {
    const checked = vapEnv.check(expression);
    if (!checked.valid) throw checked.error ?? new Error('type check failed');
    c = { run: vapEnv.parse(expression) };
  } catch (e) {
    c = { error: firstLine(e) };
  }
  compiled.set(expression, c);
  return c;
}

/** cel-go words runtime errors in lower case and on one line (`no such key: x`). */
function firstLine(e: unknown): string {
  const line = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
  return line.replace(/^No such key/, 'no such key');
}

/** JSON as CEL sees it: integers are int (BigInt). */
function toCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCel);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  return v;
}

interface Rule {
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  operations?: string[];
  scope?: string;
  resourceNames?: string[];
}

const listHas = (list: string[] | undefined, v: string): boolean =>
  !!list && (list.includes('*') || list.includes(v));

function ruleMatches(rule: Rule, a: AdmissionAttributes): boolean {
  if (!listHas(rule.operations, a.operation)) return false;
  if (!listHas(rule.apiGroups, a.def.group) || !listHas(rule.apiVersions, a.def.version))
    return false;
  const resource = a.subresource ? `${a.def.plural}/${a.subresource}` : a.def.plural;
  const resources = rule.resources ?? [];
  const resOk = resources.some(
    (r) =>
      r === resource ||
      (r === '*' && !a.subresource) ||
      r === '*/*' ||
      (a.subresource && (r === `*/${a.subresource}` || r === `${a.def.plural}/*`)),
  );
  if (!resOk) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && a.def.namespaced) return false;
  if (scope === 'Namespaced' && !a.def.namespaced) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name);
}

function matches(
  ctx: AdmissionContext,
  m: JsonObject | undefined,
  a: AdmissionAttributes,
  forBinding = false,
): boolean {
  if (!m) return true;
  const rules = (m.resourceRules as Rule[] | undefined) ?? [];
  // A binding without resourceRules validates all its policy matches.
  if ((rules.length || !forBinding) && !rules.some((r) => ruleMatches(r, a))) return false;
  if (((m.excludeResourceRules as Rule[] | undefined) ?? []).some((r) => ruleMatches(r, a)))
    return false;
  if (m.namespaceSelector !== undefined) {
    const reqs = labelSelectorRequirements(m.namespaceSelector);
    if (a.def.namespaced && a.namespace) {
      const ns = ctx.get('v1', 'Namespace', a.namespace);
      if (!matchesLabels(reqs, ns?.metadata?.labels)) return false;
    } else if (a.def.group === '' && a.def.kind === 'Namespace') {
      const o = a.object ?? a.oldObject;
      if (!matchesLabels(reqs, o?.metadata?.labels)) return false;
    }
  }
  if (m.objectSelector !== undefined) {
    const reqs = labelSelectorRequirements(m.objectSelector);
    const hit = [a.object, a.oldObject].some(
      (o) => o !== undefined && matchesLabels(reqs, o.metadata?.labels),
    );
    if (!hit) return false;
  }
  return true;
}

function requestVariable(a: AdmissionAttributes): JsonObject {
  const gvk = { group: a.def.group, version: a.def.version, kind: a.def.kind };
  const gvr = { group: a.def.group, version: a.def.version, resource: a.def.plural };
  return {
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    subResource: a.subresource ?? '',
    name: a.name,
    namespace: a.namespace ?? '',
    operation: a.operation,
    userInfo: { username: a.user.username, groups: a.user.groups },
    dryRun: a.dryRun,
  };
}

export interface AdmissionResult {
  warnings: string[];
}

/** Every binding whose policy matches the request: evaluated as the policy plugin does. */
export function validatingAdmissionPolicies(
  ctx: AdmissionContext,
  a: AdmissionAttributes,
): AdmissionResult {
  const warnings: string[] = [];
  const bindings = ctx.list(VAP, 'ValidatingAdmissionPolicyBinding');
  if (!bindings.length) return { warnings };
  const policies = new Map(
    ctx.list(VAP, 'ValidatingAdmissionPolicy').map((p) => [p.metadata?.name ?? '', p]),
  );
  for (const binding of bindings) {
    const bspec = (binding.spec ?? {}) as JsonObject;
    const policy = policies.get(typeof bspec.policyName === 'string' ? bspec.policyName : '');
    if (!policy) continue;
    const pspec = (policy.spec ?? {}) as JsonObject;
    if (!matches(ctx, pspec.matchConstraints as JsonObject | undefined, a)) continue;
    if (!matches(ctx, bspec.matchResources as JsonObject | undefined, a, true)) continue;
    const denyDecision = evaluate(ctx, policy, binding, a);
    if (!denyDecision) continue;
    const actions = (bspec.validationActions as string[] | undefined) ?? [];
    const label = `ValidatingAdmissionPolicy '${policy.metadata?.name ?? ''}' with binding '${binding.metadata?.name ?? ''}'`;
    if (actions.includes('Warn'))
      warnings.push(`Validation failed for ${label}: ${denyDecision.message}`);
    if (actions.includes('Deny')) {
      const message = `${label} denied request: ${denyDecision.message}`;
      const reason = denyDecision.reason || 'Invalid';
      const code =
        { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 }[reason] ??
        422;
      const err = admissionForbidden(a, message);
      throw new ApiError(code, reason, err.message, {
        ...err.details,
        causes: [{ message } as never],
      });
    }
  }
  return { warnings };
}

interface Denial {
  message: string;
  reason: string;
}

/** The first failed validation of one policy under one binding (and its params), if any. */
function evaluate(
  ctx: AdmissionContext,
  policy: KubeObject,
  binding: KubeObject,
  a: AdmissionAttributes,
): Denial | undefined {
  const pspec = (policy.spec ?? {}) as JsonObject;
  const bspec = (binding.spec ?? {}) as JsonObject;
  const failClosed = (pspec.failurePolicy ?? 'Fail') !== 'Ignore';
  const onError = (message: string): Denial | undefined =>
    failClosed ? { message, reason: '' } : undefined;

  let paramSets: (KubeObject | null)[] = [null];
  const paramKind = pspec.paramKind as { apiVersion?: string; kind?: string } | undefined;
  if (paramKind?.kind) {
    const ref = bspec.paramRef as
      | {
          name?: string;
          namespace?: string;
          selector?: JsonObject;
          parameterNotFoundAction?: string;
        }
      | undefined;
    if (!ref) return onError(`failed to configure binding: paramRef is required`);
    const defs = ctx.defsForKind(paramKind.apiVersion ?? '', paramKind.kind);
    const namespaced = defs[0]?.namespaced ?? false;
    const ns = namespaced ? (ref.namespace ?? a.namespace) : undefined;
    if (ref.name) {
      const p = ctx.get(paramKind.apiVersion ?? '', paramKind.kind, ref.name, ns);
      paramSets = p ? [p] : [];
    } else {
      const reqs = labelSelectorRequirements(ref.selector ?? {});
      paramSets = ctx
        .list(paramKind.apiVersion ?? '', paramKind.kind)
        .filter(
          (p) => (!ns || p.metadata?.namespace === ns) && matchesLabels(reqs, p.metadata?.labels),
        );
    }
    if (!paramSets.length) {
      if (ref.parameterNotFoundAction === 'Deny')
        return {
          message: 'no params found for policy binding with `Deny` parameterNotFoundAction',
          reason: '',
        };
      return undefined;
    }
  }

  const namespaceObject =
    a.def.namespaced && a.namespace ? (ctx.get('v1', 'Namespace', a.namespace) ?? null) : null;
  for (const params of paramSets) {
    const vars: Record<string, unknown> = {
      object: a.object ? toCel(a.object) : null,
      oldObject: a.oldObject ? toCel(a.oldObject) : null,
      request: toCel(requestVariable(a)),
      params: params ? toCel(params) : null,
      namespaceObject: namespaceObject ? toCel(namespaceObject) : null,
      variables: {},
    };
    const run = (expression: string): { value?: unknown; error?: string } => {
      const c = compile(expression);
      if (c.error) return { error: `compilation error: ${c.error}` };
      try {
        return { value: c.run!(vars) };
      } catch (e) {
        return { error: `expression '${expression}' resulted in error: ${firstLine(e)}` };
      }
    };
    for (const mc of (pspec.matchConditions as { name: string; expression: string }[]) ?? []) {
      const r = run(mc.expression);
      if (r.error) return onError(`failed to evaluate matchCondition '${mc.name}': ${r.error}`);
      if (r.value !== true) return undefined;
    }
    const variables: Record<string, unknown> = {};
    for (const v of (pspec.variables as { name: string; expression: string }[]) ?? []) {
      const r = run(v.expression);
      if (r.error) return onError(r.error);
      variables[v.name] = r.value;
    }
    vars.variables = variables;
    for (const v of (pspec.validations as JsonObject[] | undefined) ?? []) {
      const expression = typeof v.expression === 'string' ? v.expression : '';
      const r = run(expression);
      if (r.error) {
        const d = onError(r.error);
        if (d) return d;
        continue;
      }
      if (r.value === true) continue;
      if (typeof r.value !== 'boolean')
        return onError(`expression '${expression}' resulted in error: must evaluate to bool`);
      let message = typeof v.message === 'string' && v.message ? v.message : '';
      if (typeof v.messageExpression === 'string') {
        const m = run(v.messageExpression);
        if (!m.error && typeof m.value === 'string' && m.value.trim() && !m.value.includes('\n'))
          message = m.value;
      }
      if (!message) message = `failed expression: ${expression}`;
      return { message, reason: typeof v.reason === 'string' ? v.reason : '' };
    }
  }
  return undefined;
}
