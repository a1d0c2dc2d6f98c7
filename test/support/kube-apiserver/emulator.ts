import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request as httpsRequest, type Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseAllDocuments } from 'yaml';

import { upstreamReleases } from '../upstream-binaries.js';

import type { CelCompileFailure } from '@fleet/crd-schema';
import {
  alreadyExists,
  ApiError,
  badRequest,
  cause,
  conflict,
  expired,
  forbidden,
  invalid,
  notFound,
  STALE_RV,
  StatusCause,
} from './errors.js';
import {
  apply as ssaApply,
  ManagerState,
  TypeRef,
  updateOwnership,
  writeManagers,
  displayPath,
} from './fieldset.js';
import {
  enforceOwnerReferences,
  validatingAdmissionPolicies,
  type AdmissionAttributes,
  type AdmissionContext,
} from './admission.js';
import {
  bootstrapRbac,
  compactRule,
  forbiddenError,
  RbacAuthorizer,
  type Attributes,
  type PolicyRule,
} from './authorization.js';
import { CertificateAuthority, certificateRequestSubject } from './certificates.js';
import { handleHttp } from './http.js';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.js';
import { builtinDefs, defsFromCrd, ResourceDef, WriteContext } from './resources.js';
import {
  FieldRequirement,
  LabelRequirement,
  labelSelectorRequirements,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from './selectors.js';
import {
  clone,
  deepEqual,
  isObject,
  JsonObject,
  KubeObject,
  ManagedFieldsEntry,
  newUid,
  nowIso,
  randomSuffix,
  splitApiVersion,
  validateObjectMeta,
} from './util.js';

export type { KubeObject } from './util.js';

export interface KubeApiServerEmulatorOptions {
  host?: string;
  port?: number;
  /** bearer token clients must present; random by default */
  token?: string;
  /** user name the token authenticates as (shows up in CSR spec.username) */
  username?: string;
  /** watch events kept per resource type before a watch from an older resourceVersion gets 410 */
  watchHistorySize?: number;
  /** interval of BOOKMARK events for watches that allow them */
  bookmarkIntervalMs?: number;
  /** create default, kube-system, kube-public, kube-node-lease (default true) */
  defaultNamespaces?: boolean;
  /** reported by /version; by default the pinned Kubernetes release (test/upstream/versions.json) */
  gitVersion?: string;
  /**
   * create the ClusterRoles and bindings kube-apiserver bootstraps (cluster-admin for
   * system:masters, discovery and self-reviews for every authenticated user); default true
   */
  bootstrapRbac?: boolean;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  fieldManager?: string;
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  force?: boolean;
  userAgent?: string;
  /** who makes the request (default: the emulator's own user); see `addUser` */
  user?: EmulatorUser;
}

/** An authenticated identity: what the API server records as a CSR's spec.username/groups. */
export interface EmulatorUser {
  username: string;
  groups: string[];
}

/** The in-process calls of `em.as(user)`, authorized and admitted as that user. */
export interface InProcessClient {
  get(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined;
  create(obj: KubeObject, opts?: WriteOptions): KubeObject;
  patch(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type?: Exclude<PatchType, 'apply'>,
    opts?: WriteOptions,
  ): KubeObject;
  patchStatus(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    status: JsonObject,
    opts?: WriteOptions,
  ): KubeObject;
  delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    opts?: DeleteOptions,
  ): KubeObject | undefined;
}

export interface DeleteOptions {
  dryRun?: boolean;
  /** who deletes (admission sees it); default: the emulator's own user */
  user?: EmulatorUser;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WriteResult {
  object: KubeObject;
  warnings: string[];
  created: boolean;
}

export interface RequestLogEntry {
  time: number;
  method: string;
  path: string;
  query: string;
  verb: string;
  status: number;
  userAgent?: string;
}

interface StoredEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rv: number;
  obj: KubeObject;
  prev?: KubeObject;
}

interface Watcher {
  def: ResourceDef;
  namespace?: string;
  labels: LabelRequirement[];
  fields: FieldRequirement[];
  send(type: WatchEventType, obj: unknown): void;
  close(): void;
}

interface GroupState {
  /** served versions, preferred first */
  defs: ResourceDef[];
  objects: Map<string, KubeObject>;
  history: StoredEvent[];
  /** resourceVersion of the newest event dropped from history (0: nothing dropped yet) */
  droppedUpTo: number;
  watchers: Set<Watcher>;
}

const objKey = (ns: string | undefined, name: string): string => (ns ? `${ns}/${name}` : name);

/**
 * In-memory Kubernetes API server for tests and demos. See README.md for what is faithful
 * and what is not.
 */
export class KubeApiServerEmulator {
  readonly token: string;
  readonly username: string;
  private readonly users = new Map<string, EmulatorUser>();
  private readonly opts: Required<
    Omit<KubeApiServerEmulatorOptions, 'token' | 'username' | 'bootstrapRbac'>
  >;
  /** RBAC over the Roles, ClusterRoles and bindings stored here. */
  readonly authorizer = new RbacAuthorizer({
    clusterRoles: () => this.storedObjects('rbac.authorization.k8s.io/clusterroles'),
    clusterRoleBindings: () => this.storedObjects('rbac.authorization.k8s.io/clusterrolebindings'),
    roles: (ns) => this.storedObjects('rbac.authorization.k8s.io/roles', ns),
    roleBindings: (ns) => this.storedObjects('rbac.authorization.k8s.io/rolebindings', ns),
  });
  private server?: Server;
  private baseUrl = '';
  /** The emulator's own CA; kubeconfigs carry it as certificate-authority-data. */
  private readonly ca = new CertificateAuthority();
  private readonly serving = this.ca.issueServing(['127.0.0.1', 'localhost', '::1']);
  private rv = 1;
  private ipCounter = 10;
  private readonly groups = new Map<string, GroupState>();
  /** `group/version` → kind → key */
  private readonly byKind = new Map<string, Map<string, string>>();
  private readonly listeners = new Set<(e: RequestLogEntry) => void>();
  private readonly sockets = new Set<import('node:stream').Duplex>();
  private readonly stalls: { method: string; path: string; remaining: number; stalled: number }[] =
    [];
  readonly requests: RequestLogEntry[] = [];

  constructor(options: KubeApiServerEmulatorOptions = {}) {
    this.token = options.token ?? `emulator-${randomSuffix(16)}`;
    this.username = options.username ?? 'system:admin';
    this.opts = {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      watchHistorySize: options.watchHistorySize ?? 1000,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      defaultNamespaces: options.defaultNamespaces ?? true,
      // OpenShift 4.21's Kubernetes, the release test/upstream pins (and builds kubectl from).
      gitVersion: options.gitVersion ?? upstreamReleases().kubernetes!.version!,
    };
    for (const d of builtinDefs()) this.register([d]);
    if (this.opts.defaultNamespaces)
      for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
        this.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    if (options.bootstrapRbac ?? true) for (const o of bootstrapRbac()) this.create(o);
  }

  private readonly admission: AdmissionContext = {
    authorizer: this.authorizer,
    list: (apiVersion, kind) => {
      const def = this.defForKindOrUndefined(apiVersion, kind);
      return def ? [...this.state(def).objects.values()] : [];
    },
    get: (apiVersion, kind, name, namespace) => {
      const def = this.defForKindOrUndefined(apiVersion, kind);
      return def ? this.get(apiVersion, kind, name, namespace) : undefined;
    },
    defsForKind: (apiVersion, kind) => {
      const def = this.defForKindOrUndefined(apiVersion, kind);
      return def ? [def] : [];
    },
  };

  private defForKindOrUndefined(apiVersion: string, kind: string): ResourceDef | undefined {
    try {
      return this.defForKind(apiVersion, kind);
    } catch {
      return undefined;
    }
  }

  /** Validating admission: owner-reference enforcement (for callers), then policies. */
  private admit(a: AdmissionAttributes, enforceOwners: boolean): string[] {
    if (enforceOwners) enforceOwnerReferences(this.admission, a);
    return validatingAdmissionPolicies(this.admission, a).warnings;
  }

  private storedObjects(key: string, namespace?: string): KubeObject[] {
    const objects = [...(this.groups.get(key)?.objects.values() ?? [])];
    return namespace === undefined
      ? objects
      : objects.filter((o) => o.metadata?.namespace === namespace);
  }

  /**
   * Answers a SelfSubjectAccessReview, SubjectAccessReview or LocalSubjectAccessReview as the
   * authorization.k8s.io registry does: evaluated, never stored.
   */
  accessReview(
    def: ResourceDef,
    ns: string | undefined,
    input: KubeObject,
    user: EmulatorUser,
    opts: WriteOptions = {},
  ): KubeObject {
    if (!isObject(input)) throw badRequest('the body of the request was in an unknown format');
    this.checkTypeMeta(def, input);
    const spec = isObject(input.spec) ? input.spec : {};
    if (def.kind === 'SelfSubjectRulesReview') return this.rulesReview(def, spec, user);
    // `kubectl auth whoami`: the authenticated user, echoed in status.
    if (def.kind === 'SelfSubjectReview')
      return {
        apiVersion: `${def.group}/${def.version}`,
        kind: def.kind,
        // Its REST storage stamps the answer with the time of the review.
        metadata: { creationTimestamp: nowIso() },
        status: { userInfo: { username: user.username, groups: user.groups } },
      };
    const ra = isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
    const nra = isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
    const causes: StatusCause[] = [];
    if (!ra && !nra)
      causes.push(
        cause.required(
          'spec.resourceAttributes',
          'exactly one of nonResourceAttributes or resourceAttributes must be specified',
        ),
      );
    if (ra && nra)
      causes.push(
        cause.invalid(
          'spec.nonResourceAttributes',
          nra,
          'cannot be specified in combination with resourceAttributes',
        ),
      );
    let subject: EmulatorUser = user;
    if (def.kind !== 'SelfSubjectAccessReview') {
      const groups = Array.isArray(spec.groups) ? spec.groups.map(String) : [];
      if (!spec.user && !groups.length)
        causes.push(
          cause.invalid('spec.user', '', '`spec.user` or `spec.groups` must be specified'),
        );
      subject = { username: str(spec.user), groups };
    }
    if (def.kind === 'LocalSubjectAccessReview' && ra && (ra.namespace ?? '') !== ns)
      causes.push(
        cause.invalid(
          'spec.resourceAttributes.namespace',
          ra.namespace ?? '',
          'must match metadata.namespace',
        ),
      );
    if (causes.length) throw invalid(def.kind, def.group, '', causes);
    const a: Attributes = ra
      ? {
          user: subject,
          verb: str(ra.verb),
          resourceRequest: true,
          apiGroup: str(ra.group),
          resource: str(ra.resource),
          ...(ra.subresource ? { subresource: str(ra.subresource) } : {}),
          ...(ra.name ? { name: str(ra.name) } : {}),
          ...(ra.namespace ? { namespace: str(ra.namespace) } : {}),
        }
      : {
          user: subject,
          verb: str(nra?.verb),
          resourceRequest: false,
          path: str(nra?.path),
        };
    const decision = this.authorizer.authorize(a);
    const status: JsonObject = { allowed: decision.allowed };
    if (decision.reason) status.reason = decision.reason;
    const outSpec: JsonObject = { ...spec };
    if (def.kind === 'SelfSubjectAccessReview') delete outSpec.user;
    const metadata: JsonObject = {};
    if (def.namespaced && ns) metadata.namespace = ns;
    const review: KubeObject = {
      apiVersion: `${def.group}/${def.version}`,
      kind: def.kind,
      metadata,
      spec: outSpec,
      status,
    };
    // The create path's field manager runs on reviews too: the request's fields, as an update.
    const managers = updateOwnership(
      undefined,
      { apiVersion: review.apiVersion, kind: review.kind, spec: outSpec },
      this.typeRoot(def),
      false,
      this.managerName(opts),
      review.apiVersion!,
      undefined,
    );
    if (managers.length) metadata.managedFields = writeManagers(managers);
    return review;
  }

  /**
   * SelfSubjectRulesReview (`kubectl auth can-i --list`): the RBAC rules that apply to the caller
   * in a namespace, split into resource and non-resource rules, as the RBAC rule resolver lists
   * them (system:masters sees the rules of what it is bound to, cluster-admin).
   */
  private rulesReview(def: ResourceDef, spec: JsonObject, user: EmulatorUser): KubeObject {
    const namespace = str(spec.namespace);
    if (!namespace)
      throw invalid(def.kind, def.group, '', [
        cause.required('spec.namespace', 'must be specified'),
      ]);
    const rules = this.authorizer.rulesFor(user, namespace);
    const resourceRules = rules
      .filter((r) => !r.nonResourceURLs?.length)
      .map((r) => ({
        verbs: r.verbs ?? [],
        apiGroups: r.apiGroups ?? [],
        resources: r.resources ?? [],
        ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
      }));
    const nonResourceRules = rules
      .filter((r) => r.nonResourceURLs?.length)
      .map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs ?? [] }));
    return {
      apiVersion: `${def.group}/${def.version}`,
      kind: def.kind,
      metadata: { creationTimestamp: null },
      spec: { namespace },
      status: { resourceRules, nonResourceRules, incomplete: false },
    } as unknown as KubeObject;
  }

  /** Throws the 403 kube-apiserver answers when RBAC does not allow the request. */
  authorize(a: Attributes): void {
    if (!this.authorizer.authorize(a).allowed) throw forbiddenError(a);
  }

  // ---------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer(
      { cert: this.serving.certPem, key: this.serving.keyPem },
      (req, res) => void this.onHttp(req, res),
    );
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    this.server = server;
    const addr = server.address() as AddressInfo;
    this.baseUrl = `https://${this.opts.host}:${addr.port}`;
  }

  async stop(): Promise<void> {
    for (const g of this.groups.values()) for (const w of [...g.watchers]) w.close();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }

  get url(): string {
    if (!this.baseUrl) throw new Error('KubeApiServerEmulator not started');
    return this.baseUrl;
  }

  /** PEM of the CA that signed the serving certificate (what a client must trust). */
  get caPem(): string {
    return this.ca.certPem;
  }

  /**
   * `fetch` against the emulator that trusts its CA (Node's global fetch cannot be given one).
   * Buffers the whole answer, so not for watches.
   */
  async fetch(
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ): Promise<Response> {
    const url = new URL(path, this.url);
    return new Promise<Response>((resolve, reject) => {
      const req = httpsRequest(
        url,
        { method: init.method ?? 'GET', headers: init.headers ?? {}, ca: this.ca.certPem },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers))
              for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v])
                headers.append(k, one);
            resolve(
              new Response(chunks.length ? Buffer.concat(chunks) : null, {
                status: res.statusCode ?? 0,
                headers,
              }),
            );
          });
        },
      );
      req.on('error', reject);
      req.end(init.body);
    });
  }

  get gitVersion(): string {
    return this.opts.gitVersion;
  }

  kubeconfigYaml(namespace = 'default', token = this.token): string {
    return [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: emulator',
      '  cluster:',
      `    server: ${this.url}`,
      `    certificate-authority-data: ${Buffer.from(this.ca.certPem).toString('base64')}`,
      'users:',
      '- name: emulator-admin',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: emulator',
      '  context:',
      '    cluster: emulator',
      '    user: emulator-admin',
      `    namespace: ${namespace}`,
      'current-context: emulator',
      '',
    ].join('\n');
  }

  private async onHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const entry: RequestLogEntry = {
      time: started,
      method: req.method ?? 'GET',
      path: '',
      query: '',
      verb: '',
      status: 0,
    };
    if (req.headers['user-agent']) entry.userAgent = req.headers['user-agent'];
    const stall = this.stalls.find(
      (s) => s.remaining > 0 && s.method === req.method && (req.url ?? '').startsWith(s.path),
    );
    if (stall) {
      // Accepted and never answered, as by an API server stuck behind a dead etcd; stop()
      // destroys the socket.
      stall.remaining -= 1;
      stall.stalled += 1;
      return;
    }
    res.on('close', () => {
      entry.status = res.statusCode;
      this.requests.push(entry);
      if (this.requests.length > 10_000) this.requests.splice(0, this.requests.length - 10_000);
      for (const l of this.listeners) l(entry);
    });
    await handleHttp(this, req, res, entry);
  }

  /**
   * The next `times` requests of `method` whose URL starts with `path` are accepted and never
   * answered. Returns how many have been held so far.
   */
  stallRequests(method: string, path: string, times = 1): () => number {
    const stall = { method, path, remaining: times, stalled: 0 };
    this.stalls.push(stall);
    return () => stall.stalled;
  }

  /** Subscribe to every finished HTTP request; returns an unsubscribe function. */
  onRequest(listener: (e: RequestLogEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  requestCount(filter: (e: RequestLogEntry) => boolean = () => true): number {
    return this.requests.filter(filter).length;
  }

  clearRequestLog(): void {
    this.requests.length = 0;
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  // ---------------------------------------------------------------- registry

  private register(defs: ResourceDef[]): void {
    const first = defs[0];
    if (!first) return;
    let g = this.groups.get(first.key);
    if (!g) {
      g = { defs: [], objects: new Map(), history: [], droppedUpTo: 0, watchers: new Set() };
      this.groups.set(first.key, g);
    }
    for (const old of g.defs) this.byKind.get(`${old.group}/${old.version}`)?.delete(old.kind);
    g.defs = defs;
    for (const d of defs) {
      const gv = `${d.group}/${d.version}`;
      if (!this.byKind.has(gv)) this.byKind.set(gv, new Map());
      this.byKind.get(gv)!.set(d.kind, d.key);
    }
  }

  private unregister(key: string): void {
    const g = this.groups.get(key);
    if (!g) return;
    for (const obj of [...g.objects.values()]) this.removeObject(g, obj, true);
    for (const w of [...g.watchers]) w.close();
    for (const d of g.defs) this.byKind.get(`${d.group}/${d.version}`)?.delete(d.kind);
    this.groups.delete(key);
  }

  /** All served resource definitions (for discovery). */
  allDefs(): ResourceDef[] {
    return [...this.groups.values()].flatMap((g) => g.defs);
  }

  defFor(group: string, version: string, plural: string): ResourceDef | undefined {
    const g = this.groups.get(`${group}/${plural}`);
    return g?.defs.find((d) => d.version === version);
  }

  defForKind(apiVersion: string, kind: string): ResourceDef {
    const { group, version } = splitApiVersion(apiVersion);
    const key = this.byKind.get(`${group}/${version}`)?.get(kind);
    const def = key ? this.groups.get(key)?.defs.find((d) => d.version === version) : undefined;
    if (!def)
      throw new ApiError(
        404,
        'NotFound',
        `the server could not find the requested resource (no kind "${kind}" is registered for version "${apiVersion}")`,
      );
    return def;
  }

  private state(def: ResourceDef): GroupState {
    const g = this.groups.get(def.key);
    if (!g) throw notFound(def.plural, def.group, '');
    return g;
  }

  /** CEL rules of loaded CRDs that could not be compiled (and therefore are not enforced). */
  celCompileFailures(): CelCompileFailure[] {
    return this.allDefs().flatMap((d) => d.schema?.compileFailures ?? []);
  }

  private present(def: ResourceDef, obj: KubeObject): KubeObject {
    const out = clone(obj);
    const rest: KubeObject = { ...out };
    delete rest.apiVersion;
    delete rest.kind;
    return {
      apiVersion: def.group ? `${def.group}/${def.version}` : def.version,
      kind: def.kind,
      ...rest,
    };
  }

  /**
   * Registers another bearer token that authenticates as `username` in `groups` (a kubelet,
   * the node-bootstrapper service account...), as a real API server's token authenticator does.
   * Returns the token.
   */
  addUser(username: string, groups: string[] = ['system:authenticated']): string {
    const token = `emulator-${randomSuffix(16)}`;
    this.users.set(token, { username, groups: [...groups] });
    return token;
  }

  /**
   * Impersonation (`Impersonate-User`, `Impersonate-Group`; `kubectl --as/--as-group`): the
   * caller needs `impersonate` on the user (or service account) and on each group, as
   * kube-apiserver's impersonation filter checks. Returns the user the request then acts as.
   */
  impersonate(
    user: EmulatorUser,
    headers: Record<string, string | string[] | undefined>,
  ): EmulatorUser {
    const list = (v: string | string[] | undefined): string[] =>
      v === undefined ? [] : Array.isArray(v) ? v : [v];
    const target = list(headers['impersonate-user'])[0];
    const groups = list(headers['impersonate-group']);
    if (!target) {
      if (groups.length)
        throw badRequest(
          `requested [${groups.map((g) => `{Group ${g}}`).join(' ')}] without impersonating a user`,
        );
      return user;
    }
    const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(target);
    const check = (resource: string, name: string, namespace?: string) =>
      this.authorize({
        user,
        verb: 'impersonate',
        resourceRequest: true,
        apiGroup: '',
        resource,
        name,
        ...(namespace ? { namespace } : {}),
      });
    if (sa) check('serviceaccounts', sa[2]!, sa[1]);
    else check('users', target);
    for (const g of groups) check('groups', g);
    const result = sa
      ? ['system:serviceaccounts', `system:serviceaccounts:${sa[1]!}`, ...groups]
      : [...groups];
    if (!result.includes('system:authenticated')) result.push('system:authenticated');
    return { username: target, groups: result };
  }

  /** A token for a service account, with the groups kube-apiserver gives service accounts. */
  addServiceAccount(namespace: string, name: string): string {
    return this.addUser(`system:serviceaccount:${namespace}:${name}`, [
      'system:serviceaccounts',
      `system:serviceaccounts:${namespace}`,
      'system:authenticated',
    ]);
  }

  /**
   * TokenRequest (serviceaccounts/token): a bound token for an existing service account, valid
   * for `spec.expirationSeconds` (kube-apiserver's default 3600, minimum 600). The emulator's
   * tokens authenticate until the emulator stops; the expiry is reported, not enforced.
   */
  requestServiceAccountToken(
    namespace: string,
    name: string,
    body: KubeObject,
    opts: WriteOptions = {},
  ): JsonObject {
    const def = this.defForKind('v1', 'ServiceAccount');
    this.getObject(def, namespace, name); // 404 when the service account does not exist
    const spec = (body.spec ?? {}) as { expirationSeconds?: number; audiences?: string[] };
    const seconds = spec.expirationSeconds ?? 3600;
    if (seconds < 600)
      throw new ApiError(
        422,
        'Invalid',
        `TokenRequest.authentication.k8s.io "${name}" is invalid: spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
      );
    const token = this.addServiceAccount(namespace, name);
    // The create path's field manager: the request's fields, an update of the token subresource.
    const managers = updateOwnership(
      undefined,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
      { builtin: true },
      false,
      this.managerName(opts),
      'authentication.k8s.io/v1',
      undefined,
    ).map((m) => ({ ...m, subresource: 'token' }));
    return {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: {
        name,
        namespace,
        uid: newUid(),
        creationTimestamp: new Date().toISOString(),
        ...(managers.length
          ? { managedFields: writeManagers(managers) as unknown as JsonObject[] }
          : {}),
      },
      // No audience asked for: the API server's own (its service-account issuer).
      spec: {
        audiences: spec.audiences ?? ['https://kubernetes.default.svc'],
        expirationSeconds: seconds,
        boundObjectRef: null,
      },
      status: {
        token,
        expirationTimestamp: new Date(Date.now() + seconds * 1000)
          .toISOString()
          .replace(/\.\d{3}Z$/, 'Z'),
      },
    };
  }

  /** The user a bearer token authenticates as; undefined when the token is unknown. */
  authenticate(authorization: string | undefined): EmulatorUser | undefined {
    if (!authorization?.startsWith('Bearer ')) return undefined;
    const token = authorization.slice('Bearer '.length);
    if (token === this.token)
      return { username: this.username, groups: ['system:masters', 'system:authenticated'] };
    const user = this.users.get(token);
    return user && { username: user.username, groups: [...user.groups] };
  }

  private adminUser(): EmulatorUser {
    return { username: this.username, groups: ['system:masters', 'system:authenticated'] };
  }

  private writeContext(user?: EmulatorUser): WriteContext {
    return {
      username: user?.username ?? this.username,
      groups: user?.groups ?? ['system:masters', 'system:authenticated'],
      nextClusterIP: () => {
        const n = this.ipCounter++;
        return `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
      },
    };
  }

  // ---------------------------------------------------------------- reads

  getObject(def: ResourceDef, ns: string | undefined, name: string): KubeObject {
    const obj = this.state(def).objects.get(objKey(def.namespaced ? ns : undefined, name));
    if (!obj) throw notFound(def.plural, def.group, name);
    return this.present(def, obj);
  }

  exists(def: ResourceDef, ns: string | undefined, name: string): boolean {
    return this.state(def).objects.has(objKey(def.namespaced ? ns : undefined, name));
  }

  listObjects(def: ResourceDef, ns: string | undefined, opts: ListOptions = {}): JsonObject {
    const labels = parseLabelSelector(opts.labelSelector);
    const fields = this.parseFields(def, opts.fieldSelector);
    let items = [...this.state(def).objects.entries()]
      .filter(([, o]) => !def.namespaced || !ns || o.metadata?.namespace === ns)
      .filter(
        ([, o]) => matchesLabels(labels, o.metadata?.labels) && this.matchesFields(def, fields, o),
      )
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const meta: JsonObject = { resourceVersion: String(this.rv) };
    if (opts.continue) {
      let start: string;
      try {
        start = String(
          (JSON.parse(Buffer.from(opts.continue, 'base64').toString('utf8')) as { start: string })
            .start,
        );
      } catch {
        throw badRequest('continue key is not valid: illegal base64 data at input byte 0');
      }
      items = items.filter(([k]) => k > start);
    }
    if (opts.limit && opts.limit > 0 && items.length > opts.limit) {
      const remaining = items.length - opts.limit;
      items = items.slice(0, opts.limit);
      const last = items[items.length - 1]![0];
      meta.continue = Buffer.from(
        JSON.stringify({ v: 'meta.k8s.io/v1', rv: this.rv, start: last }),
      ).toString('base64');
      meta.remainingItemCount = remaining;
    }
    // A custom resource list is unstructured: its empty continue token is kept.
    if (def.custom) meta.continue ??= '';
    return {
      apiVersion: def.group ? `${def.group}/${def.version}` : def.version,
      kind: def.listKind,
      metadata: meta,
      items: items.map(([, o]) => {
        const p = this.present(def, o);
        // Typed (built-in) lists carry no per-item kind/apiVersion; unstructured CR lists do.
        if (!def.custom) {
          delete p.apiVersion;
          delete p.kind;
        }
        return p;
      }),
    };
  }

  private parseFields(def: ResourceDef, s: string | undefined): FieldRequirement[] {
    const reqs = parseFieldSelector(s);
    for (const r of reqs) {
      if (r.field === 'metadata.name' || (r.field === 'metadata.namespace' && def.namespaced))
        continue;
      if (def.fieldSelectors?.[r.field]) continue;
      throw badRequest(`field label not supported: ${r.field}`);
    }
    return reqs;
  }

  private matchesFields(def: ResourceDef, reqs: FieldRequirement[], o: KubeObject): boolean {
    return reqs.every((r) => {
      const v =
        r.field === 'metadata.name'
          ? o.metadata?.name
          : r.field === 'metadata.namespace'
            ? o.metadata?.namespace
            : def.fieldSelectors?.[r.field]?.(o);
      return r.op === '=' ? (v ?? '') === r.value : (v ?? '') !== r.value;
    });
  }

  // ---------------------------------------------------------------- writes

  private managerName(opts: WriteOptions): string {
    if (opts.fieldManager) return opts.fieldManager;
    const ua = opts.userAgent ?? '';
    return ua ? (ua.split('/')[0] ?? ua) : 'unknown';
  }

  private typeRoot(def: ResourceDef): TypeRef {
    return def.custom
      ? def.schema
        ? { s: def.schema.schema }
        : {}
      : { builtin: true, kind: def.kind };
  }

  private checkNamespace(
    def: ResourceDef,
    ns: string | undefined,
    name: string,
    creating: boolean,
  ): void {
    if (!def.namespaced) return;
    if (!ns)
      throw badRequest(
        'the server could not find the requested resource: namespace must be specified',
      );
    const nsObj = this.groups.get('/namespaces')?.objects.get(ns);
    if (!nsObj) throw notFound('namespaces', '', ns);
    if (creating && nsObj.metadata?.deletionTimestamp)
      throw forbidden(
        def.plural,
        def.group,
        name,
        `unable to create new content in namespace ${ns} because it is being terminated`,
        [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${ns} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      );
  }

  private checkTypeMeta(def: ResourceDef, body: KubeObject): void {
    const expected = def.group ? `${def.group}/${def.version}` : def.version;
    if (def.custom && (!body.apiVersion || !body.kind)) {
      const data = JSON.stringify(body);
      const missing = `Object '${body.kind ? 'apiVersion' : 'Kind'}' is missing in '${data.slice(0, 200)}'`;
      // Without a kind the decoder knows no type, so the handler names the one it expected and
      // a summary of the body (apiserver handlers/rest.go transformDecodeError, summarizeData).
      throw badRequest(
        body.kind
          ? missing
          : `the object provided is unrecognized (must be of type ${def.kind}): ${missing} (${data.length > 30 ? `${data.slice(0, 30)} ...` : data})`,
      );
    }
    if (body.apiVersion !== undefined && body.apiVersion !== expected) {
      const bv = splitApiVersion(String(body.apiVersion));
      if (bv.group !== def.group || !this.defFor(def.group, bv.version, def.plural))
        throw badRequest(
          `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`,
        );
    }
    if (body.kind !== undefined && body.kind !== def.kind)
      throw badRequest(
        `the kind in the data (${String(body.kind)}) does not match the expected kind (${def.kind})`,
      );
  }

  createObject(
    def: ResourceDef,
    ns: string | undefined,
    input: KubeObject,
    opts: WriteOptions = {},
  ): WriteResult {
    if (!isObject(input)) throw badRequest('the body of the request was in an unknown format');
    this.checkTypeMeta(def, input);
    const body = clone(input);
    const meta = (body.metadata = isObject(body.metadata) ? body.metadata : {});
    if (def.namespaced) {
      if (meta.namespace && ns && meta.namespace !== ns)
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      meta.namespace = ns ?? meta.namespace;
    } else delete meta.namespace;
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomSuffix()}`;
    const name = meta.name ?? '';
    if (!name)
      throw invalid(def.kind, def.group, '', [
        cause.required('metadata.name', 'name or generateName is required'),
      ]);
    this.checkNamespace(def, meta.namespace, name, true);
    const g = this.state(def);
    if (g.objects.has(objKey(meta.namespace, name)))
      throw alreadyExists(def.plural, def.group, name);
    for (const k of [
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'selfLink',
      'managedFields',
    ])
      delete meta[k];
    if (def.status && def.custom) delete body.status;
    // What the strategy sets on create (PrepareForCreate, after the field manager) is nobody's.
    const requested = clone(body);
    def.prepareCreate?.(body, this.writeContext(opts.user));
    body.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    body.kind = def.kind;
    return this.commit(def, g, undefined, body, opts, {
      manager: this.managerName(opts),
      ownershipFrom: requested,
    });
  }

  updateObject(
    def: ResourceDef,
    ns: string | undefined,
    name: string,
    input: KubeObject,
    opts: WriteOptions = {},
    subresource?: 'status' | 'approval',
    fromPatch = false,
  ): WriteResult {
    if (!isObject(input)) throw badRequest('the body of the request was in an unknown format');
    this.checkTypeMeta(def, input);
    const g = this.state(def);
    const key = objKey(def.namespaced ? ns : undefined, name);
    const old = g.objects.get(key);
    if (!old) throw notFound(def.plural, def.group, name);
    const body = clone(input);
    const meta = (body.metadata = isObject(body.metadata) ? body.metadata : {});
    if (meta.name !== undefined && meta.name !== name)
      throw badRequest(
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
      );
    if (def.namespaced && meta.namespace !== undefined && meta.namespace !== ns)
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    const rv = meta.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== old.metadata?.resourceVersion)
      throw conflict(def.plural, def.group, name, STALE_RV);
    if ((rv === undefined || rv === '') && def.requireResourceVersionOnUpdate && !fromPatch)
      throw invalid(def.kind, def.group, name, [
        cause.invalid('metadata.resourceVersion', '0x0', 'must be specified for an update'),
      ]);

    let next: KubeObject;
    let requested: KubeObject | undefined;
    if (subresource === 'status') {
      ({ next, requested } = statusWrite(def, old, body));
    } else if (subresource === 'approval') {
      if (opts.user) this.checkSignerApproval(def, old, opts.user);
      next = clone(old);
      const st = isObject(next.status) ? next.status : (next.status = {});
      const conds = isObject(body.status) ? body.status.conditions : undefined;
      if (conds === undefined) delete st.conditions;
      else st.conditions = populateConditionTimestamps(conds, old);
    } else {
      next = body;
      const nm = next.metadata!;
      const om = old.metadata!;
      nm.name = name;
      if (def.namespaced) nm.namespace = ns;
      else delete nm.namespace;
      for (const k of [
        'uid',
        'creationTimestamp',
        'deletionTimestamp',
        'deletionGracePeriodSeconds',
        'generation',
      ] as const) {
        if (om[k] !== undefined) nm[k] = om[k] as never;
        else delete nm[k];
      }
      nm.managedFields = om.managedFields;
      if (def.status) {
        if (old.status !== undefined) next.status = clone(old.status);
        else delete next.status;
      }
      if (def.kind === 'Secret' && !body.type && old.type) next.type = old.type;
    }
    next.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    next.kind = def.kind;
    const res = this.commit(def, g, old, next, opts, {
      manager: this.managerName(opts),
      subresource,
      ...(requested ? { ownershipFrom: requested } : {}),
    });
    if (subresource === 'approval' && !opts.dryRun) setImmediate(() => this.signIfApproved(name));
    return res;
  }

  /**
   * kube-controller-manager's CSR signer (pkg/controller/certificates/signer), for the signers
   * it serves: an approved request it can sign gets its certificate; one its signer refuses is
   * marked Failed.
   */
  private signIfApproved(name: string): void {
    const csr = this.get('certificates.k8s.io/v1', 'CertificateSigningRequest', name);
    const spec = (csr?.spec ?? {}) as { signerName?: string; request?: string; usages?: string[] };
    const status = (csr?.status ?? {}) as {
      certificate?: string;
      conditions?: { type: string; status: string }[];
    };
    const conditions = status.conditions ?? [];
    const approved = conditions.some((c) => c.type === 'Approved' && c.status === 'True');
    const settled = conditions.some((c) => ['Denied', 'Failed'].includes(c.type));
    const usage = SIGNER_USAGE[spec.signerName ?? ''];
    if (!csr || !approved || settled || status.certificate || !usage || !spec.request) return;
    const requestPem = Buffer.from(spec.request, 'base64').toString('utf8');
    let refusal: string | undefined;
    try {
      refusal = signerRefusal(spec.signerName!, requestPem, spec.usages ?? []);
    } catch {
      return; // unparsable: the signer's error, retried by it forever, changes nothing
    }
    const next: KubeObject = refusal
      ? {
          ...csr,
          status: {
            ...status,
            conditions: [
              ...conditions,
              {
                type: 'Failed',
                status: 'True',
                reason: 'SignerValidationFailure',
                message: refusal,
                lastUpdateTime: nowIso(),
                lastTransitionTime: nowIso(),
              },
            ],
          },
        }
      : {
          ...csr,
          status: {
            ...status,
            certificate: Buffer.from(this.ca.signRequest(requestPem, usage)).toString('base64'),
          },
        };
    this.updateStatus(next, { fieldManager: 'kube-controller-manager' });
  }

  patchObject(
    def: ResourceDef,
    ns: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: WriteOptions = {},
    subresource?: 'status',
  ): WriteResult {
    if (type === 'apply') return this.applyObject(def, ns, name, patch, opts, subresource);
    if (opts.force !== undefined)
      throw badRequest('force: Forbidden: may not be specified for non-apply patch');
    if (type === 'strategic' && def.custom)
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      );
    const g = this.state(def);
    const old = g.objects.get(objKey(def.namespaced ? ns : undefined, name));
    if (!old) throw notFound(def.plural, def.group, name);
    const current = this.present(def, old);
    let patched: unknown;
    if (type === 'json') patched = jsonPatch(current, patch);
    else if (!isObject(patch))
      throw badRequest('json: cannot unmarshal into Go value of type map[string]interface {}');
    else if (type === 'merge') patched = mergePatch(current, patch);
    else patched = strategicMergePatch(current, patch, this.typeRoot(def));
    if (!isObject(patched)) throw badRequest('patched object is not an object');
    return this.updateObject(def, ns, name, patched, opts, subresource, true);
  }

  applyObject(
    def: ResourceDef,
    ns: string | undefined,
    name: string,
    input: unknown,
    opts: WriteOptions = {},
    subresource?: 'status',
  ): WriteResult {
    if (!opts.fieldManager)
      throw badRequest('PATCH, PUT, POST, DELETE: fieldManager is required for apply requests');
    if (!isObject(input))
      throw badRequest('error decoding YAML: the body of an apply request must be an object');
    const applied = clone(input) as KubeObject;
    if (!applied.apiVersion || !applied.kind)
      throw badRequest(
        `Object '${applied.kind ? 'apiVersion' : 'Kind'}' is missing in '${JSON.stringify(applied).slice(0, 200)}'`,
      );
    this.checkTypeMeta(def, applied);
    const meta = (applied.metadata = isObject(applied.metadata) ? applied.metadata : {});
    if (meta.name !== undefined && meta.name !== name)
      throw badRequest(
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
      );
    if (def.namespaced && meta.namespace !== undefined && meta.namespace !== ns)
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    delete meta.managedFields;
    const g = this.state(def);
    const old = g.objects.get(objKey(def.namespaced ? ns : undefined, name));
    if (old && meta.resourceVersion && meta.resourceVersion !== old.metadata?.resourceVersion)
      throw conflict(def.plural, def.group, name, STALE_RV);
    delete meta.resourceVersion;
    if (!old) this.checkNamespace(def, ns, name, true);
    const warnings: string[] = [];
    // Unknown fields in an applied configuration are handled like in any other write.
    if (def.schema) this.handleUnknown(def.schema.prune(applied), opts, warnings);
    if (def.status && subresource !== 'status') delete applied.status;
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    const live = old ? this.present(def, old) : undefined;
    const result = ssaApply(
      live,
      applied,
      this.typeRoot(def),
      def.status,
      opts.fieldManager,
      apiVersion,
      subresource,
      opts.force === true,
    );
    if (result.conflicts.length) {
      // As apimachinery's managedfields conflict printer: an Update manager is named with the
      // version it wrote through, an Apply manager by name alone.
      const who = (c: (typeof result.conflicts)[number]) =>
        c.operation === 'Update' ? `"${c.manager}" using ${c.apiVersion}` : `"${c.manager}"`;
      const byMgr = new Map<string, string[]>();
      for (const c of result.conflicts)
        byMgr.set(who(c), [...(byMgr.get(who(c)) ?? []), displayPath(c.path)]);
      const parts: string[] = [];
      for (const [m, paths] of byMgr)
        parts.push(
          paths.length === 1
            ? `conflict with ${m}: ${paths[0]!}`
            : `conflicts with ${m}:\n${paths.map((p) => `- ${p}`).join('\n')}`,
        );
      const n = result.conflicts.length;
      const err = new ApiError(
        409,
        'Conflict',
        `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${parts.join('\n')}`,
        {
          causes: result.conflicts.map((c) => ({
            reason: 'FieldManagerConflict',
            message: `conflict with ${who(c)}`,
            field: displayPath(c.path),
          })),
        },
      );
      throw err;
    }
    const next = result.object;
    next.apiVersion = apiVersion;
    next.kind = def.kind;
    const nm = (next.metadata ??= {});
    nm.name = name;
    if (def.namespaced) nm.namespace = ns;
    if (!old) {
      for (const k of [
        'uid',
        'resourceVersion',
        'creationTimestamp',
        'deletionTimestamp',
        'generation',
      ] as const)
        delete nm[k];
      if (def.status && def.custom) delete next.status;
      def.prepareCreate?.(next, this.writeContext(opts.user));
      const r = this.commit(def, g, undefined, next, opts, {
        manager: opts.fieldManager,
        managers: result.managers,
      });
      r.warnings.unshift(...warnings);
      return r;
    }
    if (subresource === 'status') {
      const { next: base, requested } = statusWrite(def, old, next);
      const r = this.commit(def, g, old, base, opts, {
        manager: opts.fieldManager,
        managers: result.managers,
        subresource,
        ownershipFrom: requested,
      });
      r.warnings.unshift(...warnings);
      return r;
    }
    if (def.status) {
      if (old.status !== undefined) next.status = clone(old.status);
      else delete next.status;
    }
    const r = this.commit(def, g, old, next, opts, {
      manager: opts.fieldManager,
      managers: result.managers,
    });
    r.warnings.unshift(...warnings);
    return r;
  }

  /**
   * RBAC's escalation prevention: writing a role needs `escalate` on it or every permission it
   * grants; writing a binding needs `bind` on the role it refers to or every permission in it.
   */
  private checkRbacEscalation(
    def: ResourceDef,
    old: KubeObject | undefined,
    next: KubeObject,
    user: EmulatorUser,
  ): void {
    const ns = def.namespaced ? next.metadata?.namespace : undefined;
    const name = next.metadata?.name ?? '';
    const binding = def.kind === 'ClusterRoleBinding' || def.kind === 'RoleBinding';
    let requested: PolicyRule[];
    if (binding) {
      const ref = isObject(next.roleRef) ? next.roleRef : {};
      if (old && deepEqual(old.roleRef, next.roleRef)) return;
      const plural = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
      const bind: Attributes = {
        user,
        verb: 'bind',
        resourceRequest: true,
        apiGroup: 'rbac.authorization.k8s.io',
        resource: plural,
        name: str(ref.name),
        ...(ns ? { namespace: ns } : {}),
      };
      if (this.authorizer.authorize(bind).allowed) return;
      requested = this.authorizer.roleRefRules(ref, ns);
    } else {
      if (
        old &&
        deepEqual(old.rules, next.rules) &&
        deepEqual(old.aggregationRule, next.aggregationRule)
      )
        return;
      const escalate: Attributes = {
        user,
        verb: 'escalate',
        resourceRequest: true,
        apiGroup: 'rbac.authorization.k8s.io',
        resource: def.plural,
        name,
        ...(ns ? { namespace: ns } : {}),
      };
      if (this.authorizer.authorize(escalate).allowed) return;
      requested = Array.isArray(next.rules) ? (next.rules as PolicyRule[]) : [];
    }
    const missing = this.authorizer.uncovered(user, ns, requested);
    if (!missing.length) return;
    throw forbidden(
      def.plural,
      def.group,
      name,
      `user "${user.username}" (groups=[${user.groups.map((g) => JSON.stringify(g)).join(' ')}]) is attempting to grant RBAC permissions not currently held:\n${missing.map(compactRule).join('\n')}`,
    );
  }

  /**
   * kube-apiserver's authorization of a ValidatingAdmissionPolicy's author
   * (pkg/registry/admissionregistration/validatingadmissionpolicy/authz.go): whoever creates a
   * policy with a paramKind, or changes its paramKind, must be allowed to `get` every object of
   * that kind, in every namespace (namespace and name `*`: only a cluster-wide rule without
   * resourceNames allows it).
   */
  private checkParamKindAccess(
    old: KubeObject | undefined,
    next: KubeObject,
    user: EmulatorUser,
  ): StatusCause[] {
    const paramKind =
      isObject(next.spec) && isObject(next.spec.paramKind) ? next.spec.paramKind : undefined;
    if (!paramKind) return [];
    const before = old && isObject(old.spec) ? old.spec.paramKind : undefined;
    if (old && deepEqual(before, paramKind)) return [];
    const apiVersion = str(paramKind.apiVersion);
    const kind = str(paramKind.kind);
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    let resource = '*';
    try {
      resource = this.defForKind(apiVersion, kind).plural;
    } catch {
      // an unknown kind: upstream then asks for every resource of the group
    }
    const allowed = this.authorizer.authorize({
      user,
      verb: 'get',
      resourceRequest: true,
      apiGroup: group ?? '',
      apiVersion: version ?? '',
      resource,
      namespace: '*',
      name: '*',
    }).allowed;
    if (allowed) return [];
    return [
      cause.forbidden(
        'spec.paramKind',
        `user &{${user.username}  [${user.groups.join(' ')}] map[]} must have "get" permission on all objects of the referenced paramKind (kind=${kind}, apiVersion=${apiVersion})`,
      ),
    ];
  }

  /**
   * The CertificateApproval admission plugin: updating /approval needs `approve` on the signer
   * (`signers`, named by signerName or by its domain `example.com/*`).
   */
  private checkSignerApproval(def: ResourceDef, csr: KubeObject, user: EmulatorUser): void {
    const signer = str(isObject(csr.spec) ? csr.spec.signerName : undefined);
    const names = [signer, `${signer.split('/')[0] ?? ''}/*`];
    const allowed = names.some(
      (name) =>
        this.authorizer.authorize({
          user,
          verb: 'approve',
          resourceRequest: true,
          apiGroup: 'certificates.k8s.io',
          resource: 'signers',
          name,
        }).allowed,
    );
    if (!allowed)
      throw forbidden(
        def.plural,
        def.group,
        csr.metadata?.name ?? '',
        `user not permitted to approve requests with signerName "${signer}"`,
      );
  }

  private handleUnknown(unknown: string[], opts: WriteOptions, warnings: string[]): void {
    if (!unknown.length) return;
    const mode = opts.fieldValidation ?? 'Warn';
    if (mode === 'Strict')
      throw badRequest(
        `strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`,
      );
    if (mode === 'Warn') for (const u of unknown) warnings.push(`unknown field "${u}"`);
  }

  /** Shared tail of every write: decode (prune/default), validate, bookkeeping, persist, notify. */
  private commit(
    def: ResourceDef,
    g: GroupState,
    old: KubeObject | undefined,
    next: KubeObject,
    opts: WriteOptions,
    how: {
      manager: string;
      subresource?: string;
      managers?: ManagerState[];
      /** The object the manager is credited with, when the write keeps less of it than asked. */
      ownershipFrom?: KubeObject;
    },
  ): WriteResult {
    if (opts.user && def.group === 'rbac.authorization.k8s.io')
      this.checkRbacEscalation(def, old, next, opts.user);
    const warnings: string[] = [];
    if (def.schema) this.handleUnknown(def.schema.pruneAndDefault(next), opts, warnings);
    def.defaults?.(next);
    if (!old) warnings.push(...(def.warningsOnCreate?.(next) ?? []));
    const meta = next.metadata!;
    const name = meta.name ?? '';
    const causes: StatusCause[] = validateObjectMeta(meta, def.nameRule);
    if (old?.metadata?.deletionTimestamp) {
      const before = new Set(old.metadata.finalizers ?? []);
      for (const f of meta.finalizers ?? [])
        if (!before.has(f))
          causes.push(
            cause.forbidden(
              'metadata.finalizers',
              `no new finalizers can be added if the object is being deleted, found new finalizers []string{"${f}"}`,
            ),
          );
    }
    if (def.schema)
      causes.push(...def.schema.validate(next, { asApiServer: true, ...(old ? { old } : {}) }));
    if (def.validate) causes.push(...def.validate(next, old));
    if (opts.user && def.kind === 'ValidatingAdmissionPolicy' && !how.subresource)
      causes.push(...this.checkParamKindAccess(old, next, opts.user));
    if (causes.length) throw invalid(def.kind, def.group, name, causes);
    warnings.push(
      ...this.admit(
        {
          operation: old ? 'UPDATE' : 'CREATE',
          def,
          ...(how.subresource ? { subresource: how.subresource } : {}),
          name,
          ...(meta.namespace ? { namespace: meta.namespace } : {}),
          object: next,
          ...(old ? { oldObject: old } : {}),
          user: opts.user ?? this.adminUser(),
          dryRun: opts.dryRun === true,
        },
        opts.user !== undefined,
      ),
    );

    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    // Credited as decoded: pruned and defaulted, as the object itself was.
    const credited = how.ownershipFrom;
    if (credited) {
      if (def.schema) def.schema.pruneAndDefault(credited);
      def.defaults?.(credited);
    }
    const managers =
      how.managers ??
      updateOwnership(
        old,
        how.ownershipFrom ?? next,
        this.typeRoot(def),
        def.status,
        how.manager,
        apiVersion,
        how.subresource,
      );
    const managedFields = writeManagers(managers);
    // A write that changes neither the object nor field ownership is a no-op: no new resourceVersion, no event.
    if (
      old &&
      deepEqual(stripVolatile(old), stripVolatile(next)) &&
      deepEqual(untimed(old.metadata?.managedFields), untimed(managedFields))
    )
      return { object: this.present(def, old), warnings, created: false };
    // No field owned by anyone: the real server leaves managedFields out rather than empty (and
    // keeps none for a CertificateSigningRequest).
    if (managedFields.length && !def.untrackedFields) meta.managedFields = managedFields;
    else delete meta.managedFields;

    if (!old) {
      meta.uid = newUid();
      meta.creationTimestamp = nowIso();
      if (def.generation) meta.generation = 1;
    } else if (def.generation) {
      const gen = old.metadata?.generation ?? 1;
      meta.generation = specChanged(old, next, def.status) ? gen + 1 : gen;
    }
    if (opts.dryRun) return { object: this.present(def, next), warnings, created: !old };

    const key = objKey(meta.namespace, name);
    if (old?.metadata?.deletionTimestamp && (meta.finalizers ?? []).length === 0) {
      g.objects.set(key, next);
      this.removeObject(g, next, false);
      return { object: this.present(def, next), warnings, created: false };
    }
    meta.resourceVersion = String(++this.rv);
    g.objects.set(key, next);
    this.emit(g, old ? 'MODIFIED' : 'ADDED', next, old);
    if (def.kind === 'CustomResourceDefinition' && def.group === 'apiextensions.k8s.io')
      this.onCrdWritten(next);
    return { object: this.present(def, next), warnings, created: !old };
  }

  /**
   * As etcd's compaction does to kube-apiserver: a watch from a resourceVersion older than now
   * (and not in a watch cache) is 410 Gone from then on.
   */
  compact(): void {
    for (const g of this.groups.values()) {
      g.history = [];
      g.droppedUpTo = this.rv;
    }
  }

  /**
   * The eviction subresource, after kube-apiserver's pkg/registry/core/pod/storage/eviction.go:
   * a pod that is not running (Pending, Succeeded, Failed) is deleted whatever its budgets; a
   * running one only while its one PodDisruptionBudget allows a disruption.
   */
  evictPod(ns: string, name: string, eviction: KubeObject): void {
    const pods = this.defForKind('v1', 'Pod');
    if (eviction.metadata?.name !== undefined && eviction.metadata.name !== name)
      throw badRequest(`name in URL does not match name in Eviction object`);
    const pod = this.getObject(pods, ns, name);
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    if (phase === 'Running' || phase === undefined) {
      const budgets = this.list('policy/v1', 'PodDisruptionBudget', ns).filter((pdb) =>
        matchesLabels(
          labelSelectorRequirements((pdb.spec as { selector?: unknown } | undefined)?.selector),
          pod.metadata?.labels,
        ),
      );
      if (budgets.length > 1)
        throw new ApiError(
          500,
          'InternalError',
          'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        );
      const budget = budgets[0];
      if (budget) {
        const status = (budget.status ?? {}) as {
          observedGeneration?: number;
          disruptionsAllowed?: number;
          currentHealthy?: number;
          desiredHealthy?: number;
        };
        const processed = (status.observedGeneration ?? 0) >= (budget.metadata?.generation ?? 0);
        if (!processed || (status.disruptionsAllowed ?? 0) < 1)
          throw new ApiError(
            429,
            'TooManyRequests',
            "Cannot evict pod as it would violate the pod's disruption budget.",
            {
              causes: [
                {
                  reason: 'DisruptionBudget',
                  message: processed
                    ? `The disruption budget ${budget.metadata?.name ?? ''} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`
                    : `The disruption budget ${budget.metadata?.name ?? ''} is still being processed by the server.`,
                },
              ],
            },
          );
      }
    }
    const deleteOptions = (eviction as { deleteOptions?: DeleteOptions }).deleteOptions ?? {};
    this.deleteObject(pods, ns, name, deleteOptions);
  }

  deleteObject(
    def: ResourceDef,
    ns: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): KubeObject {
    const g = this.state(def);
    const key = objKey(def.namespaced ? ns : undefined, name);
    const old = g.objects.get(key);
    if (!old) throw notFound(def.plural, def.group, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== old.metadata?.uid)
      throw conflict(
        def.plural,
        def.group,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata?.uid ?? ''}`,
      );
    if (pre?.resourceVersion && pre.resourceVersion !== old.metadata?.resourceVersion)
      throw conflict(
        def.plural,
        def.group,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata?.resourceVersion ?? ''}`,
      );
    this.admit(
      {
        operation: 'DELETE',
        def,
        name,
        ...(def.namespaced && ns ? { namespace: ns } : {}),
        oldObject: old,
        user: opts.user ?? this.adminUser(),
        dryRun: opts.dryRun === true,
      },
      false,
    );
    const hasFinalizers = (old.metadata?.finalizers ?? []).length > 0;
    if (opts.dryRun) {
      // What a real delete would answer: an object that finalizers keep comes back marked for
      // deletion; nothing is stored either way.
      if (!hasFinalizers || old.metadata?.deletionTimestamp) return this.present(def, old);
      const marked = clone(old);
      marked.metadata!.deletionTimestamp = nowIso();
      marked.metadata!.deletionGracePeriodSeconds = 0;
      if (def.generation) marked.metadata!.generation = (marked.metadata!.generation ?? 1) + 1;
      return this.present(def, marked);
    }
    if (def.kind === 'Namespace' && !def.group) return this.deleteNamespace(def, g, old);
    // Foreground and Orphan deletion: the owner is marked with the garbage collector's finalizer,
    // which it removes once it has deleted the dependents or released them.
    const collectorFinalizer =
      opts.propagationPolicy === 'Foreground'
        ? 'foregroundDeletion'
        : opts.propagationPolicy === 'Orphan'
          ? 'orphan'
          : undefined;
    if (hasFinalizers || collectorFinalizer) {
      if (old.metadata?.deletionTimestamp) return this.present(def, old);
      const next = clone(old);
      const m = next.metadata!;
      m.deletionTimestamp = nowIso();
      m.deletionGracePeriodSeconds = 0;
      if (def.generation) m.generation = (m.generation ?? 1) + 1;
      if (collectorFinalizer) {
        m.finalizers = [...(m.finalizers ?? []), collectorFinalizer];
        setImmediate(() => this.collectGarbage(def, ns, name, collectorFinalizer));
      }
      m.resourceVersion = String(++this.rv);
      g.objects.set(key, next);
      this.emit(g, 'MODIFIED', next, old);
      return this.present(def, next);
    }
    this.removeObject(g, old, false);
    if (def.kind === 'Pod' && !def.group) {
      // A pod no node runs is deleted at once, answered as marked with no grace period.
      const gone = clone(old);
      gone.metadata!.deletionTimestamp = nowIso();
      gone.metadata!.deletionGracePeriodSeconds = 0;
      gone.metadata!.generation = (gone.metadata!.generation ?? 1) + 1;
      return this.present(def, gone);
    }
    return this.present(def, old);
  }

  private deleteNamespace(def: ResourceDef, g: GroupState, old: KubeObject): KubeObject {
    const name = old.metadata?.name ?? '';
    let current = old;
    if (!old.metadata?.deletionTimestamp) {
      const next = clone(old);
      next.metadata!.deletionTimestamp = nowIso();
      next.status = { ...(isObject(next.status) ? next.status : {}), phase: 'Terminating' };
      next.metadata!.resourceVersion = String(++this.rv);
      g.objects.set(name, next);
      this.emit(g, 'MODIFIED', next, old);
      current = next;
    }
    for (const [, other] of this.groups) {
      const d = other.defs[0];
      if (!d?.namespaced) continue;
      for (const o of [...other.objects.values()]) {
        if (o.metadata?.namespace !== name) continue;
        if ((o.metadata.finalizers ?? []).length === 0) this.removeObject(other, o, false);
        else if (!o.metadata.deletionTimestamp) {
          const n = clone(o);
          n.metadata!.deletionTimestamp = nowIso();
          n.metadata!.deletionGracePeriodSeconds = 0;
          n.metadata!.resourceVersion = String(++this.rv);
          other.objects.set(objKey(name, o.metadata.name ?? ''), n);
          this.emit(other, 'MODIFIED', n, o);
        }
      }
    }
    const result = this.present(def, current);
    this.finishNamespace(name);
    return result;
  }

  private finishNamespace(ns: string): void {
    const g = this.groups.get('/namespaces');
    const nsObj = g?.objects.get(ns);
    if (!g || !nsObj?.metadata?.deletionTimestamp || (nsObj.metadata.finalizers ?? []).length > 0)
      return;
    for (const other of this.groups.values()) {
      if (!other.defs[0]?.namespaced) continue;
      for (const o of other.objects.values()) if (o.metadata?.namespace === ns) return;
    }
    this.removeObject(g, nsObj, false);
  }

  private removeObject(g: GroupState, obj: KubeObject, orphan: boolean): void {
    const meta = obj.metadata!;
    const key = objKey(meta.namespace, meta.name ?? '');
    if (g.objects.get(key) !== obj && !g.objects.has(key)) return;
    g.objects.delete(key);
    const final = clone(obj);
    final.metadata!.resourceVersion = String(++this.rv);
    this.emit(g, 'DELETED', final, obj);
    const def = g.defs[0];
    if (def?.kind === 'CustomResourceDefinition' && def.group === 'apiextensions.k8s.io') {
      const spec = obj.spec as JsonObject;
      this.unregister(`${String(spec.group)}/${String((spec.names as JsonObject).plural)}`);
    }
    if (!orphan && meta.uid) this.collectDependents(meta.uid);
    if (meta.namespace) this.finishNamespace(meta.namespace);
  }

  /** Minimal garbage collector: objects whose every owner is gone are deleted. */
  /**
   * The garbage collector's part of a Foreground or Orphan deletion: the owner's dependents
   * deleted or released (their owner reference removed), then its finalizer removed.
   */
  private collectGarbage(
    def: ResourceDef,
    ns: string | undefined,
    name: string,
    finalizer: 'foregroundDeletion' | 'orphan',
  ): void {
    const owner = this.state(def).objects.get(objKey(ns, name));
    const uid = owner?.metadata?.uid;
    if (!owner || !uid) return;
    for (const g of this.groups.values())
      for (const o of [...g.objects.values()]) {
        const refs = o.metadata?.ownerReferences ?? [];
        if (!refs.some((r) => r.uid === uid)) continue;
        const dependentDef = g.defs[0]!;
        if (finalizer === 'foregroundDeletion') {
          this.deleteObject(dependentDef, o.metadata?.namespace, o.metadata?.name ?? '');
          continue;
        }
        const released = clone(o);
        const rest = refs.filter((r) => r.uid !== uid);
        if (rest.length) released.metadata!.ownerReferences = rest;
        else delete released.metadata!.ownerReferences;
        this.updateObject(dependentDef, o.metadata?.namespace, o.metadata?.name ?? '', released, {
          fieldManager: 'kube-controller-manager',
        });
      }
    const current = this.state(def).objects.get(objKey(ns, name));
    if (!current) return;
    const next = clone(current);
    next.metadata!.finalizers = (next.metadata!.finalizers ?? []).filter((f) => f !== finalizer);
    this.updateObject(def, ns, name, next, { fieldManager: 'kube-controller-manager' });
  }

  private collectDependents(uid: string): void {
    for (const g of this.groups.values()) {
      for (const o of [...g.objects.values()]) {
        const refs = o.metadata?.ownerReferences ?? [];
        if (!refs.some((r) => r.uid === uid)) continue;
        const alive = refs.some((r) => r.uid !== uid && this.uidExists(String(r.uid)));
        if (alive) continue;
        if ((o.metadata?.finalizers ?? []).length === 0) {
          this.removeObject(g, o, false);
          continue;
        }
        // Like the real garbage collector: a dependent with finalizers is deleted (it gets a
        // deletionTimestamp) and stays until its finalizers are removed.
        if (o.metadata?.deletionTimestamp) continue;
        const next = clone(o);
        const m = next.metadata!;
        m.deletionTimestamp = nowIso();
        m.deletionGracePeriodSeconds = 0;
        const def = g.defs[0];
        if (def?.generation) m.generation = (m.generation ?? 1) + 1;
        m.resourceVersion = String(++this.rv);
        g.objects.set(objKey(m.namespace, m.name ?? ''), next);
        this.emit(g, 'MODIFIED', next, o);
      }
    }
  }

  private uidExists(uid: string): boolean {
    for (const g of this.groups.values())
      for (const o of g.objects.values()) if (o.metadata?.uid === uid) return true;
    return false;
  }

  private onCrdWritten(crd: KubeObject): void {
    const defs = defsFromCrd(crd);
    const spec = crd.spec as JsonObject;
    const key = `${String(spec.group)}/${String((spec.names as JsonObject).plural)}`;
    if (defs.length === 0) {
      this.unregister(key);
      return;
    }
    this.register(defs);
    const names = spec.names as JsonObject;
    const status = {
      conditions: [
        {
          type: 'NamesAccepted',
          status: 'True',
          reason: 'NoConflicts',
          message: 'no conflicts found',
          lastTransitionTime: nowIso(),
        },
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
          lastTransitionTime: nowIso(),
        },
      ],
      acceptedNames: clone(names),
      storedVersions: (spec.versions as JsonObject[])
        .filter((v) => v.storage === true)
        .map((v) => String(v.name)),
    };
    const prevStored =
      isObject(crd.status) && Array.isArray(crd.status.storedVersions)
        ? (crd.status.storedVersions as string[])
        : [];
    status.storedVersions = [...new Set([...prevStored, ...status.storedVersions])];
    if (
      isObject(crd.status) &&
      deepEqual({ ...crd.status, conditions: undefined }, { ...status, conditions: undefined })
    )
      return;
    if (
      isObject(crd.status) &&
      Array.isArray(crd.status.conditions) &&
      crd.status.conditions.length
    ) {
      status.conditions = crd.status.conditions as typeof status.conditions;
    }
    const g = this.groups.get('apiextensions.k8s.io/customresourcedefinitions')!;
    const next = clone(crd);
    next.status = status;
    // The apiextensions controllers write the status as kube-apiserver.
    const managers = updateOwnership(
      crd,
      next,
      { builtin: true, kind: 'CustomResourceDefinition' },
      true,
      'kube-apiserver',
      'apiextensions.k8s.io/v1',
      'status',
    );
    next.metadata!.managedFields = writeManagers(managers);
    next.metadata!.resourceVersion = String(++this.rv);
    g.objects.set(crd.metadata?.name ?? '', next);
    this.emit(g, 'MODIFIED', next, crd);
  }

  // ---------------------------------------------------------------- watch

  private emit(g: GroupState, type: StoredEvent['type'], obj: KubeObject, prev?: KubeObject): void {
    const ev: StoredEvent = { type, rv: Number(obj.metadata?.resourceVersion ?? this.rv), obj };
    if (prev) ev.prev = prev;
    g.history.push(ev);
    if (g.history.length > this.opts.watchHistorySize) {
      const dropped = g.history.splice(0, g.history.length - this.opts.watchHistorySize);
      g.droppedUpTo = dropped[dropped.length - 1]!.rv;
    }
    for (const w of g.watchers) this.deliver(w, ev);
  }

  private watcherMatches(w: Watcher, o: KubeObject): boolean {
    if (w.namespace && o.metadata?.namespace !== w.namespace) return false;
    return matchesLabels(w.labels, o.metadata?.labels) && this.matchesFields(w.def, w.fields, o);
  }

  private deliver(w: Watcher, ev: StoredEvent): void {
    const now = this.watcherMatches(w, ev.obj);
    if (ev.type === 'MODIFIED') {
      const before = ev.prev ? this.watcherMatches(w, ev.prev) : false;
      if (now && before) w.send('MODIFIED', this.present(w.def, ev.obj));
      else if (now) w.send('ADDED', this.present(w.def, ev.obj));
      else if (before) w.send('DELETED', this.present(w.def, ev.obj));
      return;
    }
    if (now) w.send(ev.type, this.present(w.def, ev.obj));
  }

  /**
   * Starts a watch. `send` receives events; `close` is called when the server ends the watch
   * (timeout, 410, resource removed, emulator stopped). Returns a function that stops it.
   */
  startWatch(
    def: ResourceDef,
    opts: WatchOptions,
    send: (type: WatchEventType, obj: unknown) => void,
    close: () => void,
  ): () => void {
    const g = this.state(def);
    const w: Watcher = {
      def,
      labels: parseLabelSelector(opts.labelSelector),
      fields: this.parseFields(def, opts.fieldSelector),
      send,
      close: () => stop(),
    };
    if (def.namespaced && opts.namespace) w.namespace = opts.namespace;
    let stopped = false;
    const timers: NodeJS.Timeout[] = [];
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      g.watchers.delete(w);
      for (const t of timers) clearTimeout(t);
      close();
    };
    const bookmark = (annotations?: Record<string, string>): void => {
      const metadata: JsonObject = { resourceVersion: String(this.rv) };
      if (annotations) metadata.annotations = annotations;
      send('BOOKMARK', {
        kind: def.kind,
        apiVersion: def.group ? `${def.group}/${def.version}` : def.version,
        metadata,
      });
    };
    const rvParam = opts.resourceVersion ?? '';
    const initial = opts.sendInitialEvents ?? (rvParam === '' || rvParam === '0');
    if (initial) {
      for (const o of g.objects.values())
        if (this.watcherMatches(w, o)) send('ADDED', this.present(def, o));
      if (opts.sendInitialEvents && opts.allowWatchBookmarks)
        bookmark({ 'k8s.io/initial-events-end': 'true' });
    } else {
      const from = Number(rvParam);
      if (!Number.isFinite(from)) {
        send(
          'ERROR',
          new ApiError(400, 'BadRequest', `invalid resource version: ${rvParam}`).toStatus(),
        );
        stop();
        return stop;
      }
      if (from < g.droppedUpTo) {
        send(
          'ERROR',
          expired(`too old resource version: ${from} (${g.droppedUpTo + 1})`).toStatus(),
        );
        stop();
        return stop;
      }
      for (const ev of g.history) if (ev.rv > from) this.deliver(w, ev);
    }
    g.watchers.add(w);
    if (opts.timeoutSeconds && opts.timeoutSeconds > 0) {
      const t = setTimeout(stop, opts.timeoutSeconds * 1000);
      t.unref();
      timers.push(t);
    }
    if (opts.allowWatchBookmarks) {
      const tick = (): void => {
        if (stopped) return;
        bookmark();
        const t = setTimeout(tick, this.opts.bookmarkIntervalMs);
        t.unref();
        timers.push(t);
      };
      const t = setTimeout(tick, this.opts.bookmarkIntervalMs);
      t.unref();
      timers.push(t);
    }
    return stop;
  }

  /** Number of open watches, per `group/plural` (to assert that a client does not leak them). */
  watchCount(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, g] of this.groups) if (g.watchers.size) out[k] = g.watchers.size;
    return out;
  }

  // ---------------------------------------------------------------- in-process API

  get(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined {
    const def = this.defForKind(apiVersion, kind);
    const o = this.state(def).objects.get(objKey(def.namespaced ? namespace : undefined, name));
    return o ? this.present(def, o) : undefined;
  }

  list(apiVersion: string, kind: string, namespace?: string, opts: ListOptions = {}): KubeObject[] {
    const def = this.defForKind(apiVersion, kind);
    const l = this.listObjects(def, namespace, opts);
    return (l.items as KubeObject[]).map((o) => ({ apiVersion, kind, ...o }));
  }

  create(obj: KubeObject, opts: WriteOptions = {}): KubeObject {
    const def = this.defForKind(String(obj.apiVersion), String(obj.kind));
    return this.createObject(def, obj.metadata?.namespace, obj, {
      fieldManager: 'emulator',
      ...opts,
    }).object;
  }

  update(obj: KubeObject, opts: WriteOptions = {}): KubeObject {
    const def = this.defForKind(String(obj.apiVersion), String(obj.kind));
    return this.updateObject(def, obj.metadata?.namespace, obj.metadata?.name ?? '', obj, {
      fieldManager: 'emulator',
      ...opts,
    }).object;
  }

  updateStatus(obj: KubeObject, opts: WriteOptions = {}): KubeObject {
    const def = this.defForKind(String(obj.apiVersion), String(obj.kind));
    const sub = def.status ? 'status' : undefined;
    return this.updateObject(
      def,
      obj.metadata?.namespace,
      obj.metadata?.name ?? '',
      obj,
      { fieldManager: 'emulator', ...opts },
      sub,
      true,
    ).object;
  }

  /** Merge-patches `status` through the status subresource (what controllers/kubelets do). */
  patchStatus(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    status: JsonObject,
    opts: WriteOptions = {},
  ): KubeObject {
    const def = this.defForKind(apiVersion, kind);
    return this.patchObject(
      def,
      namespace,
      name,
      'merge',
      { status },
      { fieldManager: 'emulator', ...opts },
      def.status ? 'status' : undefined,
    ).object;
  }

  patch(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: Exclude<PatchType, 'apply'> = 'merge',
    opts: WriteOptions = {},
  ): KubeObject {
    const def = this.defForKind(apiVersion, kind);
    return this.patchObject(def, namespace, name, type, patch, {
      fieldManager: 'emulator',
      ...opts,
    }).object;
  }

  /** Server-side apply, as `kubectl apply --server-side`. */
  apply(obj: KubeObject, opts: WriteOptions & { fieldManager: string }): KubeObject {
    const def = this.defForKind(String(obj.apiVersion), String(obj.kind));
    return this.applyObject(def, obj.metadata?.namespace, obj.metadata?.name ?? '', obj, opts)
      .object;
  }

  delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    opts: DeleteOptions = {},
  ): KubeObject | undefined {
    const def = this.defForKind(apiVersion, kind);
    try {
      return this.deleteObject(def, namespace, name, opts);
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  /**
   * The in-process API acting as `user`: every call is authorized (RBAC, as over HTTP) and
   * admitted as that user, so a test playing a controller (Karpenter, say) needs exactly the
   * permissions that controller is granted.
   */
  as(user: EmulatorUser): InProcessClient {
    const check = (verb: string, def: ResourceDef, name?: string, ns?: string, sub?: string) =>
      this.authorize({
        user,
        verb,
        resourceRequest: true,
        apiGroup: def.group,
        apiVersion: def.version,
        resource: def.plural,
        ...(sub ? { subresource: sub } : {}),
        ...(name ? { name } : {}),
        ...(def.namespaced && ns ? { namespace: ns } : {}),
      });
    return {
      get: (apiVersion, kind, name, namespace) => {
        check('get', this.defForKind(apiVersion, kind), name, namespace);
        return this.get(apiVersion, kind, name, namespace);
      },
      create: (obj, opts = {}) => {
        const def = this.defForKind(String(obj.apiVersion), String(obj.kind));
        check('create', def, undefined, obj.metadata?.namespace);
        return this.create(obj, { ...opts, user });
      },
      patch: (apiVersion, kind, name, namespace, patch, type = 'merge', opts = {}) => {
        check('patch', this.defForKind(apiVersion, kind), name, namespace);
        return this.patch(apiVersion, kind, name, namespace, patch, type, { ...opts, user });
      },
      patchStatus: (apiVersion, kind, name, namespace, status, opts = {}) => {
        const def = this.defForKind(apiVersion, kind);
        check('patch', def, name, namespace, def.status ? 'status' : undefined);
        return this.patchStatus(apiVersion, kind, name, namespace, status, { ...opts, user });
      },
      delete: (apiVersion, kind, name, namespace, opts = {}) => {
        check('delete', this.defForKind(apiVersion, kind), name, namespace);
        return this.delete(apiVersion, kind, name, namespace, { ...opts, user });
      },
    };
  }

  /** In-process watch; the handler sees the same events an HTTP watcher would. */
  watch(
    apiVersion: string,
    kind: string,
    handler: (type: WatchEventType, obj: KubeObject) => void,
    opts: WatchOptions = {},
  ): () => void {
    const def = this.defForKind(apiVersion, kind);
    return this.startWatch(
      def,
      opts,
      (t, o) => handler(t, o as KubeObject),
      () => undefined,
    );
  }

  /** Simulates the deployment controller having rolled out `replicas` ready pods. */
  setDeploymentAvailable(namespace: string, name: string, replicas?: number): KubeObject {
    const d = this.get('apps/v1', 'Deployment', name, namespace);
    if (!d) throw notFound('deployments', 'apps', name);
    const n = replicas ?? Number((d.spec as JsonObject | undefined)?.replicas ?? 1);
    const now = nowIso();
    return this.updateStatus({
      ...d,
      status: {
        observedGeneration: d.metadata?.generation ?? 1,
        replicas: n,
        updatedReplicas: n,
        readyReplicas: n,
        availableReplicas: n,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
          {
            type: 'Progressing',
            status: 'True',
            reason: 'NewReplicaSetAvailable',
            message: `ReplicaSet "${name}" has successfully progressed.`,
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    });
  }

  /** Approves (or denies) a CSR through the approval subresource, as `kubectl certificate approve`. */
  approveCertificateSigningRequest(
    name: string,
    approved = true,
    reason = 'EmulatorApprove',
  ): KubeObject {
    const def = this.defForKind('certificates.k8s.io/v1', 'CertificateSigningRequest');
    const csr = this.getObject(def, undefined, name);
    const st = isObject(csr.status) ? csr.status : {};
    const conditions: unknown[] = Array.isArray(st.conditions)
      ? [...(st.conditions as unknown[])]
      : [];
    conditions.push({
      type: approved ? 'Approved' : 'Denied',
      status: 'True',
      reason,
      message: 'set by the emulator',
    });
    return this.updateObject(
      def,
      undefined,
      name,
      { ...csr, status: { ...st, conditions } },
      { fieldManager: 'emulator' },
      'approval',
      true,
    ).object;
  }

  // ---------------------------------------------------------------- loading

  addCrd(crd: KubeObject): KubeObject {
    const existing = this.get(
      'apiextensions.k8s.io/v1',
      'CustomResourceDefinition',
      crd.metadata?.name ?? '',
    );
    if (existing) {
      return this.update({
        ...crd,
        metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion },
      });
    }
    return this.create(crd);
  }

  loadCrdFiles(files: readonly string[]): KubeObject[] {
    return files
      .flatMap((f) => readYamlFile(f))
      .filter((o) => o.kind === 'CustomResourceDefinition')
      .map((o) => this.addCrd(o));
  }

  loadCrdsFromDir(dir: string): KubeObject[] {
    return readYamlDir(dir)
      .filter((o) => o.kind === 'CustomResourceDefinition')
      .map((o) => this.addCrd(o));
  }

  /**
   * Stores objects as if controllers had created them, status included. Missing namespaces
   * are created first (a convenience a real server does not offer). CRDs are registered.
   */
  seed(objects: KubeObject[]): KubeObject[] {
    const out: KubeObject[] = [];
    const ordered = [...objects].sort((a, b) => rank(a) - rank(b));
    for (const o of ordered) {
      if (o.kind === 'CustomResourceDefinition') {
        out.push(this.addCrd(o));
        continue;
      }
      const def = this.defForKind(String(o.apiVersion), String(o.kind));
      const ns = o.metadata?.namespace ?? (def.namespaced ? 'default' : undefined);
      if (def.namespaced && ns && !this.get('v1', 'Namespace', ns))
        this.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      const withNs = { ...o, metadata: { ...o.metadata, namespace: ns } };
      let created = this.createObject(def, ns, withNs, { fieldManager: 'emulator-seed' }).object;
      if (o.status !== undefined && def.status) {
        created = this.updateObject(
          def,
          ns,
          created.metadata?.name ?? '',
          { ...created, status: o.status },
          { fieldManager: 'emulator-seed' },
          'status',
          true,
        ).object;
      }
      out.push(created);
    }
    return out;
  }

  seedFromDir(dir: string): KubeObject[] {
    return this.seed(readYamlDir(dir));
  }
}

function rank(o: KubeObject): number {
  if (o.kind === 'CustomResourceDefinition') return 0;
  if (o.kind === 'Namespace') return 1;
  return 2;
}

/**
 * The `yaml` parser needs seconds for the big upstream CRDs; parsed documents are cached as
 * JSON in the OS temp dir, keyed by path, size and mtime.
 */
function parseYamlFile(p: string): unknown[] {
  const st = statSync(p);
  const id = createHash('sha1').update(`${p}\0${st.size}\0${st.mtimeMs}`).digest('hex');
  const cacheFile = join(tmpdir(), 'kube-apiserver-emulator-cache', `${id}.json`);
  const mem = yamlCache.get(id);
  if (mem) return clone(mem);
  try {
    const docs = JSON.parse(readFileSync(cacheFile, 'utf8')) as unknown[];
    yamlCache.set(id, docs);
    return clone(docs);
  } catch {
    // not cached yet
  }
  const docs = parseAllDocuments(readFileSync(p, 'utf8')).map((d) => d.toJS() as unknown);
  yamlCache.set(id, docs);
  try {
    mkdirSync(join(tmpdir(), 'kube-apiserver-emulator-cache'), { recursive: true });
    writeFileSync(`${cacheFile}.${process.pid}`, JSON.stringify(docs));
    renameSync(`${cacheFile}.${process.pid}`, cacheFile);
  } catch {
    // cache is best effort
  }
  return clone(docs);
}
const yamlCache = new Map<string, unknown[]>();

/** Kubernetes objects in one YAML or JSON file (Lists flattened). */
export function readYamlFile(file: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const v of parseYamlFile(file)) {
    if (isObject(v) && typeof v.kind === 'string' && typeof v.apiVersion === 'string') {
      if (v.kind.endsWith('List') && Array.isArray(v.items)) out.push(...(v.items as KubeObject[]));
      else out.push(v);
    }
  }
  return out;
}

export function readYamlDir(dir: string): KubeObject[] {
  const out: KubeObject[] = [];
  const walk = (d: string): void => {
    for (const f of readdirSync(d).sort()) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ya?ml|json)$/.test(f)) out.push(...readYamlFile(p));
    }
  };
  walk(dir);
  return out;
}

