import { ApiError, qualifiedResource } from './errors.js';
import { labelSelectorRequirements, matchesLabels } from './selectors.js';
import type { JsonObject, KubeObject } from './util.js';

// RBAC as kube-apiserver's RBAC authorizer evaluates it (k8s.io/kubernetes/plugin/pkg/auth/
// authorizer/rbac): ClusterRoleBindings grant their ClusterRole everywhere, RoleBindings grant a
// Role or ClusterRole in their own namespace, subjects are users, groups or service accounts.
// `system:masters` is allowed everything before RBAC is asked, as kube-apiserver's
// privileged-group authorizer does.

export interface UserInfo {
  username: string;
  groups: string[];
}

/** What kube-apiserver's request-info resolver derives from a request (authorizer.Attributes). */
export interface Attributes {
  user: UserInfo;
  verb: string;
  resourceRequest: boolean;
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  namespace?: string;
  /** non-resource requests: the URL path */
  path?: string;
}

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** Reads the stored RBAC objects. */
export interface RbacObjects {
  clusterRoles(): KubeObject[];
  clusterRoleBindings(): KubeObject[];
  roles(namespace: string): KubeObject[];
  roleBindings(namespace: string): KubeObject[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const has = (list: string[] | undefined, v: string): boolean =>
  !!list && (list.includes('*') || list.includes(v));

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    // `*/status` matches every resource's status; `pods/*` every subresource of pods.
    if (subresource && (r === `*/${subresource}` || r === `${resource}/*`)) return true;
  }
  return false;
}

function nonResourceMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
  );
}

export function ruleAllows(a: Omit<Attributes, 'user'>, rule: PolicyRule): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.resourceRequest) return nonResourceMatches(rule, a.path ?? '');
  if (!has(rule.apiGroups, a.apiGroup ?? '')) return false;
  if (!resourceMatches(rule, a.resource ?? '', a.subresource ?? '')) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name ?? '');
}

function subjectMatches(subject: JsonObject, user: UserInfo, bindingNamespace: string): boolean {
  const name = str(subject.name);
  switch (subject.kind) {
    case 'User':
      return user.username === name;
    case 'Group':
      return user.groups.includes(name);
    case 'ServiceAccount': {
      const ns = str(subject.namespace) || bindingNamespace;
      return user.username === `system:serviceaccount:${ns}:${name}`;
    }
    default:
      return false;
  }
}

/** One authorization decision, as kube-apiserver's audit log would record it. */
export interface AuthorizationDecision {
  attributes: Attributes;
  allowed: boolean;
}

export class RbacAuthorizer {
  private readonly listeners = new Set<(d: AuthorizationDecision) => void>();

  constructor(private readonly store: RbacObjects) {}

