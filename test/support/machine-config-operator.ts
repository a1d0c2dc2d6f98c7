import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeApiServerEmulator, KubeObject } from './kube-apiserver/index.js';
import { labelSelectorRequirements, matchesLabels } from './kube-apiserver/selectors.js';

const MCO = 'machineconfiguration.openshift.io/v1';
const ROLE_LABEL = 'machineconfiguration.openshift.io/role';
const CURRENT = 'machineconfiguration.openshift.io/currentConfig';
const DESIRED = 'machineconfiguration.openshift.io/desiredConfig';
const STATE = 'machineconfiguration.openshift.io/state';
/** The Machine Config Server's port on every OpenShift cluster. */
export const MCS_PORT = 22623;

type Json = Record<string, unknown>;
interface Pool extends KubeObject {
  spec?: { machineConfigSelector?: unknown; nodeSelector?: unknown; paused?: boolean };
  status?: Json;
}
interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/** Why a booting instance did not get its configuration (its node then never joins). */
export class IgnitionFetchError extends Error {
  override readonly name = 'IgnitionFetchError';
}

export interface BootedConfig {
  pool: string;
  renderedConfig: string;
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const labelsOf = (o: KubeObject) => o.metadata?.labels ?? {};
const selects = (selector: unknown, o: KubeObject) =>
  selector !== undefined && matchesLabels(labelSelectorRequirements(selector), labelsOf(o));

/**
 * The Machine Config Operator, Daemon and Server of an emulated OpenShift cluster, reduced to
 * what Karpenter's pools need and faithful in that:
 * - KubeletConfig → MachineConfig `99-<pool>-generated-kubelet` (role label of each pool it
 *   selects, owned by the KubeletConfig);
 * - per pool, the MachineConfigs its machineConfigSelector selects render into
 *   `rendered-<pool>-<hash>` (status.configuration with its sources);
 * - a Node belongs to the one custom pool whose nodeSelector matches it, else to `worker` (the
 *   MCO's rule for custom pools), gets that pool's desiredConfig, and the daemon moves
 *   currentConfig to it unless the node is Degraded (state annotation);
 * - pool status: machine counts and Updated/Updating/Degraded conditions;
 * - the Machine Config Server answers `GET /config/<pool>` only for a pool that exists. The
 *   server is plain HTTP on a local port; a booting instance reaches it through `boot()`, which
 *   plays the instance's Ignition: it accepts only the cluster's MCS host and port and the
 *   cluster's CA bundle (no real TLS handshake, the one deviation).
 */
export class MachineConfigOperatorEmulator {
  private server?: Server;
  private readonly offs: (() => void)[] = [];
  private scheduled = false;
  /** Rendered configurations by name, as the MCS serves them. */
  private readonly rendered = new Map<string, { pool: string; sources: string[] }>();

  constructor(
    private readonly kube: KubeApiServerEmulator,
    /** `https://<api-int host>:22623`, as the worker's Ignition pointer names it. */
    readonly endpoint: string,
    /** The CA bundle the worker's pointer carries: the only one the MCS's certificate chains to. */
    readonly caBundle: string,
  ) {}

