import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeApiServerEmulator, KubeObject } from './kube-apiserver/index.js';
import { labelSelectorRequirements, matchesLabels } from './kube-apiserver/selectors.js';

/*
 * The Machine Config Operator, Daemon and Server of an emulated OpenShift cluster, after
 * openshift/machine-config-operator at 7ff337a4 (every behaviour and the file it comes from:
 * machine-config-operator.README.md beside this file). What is emulated is what the fleet's
 * Karpenter pools meet; anything else is left out rather than guessed.
 */

const MCO = 'machineconfiguration.openshift.io/v1';
const ROLE_LABEL = 'machineconfiguration.openshift.io/role';
const CURRENT = 'machineconfiguration.openshift.io/currentConfig';
const DESIRED = 'machineconfiguration.openshift.io/desiredConfig';
const STATE = 'machineconfiguration.openshift.io/state';
const REASON = 'machineconfiguration.openshift.io/reason';
const SUFFIX_ANNOTATION = 'machineconfiguration.openshift.io/mc-name-suffix';
const CONTROLLER_VERSION = 'machineconfiguration.openshift.io/generated-by-controller-version';
/** Paths the kubelet-config controller writes (pkg/controller/kubelet-config/helpers.go). */
export const KUBELET_CONF = '/etc/kubernetes/kubelet.conf';
const NODE_SIZING_ENV = '/etc/node-sizing-enabled.env';
const KUBELET_LOG_LEVEL = '/etc/systemd/system/kubelet.service.d/20-logging.conf';
/** What the MCS adds for the daemon's first boot (pkg/server/server.go). */
const MCS_CONTENT = '/etc/mcs-machine-config-content.json';
/** The Machine Config Server's port on every OpenShift cluster. */
export const MCS_PORT = 22623;
/** The highest Ignition spec the MCS serves (ign3types.MaxVersion at 7ff337a4: 3.5.0). */
const MAX_IGNITION_MINOR = 5;

type Json = Record<string, unknown>;
interface Pool extends KubeObject {
  spec?: {
    machineConfigSelector?: unknown;
    nodeSelector?: unknown;
    paused?: boolean;
    maxUnavailable?: number | string;
  };
  status?: Json;
}
interface KubeletConfigObject extends KubeObject {
  spec?: {
    machineConfigPoolSelector?: unknown;
    kubeletConfig?: Json;
    autoSizingReserved?: boolean;
    logLevel?: number;
  };
  status?: { observedGeneration?: number; conditions?: KubeletConfigCondition[] };
}
interface KubeletConfigCondition {
  type: string;
  status: string;
  lastTransitionTime: string;
  message: string;
}
interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}
interface IgnitionFile {
  path: string;
  mode?: number;
  overwrite?: boolean;
  contents: { source: string };
}
interface Rendered {
  pool: string;
  sources: string[];
  files: IgnitionFile[];
}

/** Why a booting instance did not get its configuration (its node then never joins). */
export class IgnitionFetchError extends Error {
  override readonly name = 'IgnitionFetchError';
}

export interface BootedConfig {
  pool: string;
  renderedConfig: string;
  /** `/etc/kubernetes/kubelet.conf` as the instance received it (parsed), when served. */
  kubeletConfig?: Json;
}

/** One step of a node's update by the daemon, in the order it happened. */
export interface RolloutStep {
  node: string;
  config: string;
  step: 'cordon' | 'drain' | 'reboot' | 'done';
}