  /**
   * Every decision from now on, request checks and the escalate/bind/approve checks alike; lets a
   * test record exactly what a client was allowed and refused. Returns an unsubscribe function.
   */
  onDecision(listener: (d: AuthorizationDecision) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Rules of a ClusterRole, aggregated ones included (what the aggregation controller stores). */
  private clusterRoleRules(name: string, seen = new Set<string>()): PolicyRule[] {
    if (seen.has(name)) return [];
    seen.add(name);
    const all = this.store.clusterRoles();
    const role = all.find((r) => r.metadata?.name === name);
    if (!role) return [];
    const rules = [...((role.rules as PolicyRule[] | undefined) ?? [])];
    const aggregation = role.aggregationRule as { clusterRoleSelectors?: JsonObject[] } | undefined;
    for (const selector of aggregation?.clusterRoleSelectors ?? []) {
      const reqs = labelSelectorRequirements(selector);
      for (const other of all)
        if (other.metadata?.name !== name && matchesLabels(reqs, other.metadata?.labels))
          rules.push(...this.clusterRoleRules(other.metadata?.name ?? '', seen));
    }
    return rules;
  }

  /** Every rule granted to `user` that applies in `namespace` (cluster-wide ones when undefined). */
  rulesFor(user: UserInfo, namespace: string | undefined): PolicyRule[] {
    const rules: PolicyRule[] = [];
    for (const b of this.store.clusterRoleBindings()) {
      const subjects = (b.subjects as JsonObject[] | undefined) ?? [];
      if (!subjects.some((s) => subjectMatches(s, user, ''))) continue;
      const ref = b.roleRef as JsonObject | undefined;
      if (ref?.kind === 'ClusterRole') rules.push(...this.clusterRoleRules(String(ref.name)));
    }
    if (!namespace) return rules;
    for (const b of this.store.roleBindings(namespace)) {
      const subjects = (b.subjects as JsonObject[] | undefined) ?? [];
      if (!subjects.some((s) => subjectMatches(s, user, namespace))) continue;
      const ref = b.roleRef as JsonObject | undefined;
      if (ref?.kind === 'ClusterRole') rules.push(...this.clusterRoleRules(String(ref.name)));
      else if (ref?.kind === 'Role') {
        const role = this.store.roles(namespace).find((r) => r.metadata?.name === ref.name);
        rules.push(...((role?.rules as PolicyRule[] | undefined) ?? []));
      }
    }
    return rules;
  }

  /** Rules of the role a binding refers to (for the `bind` escalation check). */
  roleRefRules(ref: JsonObject, namespace: string | undefined): PolicyRule[] {
    if (ref.kind === 'ClusterRole') return this.clusterRoleRules(String(ref.name));
    if (ref.kind === 'Role' && namespace) {
      const role = this.store.roles(namespace).find((r) => r.metadata?.name === ref.name);
      return (role?.rules as PolicyRule[] | undefined) ?? [];
    }
    return [];
  }

  authorize(a: Attributes): { allowed: boolean; reason: string } {
    const decision = this.decide(a);
    for (const l of this.listeners) l({ attributes: a, allowed: decision.allowed });
    return decision;
  }

  private decide(a: Attributes): { allowed: boolean; reason: string } {
    if (a.user.groups.includes('system:masters')) return { allowed: true, reason: '' };
    const ns = a.resourceRequest ? a.namespace : undefined;
    for (const b of this.store.clusterRoleBindings()) {
      const subjects = (b.subjects as JsonObject[] | undefined) ?? [];
      if (!subjects.some((s) => subjectMatches(s, a.user, ''))) continue;
      const ref = b.roleRef as JsonObject | undefined;
      if (ref?.kind !== 'ClusterRole') continue;
      if (this.clusterRoleRules(String(ref.name)).some((r) => ruleAllows(a, r)))
        return {
          allowed: true,
          reason: `RBAC: allowed by ClusterRoleBinding "${String(b.metadata?.name)}" of ClusterRole "${String(ref.name)}" to ${describeSubjects(b, a.user, '')}`,
        };
    }
    if (ns)
      for (const b of this.store.roleBindings(ns)) {
        const subjects = (b.subjects as JsonObject[] | undefined) ?? [];
        if (!subjects.some((s) => subjectMatches(s, a.user, ns))) continue;
        const ref = b.roleRef as JsonObject;
        const rules = this.roleRefRules(ref, ns);
        if (rules.some((r) => ruleAllows(a, r)))
          return {
            allowed: true,
            reason: `RBAC: allowed by RoleBinding "${String(b.metadata?.name)}/${ns}" of ${String(ref.kind)} "${String(ref.name)}" to ${describeSubjects(b, a.user, ns)}`,
          };
      }
    return { allowed: false, reason: '' };
  }

  /**
   * The rules in `requested` that `user` does not hold in `namespace`, broken down as the RBAC
   * escalation check does (one verb, group, resource and name at a time).
   */
  uncovered(user: UserInfo, namespace: string | undefined, requested: PolicyRule[]): PolicyRule[] {
    if (user.groups.includes('system:masters')) return [];
    const owned = this.rulesFor(user, namespace);
    const missing: PolicyRule[] = [];
    for (const rule of requested) {
      for (const verb of rule.verbs ?? []) {
        if (rule.nonResourceURLs?.length) {
          for (const url of rule.nonResourceURLs)
            if (
              !owned.some(
                (o) =>
                  has(o.verbs, verb) &&
                  (o.nonResourceURLs ?? []).some(
                    (u) =>
                      u === '*' || u === url || (u.endsWith('*') && url.startsWith(u.slice(0, -1))),
                  ),
              )
            )
              missing.push({ nonResourceURLs: [url], verbs: [verb] });
          continue;
        }
        for (const group of rule.apiGroups ?? [])
          for (const resource of rule.resources ?? [])
            for (const name of rule.resourceNames?.length ? rule.resourceNames : [undefined]) {
              const covered = owned.some(
                (o) =>
                  has(o.verbs, verb) &&
                  has(o.apiGroups, group) &&
                  (o.resources ?? []).some(
                    (r) =>
                      r === '*' ||
                      r === resource ||
                      (resource.includes('/') && r === `${resource.split('/')[0]!}/*`),
                  ) &&
                  (!o.resourceNames?.length ||
                    (name !== undefined && o.resourceNames.includes(name))),
              );
              if (!covered)
                missing.push({
                  apiGroups: [group],
                  resources: [resource],
                  ...(name !== undefined ? { resourceNames: [name] } : {}),
                  verbs: [verb],
                });
            }
      }
    }
    return missing;
  }
}

function describeSubjects(binding: KubeObject, user: UserInfo, ns: string): string {
  const s = ((binding.subjects as JsonObject[] | undefined) ?? []).find((x) =>
    subjectMatches(x, user, ns),
  );
  if (!s) return '';
  if (s.kind === 'ServiceAccount')
    return `ServiceAccount "${str(s.namespace) || ns}/${String(s.name)}"`;
  return `${String(s.kind)} "${String(s.name)}"`;
}

/** kube-apiserver's forbiddenMessage (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters). */
export function forbiddenMessage(a: Attributes): string {
  if (!a.resourceRequest)
    return `User "${a.user.username}" cannot ${a.verb} path "${a.path ?? ''}"`;
  const resource = a.subresource ? `${a.resource ?? ''}/${a.subresource}` : (a.resource ?? '');
  const where = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `User "${a.user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup ?? ''}" ${where}`;
}

/** The 403 a real server answers when the authorizer says no (errors.NewForbidden). */
export function forbiddenError(a: Attributes, reason = ''): ApiError {
  const msg = forbiddenMessage(a) + (reason ? `: ${reason}` : '');
  if (!a.resourceRequest) return new ApiError(403, 'Forbidden', `forbidden: ${msg}`, {});
  const qr = qualifiedResource(a.resource ?? '', a.apiGroup ?? '');
  const details: { name?: string; group?: string; kind: string } = { kind: a.resource ?? '' };
  if (a.name) details.name = a.name;
  if (a.apiGroup) details.group = a.apiGroup;
  return new ApiError(
    403,
    'Forbidden',
    a.name ? `${qr} "${a.name}" is forbidden: ${msg}` : `${qr} is forbidden: ${msg}`,
    details,
  );
}

/** How kube-apiserver prints a PolicyRule in escalation errors (rbacv1helpers.CompactString). */
export function compactRule(r: PolicyRule): string {
  const parts: string[] = [];
  const list = (name: string, v: string[] | undefined) => {
    if (v?.length) parts.push(`${name}:[${v.map((x) => JSON.stringify(x)).join(' ')}]`);
  };
  list('APIGroups', r.apiGroups);
  list('Resources', r.resources);
  list('ResourceNames', r.resourceNames);
  list('NonResourceURLs', r.nonResourceURLs);
  list('Verbs', r.verbs);
  return `{${parts.join(', ')}}`;
}

/** The ClusterRoles and bindings kube-apiserver bootstraps that every client relies on. */
export function bootstrapRbac(): KubeObject[] {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const labels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
  const annotations = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };
  const role = (name: string, rules: PolicyRule[]): KubeObject => ({
    apiVersion: rbac,
    kind: 'ClusterRole',
    metadata: { name, labels, annotations },
    rules: rules,
  });
  const binding = (name: string, groups: string[]): KubeObject => ({
    apiVersion: rbac,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels, annotations },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((g) => ({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Group',
      name: g,
    })),
  });
  return [
    role('cluster-admin', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]),
    binding('cluster-admin', ['system:masters']),
    role('system:discovery', [
      {
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
        verbs: ['get'],
      },
    ]),
    binding('system:discovery', ['system:authenticated']),
    role('system:basic-user', [
      {
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        verbs: ['create'],
      },
      {
        apiGroups: ['authentication.k8s.io'],
        resources: ['selfsubjectreviews'],
        verbs: ['create'],
      },
    ]),
    binding('system:basic-user', ['system:authenticated']),
    // Bound by OpenShift's machine-config-operator to its node-bootstrapper service account.
    role('system:node-bootstrapper', [
      {
        apiGroups: ['certificates.k8s.io'],
        resources: ['certificatesigningrequests'],
        verbs: ['create', 'get', 'list', 'watch'],
      },
    ]),
    role('system:public-info-viewer', [
      {
        nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'],
        verbs: ['get'],
      },
    ]),
    binding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  ];
}