  async start(): Promise<void> {
    for (const kind of ['MachineConfigPool', 'MachineConfig', 'KubeletConfig']) {
      this.offs.push(this.kube.watch(MCO, kind, () => this.schedule()));
    }
    this.offs.push(this.kube.watch('v1', 'Node', () => this.schedule()));
    this.server = createServer((req, res) => {
      const match = /^\/config\/([a-z0-9-]+)$/.exec(req.url ?? '');
      const pool = match ? (this.kube.get(MCO, 'MachineConfigPool', match[1]!) as Pool) : undefined;
      const name = (pool?.status?.configuration as { name?: string } | undefined)?.name;
      if (!match || !pool || !name) {
        // What the real server answers for a pool it does not know.
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(`could not fetch config ${req.url ?? ''}: pool not found`);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/vnd.coreos.ignition+json; version=3.2.0' });
      res.end(
        JSON.stringify({
          ignition: { version: '3.2.0' },
          // The daemon's first boot reads which rendered configuration it was given.
          storage: {
            files: [
              {
                path: '/etc/machine-config-daemon/currentconfig',
                contents: { source: `data:,${name}` },
              },
            ],
          },
        }),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.sync();
  }

  async stop(): Promise<void> {
    for (const off of this.offs.splice(0)) off();
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
      headers: { Accept: 'application/vnd.coreos.ignition+json;version=3.2.0' },
    });
    const body = await res.text();
    if (!res.ok) throw new IgnitionFetchError(`GET ${source}: HTTP ${res.status}: ${body}`);
    const config = JSON.parse(body) as {
      storage: { files: { contents: { source: string } }[] };
    };
    const renderedConfig = config.storage.files[0]!.contents.source.replace(/^data:,/, '');
    return { pool: url.pathname.replace('/config/', ''), renderedConfig };
  }

  /** The MachineConfigs a rendered configuration was made of. */
  sources(renderedConfig: string): string[] {
    return this.rendered.get(renderedConfig)?.sources ?? [];
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
    this.generateKubeletMachineConfigs();
    const pools = this.kube.list(MCO, 'MachineConfigPool') as Pool[];
    const configs = this.kube.list(MCO, 'MachineConfig');
    const renderedByPool = new Map<string, string>();
    for (const pool of pools) {
      const name = pool.metadata!.name!;
      const sources = configs
        .filter((c) => !c.metadata?.name?.startsWith('rendered-'))
        .filter((c) => selects(pool.spec?.machineConfigSelector, c))
        .map((c) => c.metadata!.name!)
        .sort();
      const hash = createHash('sha256')
        .update(
          JSON.stringify(
            sources.map((s) => [s, configs.find((c) => c.metadata?.name === s)?.spec]),
          ),
        )
        .digest('hex')
        .slice(0, 32);
      const rendered = `rendered-${name}-${hash}`;
      this.rendered.set(rendered, { pool: name, sources });
      renderedByPool.set(name, rendered);
    }
    const members = new Map<string, KubeObject[]>(pools.map((p) => [p.metadata!.name!, []]));
    for (const node of this.kube.list('v1', 'Node')) {
      const custom = pools.filter(
        (p) =>
          !['worker', 'master'].includes(p.metadata!.name!) && selects(p.spec?.nodeSelector, node),
      );
      const pool =
        custom.length === 1
          ? custom[0]
          : pools.find((p) => p.metadata!.name === 'worker' && selects(p.spec?.nodeSelector, node));
      if (!pool) continue;
      const desired = renderedByPool.get(pool.metadata!.name!)!;
      members
        .get(pool.metadata!.name!)!
        .push(this.daemon(node, desired, pool.spec?.paused === true));
    }
    for (const pool of pools) {
      this.writeStatus(
        pool,
        renderedByPool.get(pool.metadata!.name!)!,
        members.get(pool.metadata!.name!)!,
      );
    }
  }

  /** The MCO's KubeletConfig controller: one generated MachineConfig per selected pool. */
  private generateKubeletMachineConfigs(): void {
    const pools = this.kube.list(MCO, 'MachineConfigPool') as Pool[];
    for (const kc of this.kube.list(MCO, 'KubeletConfig')) {
      const spec = (kc.spec ?? {}) as { machineConfigPoolSelector?: unknown; kubeletConfig?: Json };
      for (const pool of pools.filter((p) => selects(spec.machineConfigPoolSelector, p))) {
        const poolName = pool.metadata!.name!;
        const name = `99-${poolName}-generated-kubelet`;
        const contents = JSON.stringify(spec.kubeletConfig ?? {});
        const existing = this.kube.get(MCO, 'MachineConfig', name);
        const file = `data:,${encodeURIComponent(contents)}`;
        const body: KubeObject = {
          apiVersion: MCO,
          kind: 'MachineConfig',
          metadata: {
            name,
            labels: { [ROLE_LABEL]: poolName },
            ownerReferences: [
              {
                apiVersion: MCO,
                kind: 'KubeletConfig',
                name: kc.metadata!.name!,
                uid: kc.metadata!.uid!,
                controller: true,
              },
            ],
          },
          spec: {
            config: {
              ignition: { version: '3.2.0' },
              storage: {
                files: [{ path: '/etc/kubernetes/kubelet.conf', contents: { source: file } }],
              },
            },
          },
        };
        if (!existing) this.kube.create(body, { fieldManager: 'machine-config-controller' });
        else if (JSON.stringify(existing.spec) !== JSON.stringify(body.spec)) {
          this.kube.update(
            { ...body, metadata: { ...existing.metadata, ...body.metadata } },
            { fieldManager: 'machine-config-controller' },
          );
        }
      }
    }
  }

  /** The daemon on one node: it takes the desired configuration unless it is Degraded. */
  private daemon(node: KubeObject, desired: string, paused: boolean): KubeObject {
    const annotations = node.metadata?.annotations ?? {};
    const next = { ...annotations };
    if (!paused) next[DESIRED] = desired;
    if (next[STATE] !== 'Degraded' && next[DESIRED]) {
      next[CURRENT] = next[DESIRED]!;
      next[STATE] = 'Done';
    }
    if (JSON.stringify(next) === JSON.stringify(annotations)) return node;
    return this.kube.patch('v1', 'Node', node.metadata!.name!, undefined, {
      metadata: { annotations: next },
    });
  }

  private writeStatus(pool: Pool, rendered: string, nodes: KubeObject[]): void {
    const ann = (n: KubeObject) => n.metadata?.annotations ?? {};
    const machineCount = nodes.length;
    const degraded = nodes.filter((n) => ann(n)[STATE] === 'Degraded');
    const updated = nodes.filter((n) => ann(n)[CURRENT] === rendered && ann(n)[STATE] === 'Done');
    const isUpdated = updated.length === machineCount;
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
    const degradedMessage = degraded.length
      ? `${degraded.length} nodes are reporting degraded status on sync: ${degraded
          .map(
            (n) =>
              `node ${n.metadata!.name!} is reporting: "${ann(n)['machineconfiguration.openshift.io/reason'] ?? 'unexpected on-disk state'}"`,
          )
          .join(', ')}`
      : '';
    const status = {
      observedGeneration: pool.metadata?.generation ?? 1,
      configuration: {
        name: rendered,
        source: (this.rendered.get(rendered)?.sources ?? []).map((s) => ({
          apiVersion: MCO,
          kind: 'MachineConfig',
          name: s,
        })),
      },
      machineCount,
      updatedMachineCount: updated.length,
      readyMachineCount: updated.length,
      unavailableMachineCount: machineCount - updated.length,
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
          !isUpdated && degraded.length === 0,
          '',
          isUpdated ? '' : `All nodes are updating to MachineConfig ${rendered}`,
        ),
        condition(
          'NodeDegraded',
          degraded.length > 0,
          degraded.length ? '1 nodes are reporting degraded status on sync' : '',
          degradedMessage,
        ),
        condition('Degraded', degraded.length > 0, '', degradedMessage),
      ],
    };
    const { conditions: a, ...restA } = status;
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
