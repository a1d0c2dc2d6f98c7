import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseAllDocuments, stringify } from 'yaml';

import { CertificateAuthority } from '../kube-apiserver/certificates.js';
import type { KubeObject } from '../kube-apiserver/index.js';
import { freePort, spawnProcess, type RunningProcess } from '../processes.js';
import { upstreamBinary } from '../upstream-binaries.js';

// A real Kubernetes control plane for the tests: etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, the binaries pinned in test/upstream/versions.json and built by the set-up.
// Configured as OpenShift runs what upstream has of it: TLS with the cluster's own CA, the Node
// and RBAC authorizers, service-account tokens (TokenRequest), the admission plugins
// NodeRestriction, OwnerReferencesPermissionEnforcement and ValidatingAdmissionPolicy, and the
// controllers the fleet relies on (garbage collector, namespace, CSR signing of approved CSRs,
// service-account tokens). Ports come from the OS; nothing outside a temporary directory is
// written, so several run side by side (a management and a guest cluster).

export interface ControlPlaneOptions {
  /** Names the processes in failure output, e.g. `management` or `guest`. */
  name?: string;
  /**
   * kube-controller-manager and kube-scheduler too (default true); a list: only those
   * kube-controller-manager controllers, no scheduler, and no wait for them to be ready.
   */
  controllers?: boolean | readonly string[];
  /** An audit log of every request (Metadata level), read by `auditedRequests`. */
  audit?: boolean;
  /** Each start is bounded (default 90 s: a loaded 2-core machine starts kube-apiserver in ~10 s). */
  startTimeoutMs?: number;
}

/** The controllers started: what the fleet's scenarios need of kube-controller-manager. */
const CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  // Signs approved CSRs; approving is the product's job (OpenShift runs no auto-approver for
  // kubelet CSRs of new machines), so the approving controller stays off.
  'certificatesigningrequest-signing-controller',
  'certificatesigningrequest-cleaner-controller',
  'deployment-controller',
  'replicaset-controller',
  // Lifts the not-ready taint the API server puts on a new Node once it is Ready, and watches
  // the kubelets' leases (test/support/control-plane/kubelets.ts renews them).
  'node-lifecycle-controller',
];

/** What the audit log says of one request (the fields tests read). */
export interface AuditEvent {
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string; groups?: string[] };
  responseStatus?: { code: number; message?: string };
  objectRef?: {
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
  };
}

/**
 * Two control planes started side by side (a management and a workload or guest cluster); if
 * either fails, the other is stopped and the failure thrown.
 */
export async function startControlPlanePair(
  first: ControlPlaneOptions,
  second: ControlPlaneOptions,
): Promise<[RealControlPlane, RealControlPlane]> {
  const started = await Promise.allSettled([
    RealControlPlane.start(first),
    RealControlPlane.start(second),
  ]);
  const [a, b] = started;
  if (a.status === 'fulfilled' && b.status === 'fulfilled') return [a.value, b.value];
  await Promise.all(started.flatMap((p) => (p.status === 'fulfilled' ? [p.value.stop()] : [])));
  throw (started.find((p) => p.status === 'rejected') as PromiseRejectedResult).reason;
}

export interface ClientCredentials {
  certPem: string;
  keyPem: string;
}

export class RealControlPlane {
  readonly ca = new CertificateAuthority(`kube-ca@${Math.floor(Date.now() / 1000)}`);
  readonly admin: ClientCredentials;
  private readonly dir = mkdtempSync(join(tmpdir(), 'fleet-control-plane-'));
  private readonly name: string;
  private readonly startTimeoutMs: number;
  private etcd?: RunningProcess;
  private apiServer?: RunningProcess;
  private controllerManager?: RunningProcess;
  private scheduler?: RunningProcess;
  private readonly discovery = new Map<
    string,
    { name: string; kind: string; namespaced: boolean }[]
  >();
  private etcdPort = 0;
  private etcdPeerPort = 0;
  private apiServerPort = 0;