export interface MachineConfigOperatorOptions {
  /** How long each step of a node's update (cordon, drain, reboot) takes. */
  rolloutStepMs?: number;
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const labelsOf = (o: KubeObject) => o.metadata?.labels ?? {};
/**
 * metav1.LabelSelectorAsSelector as the MCO uses it: a nil or empty selector matches nothing
 * ("If a pool with a nil or empty selector creeps in, it should match nothing, not everything").
 */
function selects(selector: unknown, o: KubeObject): boolean {
  const requirements = labelSelectorRequirements(selector);
  return requirements.length > 0 && matchesLabels(requirements, labelsOf(o));
}
/** A value in a message, as Go's %v prints a string or a bool. */
const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const dataUrl = (text: string) => `data:,${encodeURIComponent(text)}`;
const fromDataUrl = (source: string) => decodeURIComponent(source.replace(/^data:,/, ''));
const file = (path: string, text: string): IgnitionFile => ({
  path,
  mode: 420,
  overwrite: true,
  contents: { source: dataUrl(text) },
});

/**
 * The kubelet.conf of the worker templates (templates/worker/01-worker-kubelet/_base/files/
 * kubelet.yaml), the starting point of every generated kubelet configuration of a non-master
 * pool: custom pools reuse the worker templates (template/render.go GenerateMachineConfigsForRole).
 */
export function workerTemplateKubeletConfiguration(): Json {
  return {
    kind: 'KubeletConfiguration',
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    authentication: {
      x509: { clientCAFile: '/etc/kubernetes/kubelet-ca.crt' },
      anonymous: { enabled: false },
    },
    cgroupDriver: 'systemd',
    cgroupRoot: '/',
    clusterDNS: ['172.30.0.10'],
    clusterDomain: 'cluster.local',
    containerLogMaxSize: '50Mi',
    enableSystemLogQuery: true,
    failSwapOn: false,
    maxPods: 250,
    kubeAPIQPS: 50,
    kubeAPIBurst: 100,
    podPidsLimit: 4096,
    protectKernelDefaults: true,
    rotateCertificates: true,
    serializeImagePulls: false,
    staticPodPath: '/etc/kubernetes/manifests',
    memorySwap: { swapBehavior: 'NoSwap' },
    systemCgroups: '/system.slice',
    systemReservedCgroup: '/system.slice',
    enforceNodeAllocatable: ['pods', 'system-reserved-compressible'],
    nodeStatusUpdateFrequency: '10s',
    nodeStatusReportFrequency: '5m0s',
    serverTLSBootstrap: true,
    tlsMinVersion: 'VersionTLS12',
    tlsCipherSuites: [
      'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
      'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    ],
  };
}

/** nodes.config.openshift.io workerLatencyProfile → the kubelet's status update frequency. */
const LATENCY_PROFILES: Record<string, string> = {
  Default: '10s',
  MediumUpdateAverageReaction: '20s',
  LowUpdateSlowReaction: '1m0s',
};

const isEmpty = (v: unknown) =>
  v === undefined ||
  v === null ||
  v === false ||
  v === 0 ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

/** mergo.Merge(dst, src, mergo.WithOverride): a zero value in src never overrides. */
function mergeOverride(dst: Json, src: Json): Json {
  const out: Json = structuredClone(dst);
  for (const [key, value] of Object.entries(src)) {
    if (isEmpty(value)) continue;
    const current = out[key];
    if (
      current &&
      typeof current === 'object' &&
      !Array.isArray(current) &&
      typeof value === 'object' &&
      !Array.isArray(value)
    ) {
      out[key] = mergeOverride(current as Json, value as Json);
    } else out[key] = structuredClone(value);
  }
  return out;
}

/**
 * validateUserKubeletConfig (pkg/controller/kubelet-config/helpers.go): what a KubeletConfig may
 * not set, first failure only, in the MCO's words.
 */
export function kubeletConfigError(spec: KubeletConfigObject['spec']): string | undefined {
  const level = spec?.logLevel;
  if (level !== undefined && (level < 0 || level > 10))
    return `KubeletConfig's LogLevel is not valid [0,10]: ${level}`;
  const kc = spec?.kubeletConfig;
  if (!kc) return undefined;
  const set = (v: unknown) => !isEmpty(v);
  const refused = 'is not allowed to be set, but contains';
  if (set(kc.cgroupDriver))
    return `KubeletConfiguration: cgroupDriver ${refused}: ${String(kc.cgroupDriver)}`;
  if (set(kc.clusterDNS))
    return `KubeletConfiguration: clusterDNS ${refused}: [${(kc.clusterDNS as string[]).join(' ')}]`;
  if (set(kc.clusterDomain))
    return `KubeletConfiguration: clusterDomain ${refused}: ${String(kc.clusterDomain)}`;
  if (set(kc.featureGates))
    return `KubeletConfiguration: featureGates ${refused}: ${JSON.stringify(kc.featureGates)}`;
  if (kc.failSwapOn !== undefined && kc.failSwapOn !== null)
    return `KubeletConfiguration: failSwapOn ${refused}: ${text(kc.failSwapOn)}`;
  const swap = (kc.memorySwap as { swapBehavior?: string } | undefined)?.swapBehavior;
  if (set(swap)) return `KubeletConfiguration: swapBehavior ${refused}: ${swap}`;
  if (set(kc.systemReserved) && spec?.autoSizingReserved === true)
    return 'KubeletConfiguration: autoSizingReserved and systemdReserved cannot be set together';
  if (
    set(kc.systemReservedCgroup) &&
    set(kc.systemCgroups) &&
    kc.systemReservedCgroup !== kc.systemCgroups
  )
    return `KubeletConfiguration: systemReservedCgroup (${String(kc.systemReservedCgroup)}) must match systemCgroups (${String(kc.systemCgroups)})`;
  return undefined;
}

/** validateStaticPodPathGivenPool: only a control-plane pool's check differs. */
function staticPodPathError(spec: KubeletConfigObject['spec'], pool: string): string | undefined {
  const path = spec?.kubeletConfig?.staticPodPath;
  if (path === undefined) return undefined;
  if (pool === 'master' || pool === 'arbiter')
    return `KubeletConfiguration: staticPodPath is not allowed to be set for control plane pool "${pool}"`;
  if (path)
    return `KubeletConfiguration: staticPodPath must be empty for pool "${pool}", but contains: ${text(path)}`;
  return undefined;
}

/**
 * generateKubeletIgnFiles: the pool's whole kubelet.conf (the role's template, the latency
 * profile for `worker` only, then the KubeletConfig over it), plus the node-sizing and log-level
 * files when asked for. systemReserved cpu/memory/ephemeral-storage go to the node-sizing file,
 * not kubelet.conf, as on a real node.
 */
function kubeletFiles(
  spec: KubeletConfigObject['spec'],
  original: Json,
): { files: IgnitionFile[]; error?: string } {
  let merged = structuredClone(original);
  const userReserved: Record<string, string> = {};
  if (spec?.kubeletConfig) {
    const desired = structuredClone(spec.kubeletConfig);
    const reserved = { ...((desired.systemReserved as Record<string, string> | undefined) ?? {}) };
    for (const key of ['memory', 'cpu', 'ephemeral-storage']) {
      if (reserved[key] !== undefined) userReserved[key] = reserved[key];
      delete reserved[key];
    }
    if (desired.systemReserved) desired.systemReserved = reserved;
    delete desired.featureGates;
    if ('protectKernelDefaults' in desired) merged.protectKernelDefaults = false;
    merged = mergeOverride(merged, desired);
    const enforce = desired.enforceNodeAllocatable as string[] | undefined;
    if (!desired.systemReservedCgroup && enforce?.length) {
      if (!enforce.some((v) => v === 'system-reserved' || v === 'system-reserved-compressible'))
        delete merged.systemReservedCgroup;
    }
  }
  if (merged.reservedSystemCPUs) {
    delete merged.systemReservedCgroup;
    const kept = ((merged.enforceNodeAllocatable as string[] | undefined) ?? []).filter(
      (v) => v !== 'system-reserved' && v !== 'system-reserved-compressible',
    );
    merged.enforceNodeAllocatable = kept.includes('pods') ? kept : ['pods', ...kept];
  }
  if (
    merged.systemReservedCgroup &&
    merged.systemCgroups &&
    merged.systemReservedCgroup !== merged.systemCgroups
  ) {
    return {
      files: [],
      error: `invalid merged configuration: systemReservedCgroup (${text(merged.systemReservedCgroup)}) must match systemCgroups (${text(merged.systemCgroups)})`,
    };
  }
  const files: IgnitionFile[] = [];
  const sizing = (auto: boolean | undefined) =>
    file(
      NODE_SIZING_ENV,
      `NODE_SIZING_ENABLED=${String(auto ?? false)}\nSYSTEM_RESERVED_MEMORY=${userReserved.memory || '1Gi'}\nSYSTEM_RESERVED_CPU=${userReserved.cpu || '500m'}\nSYSTEM_RESERVED_ES=${userReserved['ephemeral-storage'] || '1Gi'}\n`,
    );
  if (Object.keys(userReserved).length > 0) files.push(sizing(undefined));
  else if (spec?.autoSizingReserved !== undefined) files.push(sizing(spec.autoSizingReserved));
  if (spec?.logLevel !== undefined)
    files.push(
      file(KUBELET_LOG_LEVEL, `[Service]\nEnvironment="KUBELET_LOG_LEVEL=${spec.logLevel}"\n`),
    );
  files.push(file(KUBELET_CONF, JSON.stringify(merged)));
  return { files };
}

/**
 * The Machine Config Operator's controllers, the daemon on every node and the Machine Config
 * Server, for an emulated cluster:
 * - node config (97-<pool>-generated-kubelet for every pool at start and when the cluster's node
 *   settings change, the latency profile for `worker` only);
 * - KubeletConfig (validated, status written, 99-<pool>-generated-kubelet[-N] holding a whole
 *   kubelet.conf; a failed one holds back the rendering of every pool it selects);
 * - render (rendered-<pool>-<hash> from the selected MachineConfigs, worker ones merged first;
 *   none selected is RenderDegraded);
 * - node (which pool a node is in, desiredConfig handed out within maxUnavailable);
 * - daemon (cordon, drain, reboot, done; a Degraded node stays as it is);
 * - pool status (counts; Updated, Updating, NodeDegraded, RenderDegraded, Degraded);
 * - the MCS, `GET /config/<pool>` with the rendered Ignition. The server is plain HTTP on a
 *   local port; a booting instance reaches it through `boot()`, which plays the instance's
 *   Ignition: it accepts only the cluster's MCS host and port and the cluster's CA bundle (no
 *   real TLS handshake).
 */
export class MachineConfigOperatorEmulator {
  private server?: Server;
  private readonly offs: (() => void)[] = [];
  private scheduled = false;
  /** Rendered configurations by name, as the MCS serves them. */
  private readonly rendered = new Map<string, Rendered>();
  /** Pools whose rendering a test holds back. */
  private readonly held = new Set<string>();
  /** Nodes the daemon is updating right now. */
  private readonly updating = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The node-config controller's next sync is due (start, or nodes.config.openshift.io changed). */
  private nodeConfigChanged = true;
  /** Pools the render controller could not render, with its message. */
  private readonly renderFailures = new Map<string, string>();
  /** Nodes the node controller cannot place, and why (the MCO logs it and leaves them be). */
  private readonly nodeErrors = new Map<string, string>();
  /** Every step of every node update, in order. */
  readonly rollout: RolloutStep[] = [];

  constructor(
    private readonly kube: KubeApiServerEmulator,
    /** `https://<api-int host>:22623`, as the worker's Ignition pointer names it. */
    readonly endpoint: string,
    /** The CA bundle the worker's pointer carries: the only one the MCS's certificate chains to. */
    readonly caBundle: string,
    private readonly options: MachineConfigOperatorOptions = {},
  ) {}

  async start(): Promise<void> {
    for (const kind of ['MachineConfigPool', 'MachineConfig', 'KubeletConfig']) {
      this.offs.push(this.kube.watch(MCO, kind, () => this.schedule()));
    }
    this.offs.push(this.kube.watch('v1', 'Node', () => this.schedule()));
    try {
      this.offs.push(
        this.kube.watch('config.openshift.io/v1', 'Node', () => {
          this.nodeConfigChanged = true;
          this.schedule();
        }),
      );
    } catch {
      // A cluster without the config.openshift.io Node kind: default node settings.
    }
    this.server = createServer((req, res) =>
      this.serve(req.method, req.url, req.headers.accept, res),
    );
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.sync();
  }

  async stop(): Promise<void> {
    for (const off of this.offs.splice(0)) off();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** The local address of the Machine Config Server. */
  get url(): string {
    const port = (this.server?.address() as AddressInfo | null)?.port;
    if (!port) throw new Error('Machine Config Server not started');
    return `http://127.0.0.1:${port}`;
  }

  /** Holds back rendering of these pools (as a slow render controller would) until released. */
  holdRendering(...pools: string[]): () => void {
    for (const p of pools) this.held.add(p);
    return () => {
      for (const p of pools) this.held.delete(p);
      this.schedule();
    };
  }

  /** Nodes the node controller refused to place, with the MCO's error. */
  unmanagedNodes(): { node: string; message: string }[] {
    return [...this.nodeErrors].map(([node, message]) => ({ node, message }));
  }

  /** The MCS, as pkg/server/api.go answers. */
  private serve(
    method: string | undefined,
    url: string | undefined,
    accept: string | undefined,
    res: import('node:http').ServerResponse,
  ): void {
    const empty = (status: number) => {
      res.writeHead(status, { 'Content-Length': '0' });
      res.end();
    };
    if (method !== 'GET' && method !== 'HEAD') return empty(405);
    const version = ignitionVersionFor(accept ?? '');
    if (!version) return empty(400);
    const path = new URL(url ?? '', 'http://mcs').pathname;
    if (path === '') return empty(400);
    // The pool is the path's last element (path.Base); an unknown one fails in GetConfig.
    const poolName = path.split('/').pop() ?? '';
    const pool = /^[a-z0-9-]+$/.test(poolName)
      ? this.kube.get(MCO, 'MachineConfigPool', poolName)
      : undefined;
    const status = pool?.status as { configuration?: { name?: string } } | undefined;
    const name = status?.configuration?.name;
    const rendered = name ? this.rendered.get(name) : undefined;
    // No such pool, or none rendered yet: GetConfig fails, which the server answers with 500.
    if (!pool || !name || !rendered) return empty(500);
    const body = JSON.stringify({
      ignition: { version },
      storage: {
        files: [
          ...rendered.files,
          // The daemon's first boot reads which rendered configuration it was given.
          file(MCS_CONTENT, JSON.stringify({ kind: 'MachineConfig', metadata: { name } })),
        ],
      },
    });
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
    });
    res.end(method === 'HEAD' ? undefined : body);
  }

  /**
   * What a new instance's Ignition does with its user data: fetch the merged config from the
   * Machine Config Server it names. Throws IgnitionFetchError when it cannot (the instance then
   * never becomes a node).
   */
  async boot(userData: string | undefined): Promise<BootedConfig> {
    let source: string | undefined;
    let ca: unknown;
    try {
      const pointer = JSON.parse(userData ?? '') as {
        ignition?: {
          config?: { merge?: { source?: string }[] };
          security?: { tls?: { certificateAuthorities?: { source?: string }[] } };
        };
      };
      source = pointer.ignition?.config?.merge?.[0]?.source;
      ca = pointer.ignition?.security?.tls?.certificateAuthorities;
    } catch {
      throw new IgnitionFetchError('user data is not an Ignition config');
    }
    if (!source) throw new IgnitionFetchError('user data names no config source');
    const url = new URL(source);
    if (url.origin !== new URL(this.endpoint).origin) {
      throw new IgnitionFetchError(`${url.origin} is not this cluster's Machine Config Server`);
    }
    if (JSON.stringify(ca) !== this.caBundle) {
      throw new IgnitionFetchError(`TLS: the MCS certificate does not chain to the pointer's CA`);
    }
    const res = await fetch(`${this.url}${url.pathname}`, {
      // What Ignition v2 (spec 3) sends.
      headers: { Accept: 'application/vnd.coreos.ignition+json;version=3.5.0, */*;q=0.1' },
    });
    const body = await res.text();
    if (!res.ok) throw new IgnitionFetchError(`GET ${source}: HTTP ${res.status}: ${body}`);
    const config = JSON.parse(body) as { storage: { files: IgnitionFile[] } };
    const read = (path: string) => {
      const f = config.storage.files.find((x) => x.path === path);
      return f ? fromDataUrl(f.contents.source) : undefined;
    };
    const content = JSON.parse(read(MCS_CONTENT) ?? '{}') as { metadata?: { name?: string } };
    const kubelet = read(KUBELET_CONF);
    return {
      pool: url.pathname.replace('/config/', ''),
      renderedConfig: content.metadata?.name ?? '',
      ...(kubelet ? { kubeletConfig: JSON.parse(kubelet) as Json } : {}),
    };
  }

  /** The MachineConfigs a rendered configuration was made of. */
  sources(renderedConfig: string): string[] {
    return this.rendered.get(renderedConfig)?.sources ?? [];
  }

  /** A file of a rendered configuration, as a node booting from it would write it. */
  renderedFile(renderedConfig: string, path: string): string | undefined {
    const f = this.rendered.get(renderedConfig)?.files.find((x) => x.path === path);
    return f ? fromDataUrl(f.contents.source) : undefined;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // Never inside a watch handler: the emulator delivers events synchronously.
    setTimeout(() => {
      this.scheduled = false;
      if (this.server) this.sync();
    }, 0);
  }

  private sync(): void {
    const pools = this.kube.list(MCO, 'MachineConfigPool') as Pool[];
    // The node-config controller syncs when the controller starts and when the cluster's node
    // settings change, never for a pool alone (no MachineConfigPool handler): a pool created
    // later has no 97- MachineConfig until then, and a deleted pool's stays.
    if (this.nodeConfigChanged) {
      this.nodeConfigChanged = false;
      this.generateNodeConfigMachineConfigs(pools);
    }
    this.generateKubeletMachineConfigs(pools);
    const renderedByPool = this.render(pools);
    const members = this.placeNodes(pools);
    for (const pool of pools) {
      const name = pool.metadata!.name!;
      const target = renderedByPool.get(name);
      const nodes = members.get(name) ?? [];
      if (target && !pool.spec?.paused) this.handOut(pool, target, nodes);
      for (const node of nodes) this.daemon(node);
      this.writeStatus(pool, target, members.get(name) ?? []);
    }
  }

  private originalKubeletConfiguration(pool: string): Json {
    const original = workerTemplateKubeletConfiguration();
    // updateOriginalKubeConfigwithNodeConfig runs for role `worker` only: a custom pool's
    // generated kubelet.conf never carries the latency profile.
    if (pool === 'worker') {
      let profile: string | undefined;
      try {
        const cluster = this.kube.get('config.openshift.io/v1', 'Node', 'cluster');
        profile = (cluster?.spec as { workerLatencyProfile?: string } | undefined)
          ?.workerLatencyProfile;
      } catch {
        profile = undefined;
      }
      if (profile && LATENCY_PROFILES[profile])
        original.nodeStatusUpdateFrequency = LATENCY_PROFILES[profile];
    }
    return original;
  }

  private writeMachineConfig(body: KubeObject): void {
    const name = body.metadata!.name!;
    const existing = this.kube.get(MCO, 'MachineConfig', name);
    if (!existing) this.kube.create(body, { fieldManager: 'machine-config-controller' });
    else if (
      JSON.stringify(existing.spec) !== JSON.stringify(body.spec) ||
      JSON.stringify(existing.metadata?.ownerReferences) !==
        JSON.stringify(body.metadata?.ownerReferences)
    ) {
      this.kube.update(
        { ...body, metadata: { ...existing.metadata, ...body.metadata } },
        { fieldManager: 'machine-config-controller' },
      );
    }
  }

  private machineConfig(
    name: string,
    role: string,
    files: IgnitionFile[],
    owner?: KubeObject,
  ): KubeObject {
    return {
      apiVersion: MCO,
      kind: 'MachineConfig',
      metadata: {
        name,
        labels: { [ROLE_LABEL]: role },
        annotations: { [CONTROLLER_VERSION]: 'emulated' },
        ...(owner
          ? {
              ownerReferences: [
                {
                  apiVersion: MCO,
                  kind: owner.kind!,
                  name: owner.metadata!.name!,
                  uid: owner.metadata!.uid!,
                  controller: true,
                  blockOwnerDeletion: true,
                },
              ],
            }
          : {}),
      },
      spec: { config: { ignition: { version: '3.5.0' }, storage: { files } } },
    };
  }

  /** kubelet_config_nodes.go: 97-<pool>-generated-kubelet for every pool there is now. */
  private generateNodeConfigMachineConfigs(pools: Pool[]): void {
    for (const pool of pools) {
      const name = pool.metadata!.name!;
      this.writeMachineConfig(
        this.machineConfig(`97-${name}-generated-kubelet`, name, [
          file(KUBELET_CONF, JSON.stringify(this.originalKubeletConfiguration(name))),
        ]),
      );
    }
  }

  /** kubelet_config_controller.go syncKubeletConfig, for every KubeletConfig. */
  private generateKubeletMachineConfigs(pools: Pool[]): void {
    const kcs = (this.kube.list(MCO, 'KubeletConfig') as KubeletConfigObject[]).filter(
      (kc) => !kc.metadata?.deletionTimestamp,
    );
    const wanted = new Set<string>();
    for (const kc of kcs) {
      const spec = kc.spec ?? {};
      const matched = pools.filter((p) => selects(spec.machineConfigPoolSelector, p));
      const invalid = kubeletConfigError(spec);
      if (invalid) {
        this.kubeletConfigStatus(kc, invalid);
        // Its MachineConfigs stay as they were: the MCO returns before touching them.
        for (const mc of this.ownedBy(kc)) wanted.add(mc);
        continue;
      }
      if (matched.length === 0) {
        this.kubeletConfigStatus(kc, 'could not find any MachineConfigPool set for KubeletConfig');
        continue;
      }
      let failure: string | undefined;
      for (const pool of matched) {
        const poolName = pool.metadata!.name!;
        const name = this.managedKey(kc, poolName, kcs, pools);
        wanted.add(name);
        failure = staticPodPathError(spec, poolName);
        if (failure) break;
        const { files, error } = kubeletFiles(spec, this.originalKubeletConfiguration(poolName));
        if (error) {
          failure = error;
          break;
        }
        this.writeMachineConfig(this.machineConfig(name, poolName, files, kc));
      }
      this.kubeletConfigStatus(kc, failure);
    }
    // cascadeDelete: a KubeletConfig's MachineConfigs go with it (or with its last pool).
    for (const mc of this.kube.list(MCO, 'MachineConfig')) {
      const owner = mc.metadata?.ownerReferences?.find((o) => o.kind === 'KubeletConfig');
      if (owner && !wanted.has(mc.metadata!.name!))
        this.kube.delete(MCO, 'MachineConfig', mc.metadata!.name!);
    }
  }

  private ownedBy(kc: KubeObject): string[] {
    return this.kube
      .list(MCO, 'MachineConfig')
      .filter((mc) => mc.metadata?.ownerReferences?.some((o) => o.uid === kc.metadata?.uid))
      .map((mc) => mc.metadata!.name!);
  }

  /**
   * getManagedKubeletConfigKey: the first KubeletConfig of a pool renders into
   * 99-<pool>-generated-kubelet, each later one into -1, -2 … (kept in its mc-name-suffix
   * annotation), so the newest merges last.
   */
  private managedKey(
    kc: KubeletConfigObject,
    pool: string,
    all: KubeletConfigObject[],
    pools: Pool[],
  ): string {
    const base = `99-${pool}-generated-kubelet`;
    let suffix = kc.metadata?.annotations?.[SUFFIX_ANNOTATION];
    if (suffix === undefined) {
      const poolObject = pools.find((p) => p.metadata?.name === pool)!;
      const forPool = all.filter(
        (k) => k !== kc && selects(k.spec?.machineConfigPoolSelector, poolObject),
      );
      suffix =
        forPool.length === 0
          ? ''
          : String(
              Math.max(
                0,
                ...forPool.map((k) => Number(k.metadata?.annotations?.[SUFFIX_ANNOTATION] || 0)),
              ) + 1,
            );
      this.kube.patch(MCO, 'KubeletConfig', kc.metadata!.name!, undefined, {
        metadata: { annotations: { [SUFFIX_ANNOTATION]: suffix } },
      });
    }
    return suffix ? `${base}-${suffix}` : base;
  }

  /** syncStatusOnly: KubeletConfigAccepted, then the legacy Success or Failure after it. */
  private kubeletConfigStatus(kc: KubeletConfigObject, error: string | undefined): void {
    const message = error ? `Error: ${error}` : 'Success';
    const previous = (kc.status?.conditions ?? []).filter(
      (c) => c.type !== 'Success' && c.type !== 'Failure',
    );
    const last = previous[previous.length - 1];
    const accepted: KubeletConfigCondition = {
      type: 'KubeletConfigAccepted',
      status: error ? 'False' : 'True',
      lastTransitionTime: now(),
      message,
    };
    const conditions =
      last && last.message === message
        ? previous.map((c, i) => (i === previous.length - 1 ? { ...c } : c))
        : [...previous, accepted].slice(-3);
    conditions.push({
      type: error ? 'Failure' : 'Success',
      status: 'True',
      lastTransitionTime: conditions[conditions.length - 1]!.lastTransitionTime,
      message,
    });
    const status = { observedGeneration: kc.metadata?.generation ?? 1, conditions };
    const strip = (s: unknown) =>
      JSON.stringify(s, (k, v: unknown) => (k === 'lastTransitionTime' ? undefined : v));
    if (strip(status) === strip(kc.status)) return;
    this.kube.patchStatus(MCO, 'KubeletConfig', kc.metadata!.name!, undefined, status, {
      fieldManager: 'machine-config-controller',
    });
  }

  /** render_controller.go: one rendered configuration per pool, or RenderDegraded. */
  private render(pools: Pool[]): Map<string, string> {
    const configs = this.kube
      .list(MCO, 'MachineConfig')
      .filter((c) => !c.metadata?.name?.startsWith('rendered-'));
    const kcs = this.kube.list(MCO, 'KubeletConfig') as KubeletConfigObject[];
    const out = new Map<string, string>();
    for (const pool of pools) {
      const name = pool.metadata!.name!;
      const previous = (pool.status?.configuration as { name?: string } | undefined)?.name;
      if (previous && this.rendered.has(previous)) out.set(name, previous);
      if (this.held.has(name)) continue;
      // AreMCGeneratingSubControllersCompletedForPool: wait for every KubeletConfig of the pool.
      const pending = kcs.some((kc) => {
        if (!selects(kc.spec?.machineConfigPoolSelector, pool)) return false;
        const conditions = kc.status?.conditions ?? [];
        const last = conditions[conditions.length - 1];
        return (
          (kc.metadata?.generation ?? 1) !== kc.status?.observedGeneration ||
          !last ||
          !(
            (last.type === 'KubeletConfigAccepted' && last.status === 'True') ||
            last.type === 'Success'
          )
        );
      });
      if (pending) continue;
      const selected = configs
        .filter((c) => selects(pool.spec?.machineConfigSelector, c))
        .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
      if (selected.length === 0) {
        out.delete(name);
        this.renderFailures.set(
          name,
          `Failed to render configuration for pool ${name}: no MachineConfigs found matching selector ${selectorString(pool.spec?.machineConfigSelector)}`,
        );
        continue;
      }
      this.renderFailures.delete(name);
      // MergeMachineConfigs: the worker role's configurations first, then the pool's own, so a
      // custom pool's generated kubelet.conf is the one its nodes get.
      const worker = selected.filter((c) => labelsOf(c)[ROLE_LABEL] === 'worker');
      const others = selected.filter((c) => labelsOf(c)[ROLE_LABEL] !== 'worker');
      const files = new Map<string, IgnitionFile>();
      for (const c of [...worker, ...others]) {
        const spec = c.spec as { config?: { storage?: { files?: IgnitionFile[] } } } | undefined;
        for (const f of spec?.config?.storage?.files ?? []) files.set(f.path, f);
      }
      const sources = selected.map((c) => c.metadata!.name!);
      const hash = createHash('sha256')
        .update(JSON.stringify(selected.map((c) => [c.metadata!.name, c.spec])))
        .digest('hex')
        .slice(0, 32);
      const rendered = `rendered-${name}-${hash}`;
      this.rendered.set(rendered, { pool: name, sources, files: [...files.values()] });
      out.set(name, rendered);
    }
    return out;
  }

  /** helpers.go GetPoolsForNode: which pool each node belongs to. */
  private placeNodes(pools: Pool[]): Map<string, KubeObject[]> {
    const members = new Map<string, KubeObject[]>(pools.map((p) => [p.metadata!.name!, []]));
    this.nodeErrors.clear();
    for (const node of this.kube.list('v1', 'Node')) {
      if (labelsOf(node)['kubernetes.io/os'] === 'windows') continue;
      const matching = pools.filter((p) => selects(p.spec?.nodeSelector, node));
      const master = matching.find((p) => p.metadata!.name === 'master');
      const worker = matching.find((p) => p.metadata!.name === 'worker');
      const custom = matching.filter((p) => !['master', 'worker'].includes(p.metadata!.name!));
      let pool: Pool | undefined;
      if (custom.length > 1) {
        // The node is left alone: no pool counts it and nothing updates it.
        this.nodeErrors.set(
          node.metadata!.name!,
          `node ${node.metadata!.name!} belongs to ${custom.length} custom roles, cannot proceed with this Node`,
        );
        continue;
      } else if (custom.length === 1) pool = master ?? custom[0];
      else pool = master ?? worker;
      if (pool) members.get(pool.metadata!.name!)!.push(node);
    }
    return members;
  }

  /** node_controller.go: desiredConfig to as many nodes as maxUnavailable allows. */
  private handOut(pool: Pool, target: string, nodes: KubeObject[]): void {
    const ann = (n: KubeObject) => n.metadata?.annotations ?? {};
    const unschedulable = (n: KubeObject) =>
      (n.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;
    const unavailable = nodes.filter(
      (n) =>
        (ann(n)[DESIRED] && ann(n)[DESIRED] !== ann(n)[CURRENT]) ||
        (ann(n)[STATE] !== undefined && ann(n)[STATE] !== 'Done') ||
        unschedulable(n),
    ).length;
    const raw = pool.spec?.maxUnavailable ?? 1;
    const max =
      typeof raw === 'string' && raw.endsWith('%')
        ? Math.max(1, Math.floor((Number(raw.slice(0, -1)) * nodes.length) / 100))
        : Math.max(1, Number(raw));
    let capacity = max - unavailable;
    for (const node of [...nodes].sort((a, b) =>
      a.metadata!.name!.localeCompare(b.metadata!.name!),
    )) {
      if (ann(node)[DESIRED] === target) continue;
      // A node that never ran the daemon (no currentConfig) is not updated, it is first-booted.
      const firstBoot = !ann(node)[CURRENT];
      if (!firstBoot && capacity <= 0) continue;
      if (!firstBoot) capacity--;
      this.kube.patch('v1', 'Node', node.metadata!.name!, undefined, {
        metadata: {
          // A state already there (a Degraded daemon) stays as the daemon wrote it.
          annotations: firstBoot
            ? { [DESIRED]: target, [CURRENT]: target, [STATE]: ann(node)[STATE] ?? 'Done' }
            : { [DESIRED]: target },
        },
      });
    }
  }

  /** The daemon: cordon, drain, reboot into the desired configuration, uncordon. */
  private daemon(node: KubeObject): void {
    const name = node.metadata!.name!;
    const ann = node.metadata?.annotations ?? {};
    if (this.updating.has(name) || ann[STATE] === 'Degraded') return;
    const desired = ann[DESIRED];
    if (!desired || desired === ann[CURRENT]) return;
    this.updating.add(name);
    const steps: RolloutStep['step'][] = ['cordon', 'drain', 'reboot', 'done'];
    const next = (i: number) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.server) return;
        const live = this.kube.get('v1', 'Node', name);
        if (!live) {
          this.updating.delete(name);
          return;
        }
        const step = steps[i]!;
        this.rollout.push({ node: name, config: desired, step });
        if (step === 'cordon')
          this.kube.patch('v1', 'Node', name, undefined, {
            metadata: { annotations: { [STATE]: 'Working' } },
            spec: { unschedulable: true },
          });
        if (step === 'done') {
          this.kube.patch('v1', 'Node', name, undefined, {
            metadata: { annotations: { [CURRENT]: desired, [STATE]: 'Done', [REASON]: null } },
            spec: { unschedulable: null },
          });
          this.updating.delete(name);
          this.schedule();
          return;
        }
        next(i + 1);
      }, this.options.rolloutStepMs ?? 0);
      this.timers.add(timer);
    };
    next(0);
  }

  private writeStatus(pool: Pool, rendered: string | undefined, nodes: KubeObject[]): void {
    const ann = (n: KubeObject) => n.metadata?.annotations ?? {};
    const unschedulable = (n: KubeObject) =>
      (n.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;
    const machineCount = nodes.length;
    const degraded = nodes.filter((n) => ann(n)[STATE] === 'Degraded');
    const updated = nodes.filter(
      (n) => rendered && ann(n)[CURRENT] === rendered && ann(n)[STATE] === 'Done',
    );
    const ready = updated.filter((n) => !unschedulable(n));
    const unavailable = nodes.filter(
      (n) =>
        ann(n)[CURRENT] !== ann(n)[DESIRED] ||
        (ann(n)[STATE] !== undefined && ann(n)[STATE] !== 'Done') ||
        unschedulable(n),
    );
    const isUpdated = rendered !== undefined && updated.length === machineCount;
    const previous = (pool.status?.conditions ?? []) as Condition[];
    const condition = (
      type: string,
      status: boolean,
      reason: string,
      message: string,
    ): Condition => {
      const s = status ? 'True' : 'False';
      const old = previous.find((c) => c.type === type);
      return {
        type,
        status: s,
        reason,
        message,
        lastTransitionTime: old && old.status === s ? old.lastTransitionTime : now(),
      };
    };
    const name = pool.metadata!.name!;
    const renderFailure = this.renderFailures.get(name);
    const degradedMessage = degraded.length
      ? `${degraded.length} nodes are reporting degraded status on sync: ${degraded
          .map(
            (n) =>
              `node ${n.metadata!.name!} is reporting: "${ann(n)[REASON] || 'unexpected on-disk state'}"`,
          )
          .join(', ')}`
      : '';
    const status: Json = {
      observedGeneration: pool.metadata?.generation ?? 1,
      ...(rendered
        ? {
            configuration: {
              name: rendered,
              source: (this.rendered.get(rendered)?.sources ?? []).map((s) => ({
                apiVersion: MCO,
                kind: 'MachineConfig',
                name: s,
              })),
            },
          }
        : {}),
      machineCount,
      updatedMachineCount: updated.length,
      readyMachineCount: ready.length,
      unavailableMachineCount: unavailable.length,
      degradedMachineCount: degraded.length,
      conditions: [
        condition(
          'Updated',
          isUpdated,
          '',
          isUpdated ? `All nodes are updated with MachineConfig ${rendered}` : '',
        ),
        condition(
          'Updating',
          !isUpdated && rendered !== undefined && degraded.length === 0,
          '',
          isUpdated || !rendered ? '' : `All nodes are updating to MachineConfig ${rendered}`,
        ),
        condition(
          'NodeDegraded',
          degraded.length > 0,
          degraded.length ? `${degraded.length} nodes are reporting degraded status on sync` : '',
          degradedMessage,
        ),
        condition('RenderDegraded', renderFailure !== undefined, '', renderFailure ?? ''),
        condition(
          'Degraded',
          degraded.length > 0 || renderFailure !== undefined,
          '',
          renderFailure ?? degradedMessage,
        ),
      ],
    };
    const { conditions: a, ...restA } = status as { conditions: Condition[] } & Json;
    const { conditions: b = [], ...restB } = (pool.status ?? {}) as Json & {
      conditions?: Condition[];
    };
    const same =
      JSON.stringify(restA) === JSON.stringify(restB) &&
      JSON.stringify(a.map(({ lastTransitionTime: _t, ...c }) => c)) ===
        JSON.stringify(b.map(({ lastTransitionTime: _t, ...c }) => c));
    if (same) return;
    this.kube.patchStatus(MCO, 'MachineConfigPool', name, undefined, status, {
      fieldManager: 'machine-config-operator',
    });
  }
}