/**
 * The CSR registry's populateConditionTimestamps: lastUpdateTime defaults to now;
 * lastTransitionTime is kept from the same condition type with the same status, else now.
 */
function populateConditionTimestamps(conditions: unknown, old: KubeObject): unknown {
  if (!Array.isArray(conditions)) return conditions;
  const before =
    isObject(old.status) && Array.isArray(old.status.conditions) ? old.status.conditions : [];
  const now = nowIso();
  return conditions.map((c: unknown) => {
    if (!isObject(c)) return c;
    const prev = before.find((p: unknown) => isObject(p) && p.type === c.type) as
      JsonObject | undefined;
    const out: JsonObject = { ...c };
    out.lastUpdateTime ??= now;
    if (out.lastTransitionTime === undefined || out.lastTransitionTime === null)
      out.lastTransitionTime =
        prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : now;
    return out;
  });
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function untimed(mf: ManagedFieldsEntry[] | undefined): unknown {
  return (mf ?? []).map((m) => ({ ...m, time: undefined }));
}

function stripVolatile(o: KubeObject): KubeObject {
  const c: KubeObject = { ...o, metadata: { ...o.metadata } };
  delete c.metadata!.resourceVersion;
  delete c.metadata!.managedFields;
  delete c.metadata!.generation;
  return c;
}

function specChanged(old: KubeObject, next: KubeObject, statusSplit: boolean): boolean {
  const pick = (o: KubeObject): JsonObject => {
    const r: JsonObject = { ...o };
    delete r.metadata;
    delete r.apiVersion;
    delete r.kind;
    if (statusSplit) delete r.status;
    return r;
  };
  return !deepEqual(pick(old), pick(next));
}

/** The signers kube-controller-manager signs for, with the extended key usage they grant. */
const SIGNER_USAGE: Record<string, 'serverAuth' | 'clientAuth'> = {
  'kubernetes.io/kubelet-serving': 'serverAuth',
  'kubernetes.io/kube-apiserver-client-kubelet': 'clientAuth',
  'kubernetes.io/kube-apiserver-client': 'clientAuth',
};

/**
 * Why a signer refuses a request, as k8s.io/kubernetes pkg/apis/certificates validates a
 * kubelet's serving and client requests (the subject a node's, only the usages it needs).
 */
function signerRefusal(signer: string, requestPem: string, usages: string[]): string | undefined {
  if (signer === 'kubernetes.io/kube-apiserver-client') return undefined;
  const { commonName, organizations } = certificateRequestSubject(requestPem);
  if (organizations.length !== 1 || organizations[0] !== 'system:nodes')
    return 'subject organization is not system:nodes';
  if (!commonName.startsWith('system:node:'))
    return 'subject common name does not begin with system:node:';
  const needed = signer === 'kubernetes.io/kubelet-serving' ? 'server auth' : 'client auth';
  const allowed = new Set(['digital signature', 'key encipherment', needed]);
  if (!usages.includes(needed) || usages.some((u) => !allowed.has(u)))
    return `usages did not match [digital signature key encipherment ${needed}]`;
  return undefined;
}

/**
 * What a status write keeps: the status asked for, and where the kind's status strategy keeps
 * them (Node, Pod, PodDisruptionBudget) its labels and annotations, else none of its metadata. The field manager is credited with all the request asked for, as
 * kube-apiserver computes managedFields before the strategy resets the rest.
 */
function statusWrite(
  def: ResourceDef,
  old: KubeObject,
  body: KubeObject,
): { next: KubeObject; requested: KubeObject } {
  const requested = clone(old);
  if (body.status !== undefined) requested.status = body.status;
  else delete requested.status;
  const meta = requested.metadata!;
  for (const key of ['labels', 'annotations'] as const) {
    const value = body.metadata?.[key];
    if (value === undefined) delete meta[key];
    else meta[key] = value;
  }
  if (def.statusKeepsMetadata) return { next: requested, requested };
  const next = clone(old);
  if (body.status !== undefined) next.status = body.status;
  else delete next.status;
  // A built-in kind's status strategy lists the metadata among its reset fields: not credited.
  return { next, requested: def.custom ? requested : next };
}
