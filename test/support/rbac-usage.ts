import type { Attributes, AuthorizationDecision } from './kube-apiserver/authorization.js';
import type { KubeApiServerEmulator, KubeObject } from './kube-apiserver/index.js';

/**
 * One permission, as small as RBAC can grant it: a verb on a resource (or subresource) of a
 * group, cluster-wide (`namespace` undefined) or in one namespace, for every name or one.
 */
export interface Permission {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}

export const describePermission = (p: Permission): string =>
  `${p.verb} ${p.group || 'core'}/${p.resource}` +
  (p.namespace ? ` in ${p.namespace}` : ' cluster-wide') +
  (p.name ? ` named ${p.name}` : '');

const resourceOf = (a: Attributes): string =>
  a.subresource ? `${a.resource ?? ''}/${a.subresource}` : (a.resource ?? '');

/**
 * What `subject` (a service account) is granted by the RBAC documents given, rule by rule broken
 * down into permissions: a ClusterRoleBinding grants cluster-wide, a RoleBinding in its namespace.
 */
export function grantedPermissions(docs: readonly KubeObject[], subject: string): Permission[] {
  const [, , saNamespace, saName] = subject.split(':');
  const bound = (binding: KubeObject): boolean =>
    (
      (binding.subjects as { kind: string; name: string; namespace?: string }[] | undefined) ?? []
    ).some(
      (s) =>
        s.kind === 'ServiceAccount' &&
        s.name === saName &&
        (s.namespace ?? binding.metadata?.namespace) === saNamespace,
    );
  const rulesOf = (kind: string, name: string, namespace?: string): Rule[] =>
    (docs.find(
      (d) =>
        d.kind === kind &&
        d.metadata?.name === name &&
        (kind === 'ClusterRole' || d.metadata?.namespace === namespace),
    )?.rules as Rule[] | undefined) ?? [];
  const out: Permission[] = [];
  for (const binding of docs) {
    if (binding.kind !== 'ClusterRoleBinding' && binding.kind !== 'RoleBinding') continue;
    if (!bound(binding)) continue;
    const namespace = binding.kind === 'RoleBinding' ? binding.metadata?.namespace : undefined;
    const ref = binding.roleRef as { kind: string; name: string };
    for (const rule of rulesOf(ref.kind, ref.name, namespace))
      for (const verb of rule.verbs ?? [])
        for (const group of rule.apiGroups ?? [])
          for (const resource of rule.resources ?? [])
            for (const name of rule.resourceNames?.length ? rule.resourceNames : [undefined])
              out.push({
                verb,
                group,
                resource,
                ...(namespace ? { namespace } : {}),
                ...(name ? { name } : {}),
              });
  }
  return out;
}

/**
 * Whether a request made use of a permission. A permission for every name cluster-wide is used
 * only by a request that needed it cluster-wide (a list or watch across namespaces, or a
 * cluster-scoped object): one used in a single namespace should have been a Role there.
 */
function uses(a: Attributes, p: Permission): boolean {
  if (a.verb !== p.verb || (a.apiGroup ?? '') !== p.group || resourceOf(a) !== p.resource)
    return false;
  if (p.name !== undefined && a.name !== p.name) return false;
  if (p.namespace !== undefined) return a.namespace === p.namespace;
  // Namespace `*`: a check kube-apiserver makes for every namespace at once (a policy's paramKind).
  return p.name !== undefined || a.namespace === undefined || a.namespace === '*';
}

export interface RbacUsage {
  /** Every authorization decision made for the subject since recording started. */
  readonly decisions: AuthorizationDecision[];
  /** What was allowed, each request described once (for the reader of a failure). */
  used(): string[];
  /** Requests the API server refused: the manifest grants too little. */
  refused(): string[];
  /** Granted permissions no request used: the manifest grants too much. */
  unused(granted: readonly Permission[]): string[];
  stop(): void;
}

/** Records every authorization decision the emulator makes for `username`. */
export function recordRbacUsage(kube: KubeApiServerEmulator, username: string): RbacUsage {
  const decisions: AuthorizationDecision[] = [];
  const stop = kube.authorizer.onDecision((d) => {
    if (d.attributes.user.username === username) decisions.push(d);
  });
  const describe = (a: Attributes): string =>
    a.resourceRequest
      ? describePermission({
          verb: a.verb,
          group: a.apiGroup ?? '',
          resource: resourceOf(a),
          ...(a.namespace ? { namespace: a.namespace } : {}),
          ...(a.name ? { name: a.name } : {}),
        })
      : `${a.verb} ${a.path ?? ''}`;
  return {
    decisions,
    used: () => [...new Set(decisions.filter((d) => d.allowed).map((d) => describe(d.attributes)))],
    refused: () => [
      ...new Set(decisions.filter((d) => !d.allowed).map((d) => describe(d.attributes))),
    ],
    unused: (granted) =>
      granted
        .filter((p) => !decisions.some((d) => d.allowed && uses(d.attributes, p)))
        .map(describePermission),
    stop,
  };
}

/** What a real API server's audit log says of a request, as much as `uses` reads. */
interface AuditedRequest {
  verb: string;
  responseStatus?: { code: number };
  objectRef?: {
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
  };
}

/**
 * Granted permissions no allowed request in a real API server's audit log used (the log's verbs
 * are the authorizer's: `list`, `watch`, `patch`…): the manifest grants too much.
 */
export function unusedInAuditLog(
  granted: readonly Permission[],
  requests: readonly AuditedRequest[],
): string[] {
  const allowed = requests
    .filter((r) => r.objectRef?.resource && r.responseStatus && r.responseStatus.code !== 403)
    // A server-side apply that created its object (201) was authorized for `create` as well.
    .flatMap((r) =>
      r.verb === 'patch' && r.responseStatus?.code === 201 ? [r, { ...r, verb: 'create' }] : [r],
    )
    .map((r): Attributes => ({
      user: { username: '', groups: [] },
      verb: r.verb,
      resourceRequest: true,
      apiGroup: r.objectRef?.apiGroup ?? '',
      resource: r.objectRef?.resource,
      ...(r.objectRef?.subresource ? { subresource: r.objectRef.subresource } : {}),
      ...(r.objectRef?.name ? { name: r.objectRef.name } : {}),
      ...(r.objectRef?.namespace ? { namespace: r.objectRef.namespace } : {}),
    }));
  return granted.filter((p) => !allowed.some((a) => uses(a, p))).map(describePermission);
}