  private constructor(private readonly options: ControlPlaneOptions) {
    this.name = options.name ?? 'cluster';
    this.startTimeoutMs = options.startTimeoutMs ?? 90_000;
    this.admin = this.ca.issueClient('kubernetes-admin', ['system:masters']);
  }

  /** Starts the whole control plane; on failure everything started is stopped again. */
  static async start(options: ControlPlaneOptions = {}): Promise<RealControlPlane> {
    const plane = new RealControlPlane(options);
    try {
      await plane.boot();
    } catch (err) {
      const output = plane.output();
      await plane.stop();
      throw new Error(
        `${plane.name}: control plane did not start: ${err instanceof Error ? err.message : String(err)}\n${output}`,
        { cause: err },
      );
    }
    return plane;
  }

  get url(): string {
    return `https://127.0.0.1:${this.apiServerPort}`;
  }

  /** A kubeconfig for these credentials (the admin's, a node's, a user's), or a bearer token. */
  kubeconfigYaml(
    credentials: ClientCredentials | { token: string } = this.admin,
    user = 'admin',
  ): string {
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: this.name,
          cluster: {
            server: this.url,
            'certificate-authority-data': Buffer.from(this.ca.certPem).toString('base64'),
          },
        },
      ],
      users: [
        {
          name: user,
          user:
            'token' in credentials
              ? { token: credentials.token }
              : {
                  'client-certificate-data': Buffer.from(credentials.certPem).toString('base64'),
                  'client-key-data': Buffer.from(credentials.keyPem).toString('base64'),
                },
        },
      ],
      contexts: [{ name: this.name, context: { cluster: this.name, user } }],
      'current-context': this.name,
    });
  }

  /** Writes a kubeconfig file into the control plane's directory and returns its path. */
  writeKubeconfig(
    credentials: ClientCredentials | { token: string } = this.admin,
    user = 'admin',
  ): string {
    const path = join(this.dir, `kubeconfig-${user.replace(/[^a-z0-9-]/gi, '_')}`);
    writeFileSync(path, this.kubeconfigYaml(credentials, user), { mode: 0o600 });
    return path;
  }

  /** A request with the admin's certificate (system:masters); the status and parsed body. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    /** a bearer token, or another client certificate (a node's), instead of the admin's */
    as?: string | ClientCredentials,
  ): Promise<{ status: number; body: string; json: KubeObject }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const token = typeof as === 'string' ? as : undefined;
    const certificate = typeof as === 'object' ? as : this.admin;
    const credentials = token ? {} : { cert: certificate.certPem, key: certificate.keyPem };
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.url}${path}`,
        {
          method,
          ca: this.ca.certPem,
          ...credentials,
          timeout: 10_000,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(payload
              ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }
              : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            let json: KubeObject = {};
            try {
              json = JSON.parse(text) as KubeObject;
            } catch {
              // /readyz and friends answer text
            }
            resolve({ status: res.statusCode ?? 0, body: text, json });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /**
   * The REST path of an object (or of its collection, without `name`), from discovery, as
   * clients find it: the resource whose kind matches, not a subresource.
   */
  async resourcePath(
    apiVersion: string,
    kind: string,
    name?: string,
    namespace?: string,
  ): Promise<string> {
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let resources = this.discovery.get(base);
    if (!resources) {
      const { status, json } = await this.request('GET', base);
      if (status !== 200) throw new Error(`discovery of ${base}: ${status}`);
      resources = (json as { resources: { name: string; kind: string; namespaced: boolean }[] })
        .resources;
      this.discovery.set(base, resources);
    }
    const resource = resources.find((r) => r.kind === kind && !r.name.includes('/'));
    if (!resource) throw new Error(`${apiVersion} serves no ${kind}`);
    const scope = resource.namespaced ? `/namespaces/${namespace ?? 'default'}` : '';
    return `${base}${scope}/${resource.name}${name ? `/${name}` : ''}`;
  }

  /** The object, or undefined when the server answers 404. */
  async get(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<KubeObject | undefined> {
    const { status, json, body } = await this.request(
      'GET',
      await this.resourcePath(apiVersion, kind, name, namespace),
    );
    if (status === 404) return undefined;
    if (status !== 200) throw new Error(`GET ${kind} ${name}: ${status} ${body}`);
    return json;
  }

  /** Creates each object (as kubectl create would), failing on any refusal; the last as created. */
  async create(...objects: KubeObject[]): Promise<KubeObject> {
    let created: KubeObject = {};
    for (const object of objects) {
      const path = await this.resourcePath(
        object.apiVersion!,
        object.kind!,
        undefined,
        object.metadata?.namespace,
      );
      const { status, body, json } = await this.request('POST', path, object);
      if (status !== 201)
        throw new Error(`create ${object.kind} ${object.metadata?.name}: ${status} ${body}`);
      created = json;
    }
    return created;
  }

  /**
   * Objects as a cluster already holds them (a fixture cluster's): namespaces first, each missing
   * namespace created, and each object's status written through its status subresource after
   * the create, as the controllers that own it would have.
   */
  async seed(objects: readonly KubeObject[]): Promise<void> {
    const rank = (o: KubeObject) =>
      o.kind === 'CustomResourceDefinition' ? 0 : o.kind === 'Namespace' ? 1 : 2;
    const namespaces = new Set<string>();
    for (const object of [...objects].sort((a, b) => rank(a) - rank(b))) {
      if (object.kind === 'CustomResourceDefinition') {
        await this.installCrdObjects([object]);
        continue;
      }
      const namespace = object.metadata?.namespace;
      if (namespace && !namespaces.has(namespace)) {
        namespaces.add(namespace);
        if (!(await this.get('v1', 'Namespace', namespace))) {
          await this.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
        }
      }
      if (
        object.kind === 'Namespace' &&
        (await this.get('v1', 'Namespace', object.metadata!.name!))
      ) {
        continue;
      }
      const created = await this.create(object);
      if (object.status !== undefined && object.kind !== 'Namespace') {
        // An update of the status subresource with the whole object (a merge patch would read a
        // null in the status as "remove the field").
        const path = await this.resourcePath(
          object.apiVersion!,
          object.kind!,
          object.metadata!.name,
          namespace,
        );
        const { status, body } = await this.request('PUT', `${path}/status`, {
          ...created,
          status: object.status,
        });
        // 404: a kind without a status subresource stored its status with the create.
        if (status !== 200 && status !== 404) {
          throw new Error(`status of ${object.kind} ${object.metadata?.name}: ${status} ${body}`);
        }
      }
    }
  }

  /** A service account's token from TokenRequest, as a projected volume would hold it. */
  async serviceAccountToken(namespace: string, name: string, seconds = 3600): Promise<string> {
    const { status, json, body } = await this.request(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: seconds },
      },
    );
    if (status !== 201) throw new Error(`TokenRequest for ${namespace}/${name}: ${status} ${body}`);
    return (json.status as { token: string }).token;
  }

  /**
   * The requests the API server refused `user` (403) or failed for it, from its audit log: a
   * test that expects none proves the user's RBAC covers everything it did.
   */
  auditedRequests(user: string): AuditEvent[] {
    if (!this.options.audit) throw new Error('start the control plane with audit: true');
    const file = join(this.dir, 'audit.log');
    if (!existsSync(file)) return [];
    const text = readFileSync(file, 'utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as AuditEvent)
      .filter((event) => event.user.username === user);
  }

  /** A patch of the object or of its status (`subresource: 'status'`). */
  async patch(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: 'merge' | 'json' = 'merge',
    subresource?: 'status',
    /** as this bearer token's identity rather than the admin */
    token?: string,
  ): Promise<KubeObject> {
    const path = await this.resourcePath(apiVersion, kind, name, namespace);
    const { status, json, body } = await this.request(
      'PATCH',
      subresource ? `${path}/${subresource}` : path,
      patch,
      type === 'merge' ? 'application/merge-patch+json' : 'application/json-patch+json',
      token,
    );
    if (status !== 200) throw new Error(`patch ${kind} ${name}: ${status} ${body}`);
    return json;
  }

  /**
   * Installs CRD files (every document of each) and waits until each is Established, as an
   * operator's install would.
   */
  async installCrds(
    files: readonly string[],
    /** a change made to each CRD before it is installed (the caller says why) */
    adapt: (crd: KubeObject) => KubeObject = (crd) => crd,
  ): Promise<void> {
    await this.installCrdObjects(
      files.flatMap((file) =>
        parseAllDocuments(readFileSync(file, 'utf8'))
          .map((doc) => doc.toJS() as KubeObject | null)
          .filter((crd): crd is KubeObject => crd?.kind === 'CustomResourceDefinition')
          .map(adapt),
      ),
    );
  }

  private async installCrdObjects(crds: readonly KubeObject[]): Promise<void> {
    const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    for (const crd of crds) {
      const { status, body } = await this.request('POST', path, crd);
      if (status !== 201 && status !== 409) {
        throw new Error(`CRD ${crd.metadata?.name}: ${status} ${body}`);
      }
    }
    for (const crd of crds) {
      await this.until(`CRD ${crd.metadata?.name} Established`, async () => {
        const { json } = await this.request('GET', `${path}/${crd.metadata!.name!}`);
        const conditions = (json.status as { conditions?: { type: string; status: string }[] })
          ?.conditions;
        return !!conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      });
    }
    this.discovery.clear();
  }

  /** kube-apiserver stopped and started again on the same port and etcd (its state kept). */
  async restartApiServer(): Promise<void> {
    await this.apiServer?.stop();
    await this.startApiServer();
  }

  /** etcd's current revision, from its JSON gateway. */
  async etcdRevision(): Promise<number> {
    const response = await this.etcdCall('/v3/kv/range', {
      key: Buffer.from('/registry/').toString('base64'),
      range_end: Buffer.from('/registry0').toString('base64'),
      count_only: true,
    });
    return Number((response as { header: { revision: string } }).header.revision);
  }

  /**
   * Compacts etcd at its current revision: every resourceVersion older than now is gone, so a
   * watch resumed from one gets 410 Gone, as after a real compaction.
   */
  async compactEtcd(): Promise<number> {
    const revision = await this.etcdRevision();
    await this.etcdCall('/v3/kv/compaction', { revision: String(revision), physical: true });
    return revision;
  }

  /** Everything the processes printed, for failure messages. */
  output(): string {
    return [this.etcd, this.apiServer, this.controllerManager, this.scheduler]
      .map((p) => p?.output().slice(-20_000) ?? '')
      .join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all([this.scheduler?.stop(), this.controllerManager?.stop()]);
    await this.apiServer?.stop();
    await this.etcd?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private file(name: string, content: string): string {
    const path = join(this.dir, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  }

  private async boot(): Promise<void> {
    const serviceAccountKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    this.file('ca.crt', this.ca.certPem);
    this.file('ca.key', this.ca.keyPem);
    this.file(
      'sa.key',
      serviceAccountKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    this.file(
      'sa.pub',
      serviceAccountKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    );
    const serving = this.ca.issueServing([
      '127.0.0.1',
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      '10.0.0.1',
    ]);
    this.file('apiserver.crt', serving.certPem);
    this.file('apiserver.key', serving.keyPem);
    [this.etcdPort, this.etcdPeerPort, this.apiServerPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
    ]);
    await this.startEtcd();
    await this.startApiServer();
    const { controllers } = this.options;
    if (Array.isArray(controllers)) await this.startControllerManager(controllers);
    else if (controllers !== false)
      await Promise.all([this.startControllerManager(CONTROLLERS), this.startScheduler()]);
  }

  private spawn(binary: string, args: string[]): RunningProcess {
    const started = spawnProcess({
      command: upstreamBinary(binary),
      args,
      // Nothing inherited: no proxy settings, no KUBECONFIG.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: this.dir },
      name: `${this.name} ${binary}`,
    });
    return started;
  }

  private async startEtcd(): Promise<void> {
    mkdirSync(join(this.dir, 'etcd'), { mode: 0o700 });
    const client = `http://127.0.0.1:${this.etcdPort}`;
    const peer = `http://127.0.0.1:${this.etcdPeerPort}`;
    this.etcd = this.spawn('etcd', [
      '--name=default',
      `--data-dir=${join(this.dir, 'etcd')}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      // Tests keep nothing across a crash of the machine; fsync only slows them.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    await this.until('etcd', async () => {
      await this.etcdRevision();
      return true;
    });
  }

  private async startApiServer(): Promise<void> {
    this.apiServer = this.spawn('kube-apiserver', [
      `--etcd-servers=http://127.0.0.1:${this.etcdPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${this.apiServerPort}`,
      `--tls-cert-file=${join(this.dir, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(this.dir, 'apiserver.key')}`,
      `--client-ca-file=${join(this.dir, 'ca.crt')}`,
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${join(this.dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(this.dir, 'sa.key')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--authorization-mode=Node,RBAC',
      // On top of the defaults (which include ValidatingAdmissionPolicy), what OpenShift enables
      // that upstream has.
      '--enable-admission-plugins=NodeRestriction,OwnerReferencesPermissionEnforcement',
      '--allow-privileged=true',
      '--profiling=false',
      ...(this.options.audit
        ? [
            `--audit-policy-file=${this.file(
              'audit-policy.yaml',
              'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n',
            )}`,
            `--audit-log-path=${join(this.dir, 'audit.log')}`,
            '--audit-log-mode=blocking',
          ]
        : []),
      '--v=0',
    ]);
    await this.until('kube-apiserver', async () => {
      const { status } = await this.request('GET', '/readyz');
      return status === 200;
    });
  }

  private async startControllerManager(controllers: readonly string[]): Promise<void> {
    const identity = this.ca.issueClient('system:kube-controller-manager');
    const kubeconfig = this.writeKubeconfig(identity, 'kube-controller-manager');
    this.controllerManager = this.spawn('kube-controller-manager', [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      `--cert-dir=${join(this.dir, 'kube-controller-manager')}`,
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--controllers=${controllers.join(',')}`,
      `--service-account-private-key-file=${join(this.dir, 'sa.key')}`,
      `--root-ca-file=${join(this.dir, 'ca.crt')}`,
      `--cluster-signing-cert-file=${join(this.dir, 'ca.crt')}`,
      `--cluster-signing-key-file=${join(this.dir, 'ca.key')}`,
      '--v=0',
    ]);
    if (controllers !== CONTROLLERS) return;
    // Ready once the token controller has given the default namespace's ServiceAccount life:
    // the service-account controller creates `default` there.
    await this.until('kube-controller-manager', async () => {
      const { status } = await this.request(
        'GET',
        '/api/v1/namespaces/default/serviceaccounts/default',
      );
      return status === 200;
    });
  }

  private async startScheduler(): Promise<void> {
    const identity = this.ca.issueClient('system:kube-scheduler');
    const kubeconfig = this.writeKubeconfig(identity, 'kube-scheduler');
    this.scheduler = this.spawn('kube-scheduler', [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      `--cert-dir=${join(this.dir, 'kube-scheduler')}`,
      '--leader-elect=false',
      '--v=0',
    ]);
  }

  private async until(what: string, ready: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    let last: unknown;
    const processes = [this.etcd, this.apiServer, this.controllerManager, this.scheduler];
    for (;;) {
      const exited = processes.find(
        (p) => p && (p.child.exitCode !== null || p.child.signalCode !== null),
      );
      if (exited) throw new Error(`${what}: a process exited while starting`);
      try {
        if (await ready()) return;
      } catch (err) {
        last = err;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${what} not ready after ${this.startTimeoutMs} ms${last instanceof Error ? `: ${last.message}` : ''}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async etcdCall(path: string, body: object): Promise<unknown> {
    const response = await fetch(`http://127.0.0.1:${this.etcdPort}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as unknown;
  }
}