/** labels.Selector's String() for the RenderDegraded message. */
function selectorString(selector: unknown): string {
  return labelSelectorRequirements(selector)
    .map((r) => {
      if (!('values' in r)) return r.op === 'exists' ? r.key : `!${r.key}`;
      if (r.op === 'in' && r.values.length === 1) return `${r.key}=${r.values[0]}`;
      return `${r.key} ${r.op} (${r.values.join(',')})`;
    })
    .join(',');
}

/**
 * detectSpecVersionFromAcceptHeader (pkg/server/api.go): the Ignition spec version to serve, or
 * undefined for a version the server cannot serve (400). A header with no MIME type at all, or
 * no Ignition version in it, gets spec 2.2, as curl does.
 */
export function ignitionVersionFor(accept: string): string | undefined {
  const values = accept
    .split(',')
    .map((value) => value.split(';').map((p) => p.trim()))
    .filter((parts) => parts[0]!.includes('/'))
    .map((parts) => {
      let version: string | undefined;
      let q: number | undefined;
      for (const ext of parts.slice(1)) {
        const [key, val] = ext.split('=', 2) as [string, string | undefined];
        if (key === 'version' && version === undefined && val && /^\d+(\.\d+){0,2}$/.test(val))
          version = val;
        else if (key === 'q' && q === undefined && val !== undefined && !Number.isNaN(Number(val)))
          q = Number(val);
      }
      return { subtype: parts[0]!.split('/', 2)[1], version, q: q ?? 1 };
    })
    .sort((a, b) => b.q - a.q);
  for (const v of values) {
    if (v.subtype !== 'vnd.coreos.ignition+json' || !v.version) continue;
    const [major = 0, minor = 0] = v.version.split('.').map(Number);
    if (major === 2 && minor >= 2) return '2.2.0';
    if (major === 3 && minor <= MAX_IGNITION_MINOR) return `3.${minor}.0`;
    // A newer minor of the spec the server speaks gets its newest; anything else is refused.
    if (major === 3) return `3.${MAX_IGNITION_MINOR}.0`;
    return undefined;
  }
  return '2.2.0';
}
