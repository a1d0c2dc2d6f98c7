import type { KubeObject } from '../kube-apiserver/index.js';
import type { RealControlPlane } from './control-plane.js';

// What the kubelets of a real control plane's nodes would do, and nothing else: register their
// Node as Ready, report every pod the scheduler bound to them as running and ready, and remove a
// deleted pod once its (absent) containers have stopped. There are no containers; the pods'
// controllers (ReplicaSets, Deployments) are the real ones.

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
/** MicroTime, as a Lease's renewTime is written. */
const microNow = () => new Date().toISOString().replace(/Z$/, '000Z');

/** A Ready Node's status as its kubelet posts it: resources, addresses, one machine's identity. */
export function readyNodeStatus(
  machineID: string,
  resources: Record<string, string>,
  addresses: { type: string; address: string }[],
): Record<string, unknown> {
  return {
    capacity: resources,
    allocatable: resources,
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status',
        lastHeartbeatTime: now(),
        lastTransitionTime: now(),
      },
    ],
    addresses,
    nodeInfo: {
      kubeletVersion: 'v1.34.4',
      operatingSystem: 'linux',
      architecture: 'amd64',
      containerRuntimeVersion: 'cri-o://1.34.0',
      kernelVersion: '5.14.0',
      osImage: 'Red Hat Enterprise Linux CoreOS',
      kubeProxyVersion: '',
      machineID,
      systemUUID: machineID,
      bootID: machineID,
    },
  };
}

export class SimulatedKubelets {
  private timer?: NodeJS.Timeout;
  private busy = false;
  private readonly nodes = new Set<string>();
  private leasesRenewed = 0;

  constructor(private readonly plane: RealControlPlane) {}

  /** Registers `name` (a control-plane node unless `role` says otherwise) as a Ready Node. */
  async register(name: string, role: 'master' | 'worker' = 'master'): Promise<void> {
    await this.plane.create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          [`node-role.kubernetes.io/${role}`]: '',
          ...(role === 'master' ? { 'node-role.kubernetes.io/control-plane': '' } : {}),
        },
      },
    });
    const resources = { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' };
    await this.plane.patch(
      'v1',
      'Node',
      name,
      undefined,
      { status: readyNodeStatus(name, resources, [{ type: 'Hostname', address: name }]) },
      'merge',
      'status',
    );
    // The kubelet's heartbeat, which the node lifecycle controller reads.
    await this.plane.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'kube-node-lease' },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microNow() },
    });
    this.nodes.add(name);
  }

  /** Reports bound pods running and ready, every 250 ms until stopped. */
  start(): this {
    this.timer = setInterval(() => void this.tick(), 250);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      // Leases every 10 s, as a kubelet renews them (a quarter of their duration).
      if (Date.now() - this.leasesRenewed > 10_000) {
        this.leasesRenewed = Date.now();
        for (const node of this.nodes) {
          await this.plane.patch('coordination.k8s.io/v1', 'Lease', node, 'kube-node-lease', {
            spec: { renewTime: microNow() },
          });
        }
      }
      const { json } = await this.plane.request(
        'GET',
        '/api/v1/pods?fieldSelector=spec.nodeName!%3D',
      );
      for (const pod of (json as { items?: KubeObject[] }).items ?? []) {
        const status = pod.status as { phase?: string } | undefined;
        if (pod.metadata?.deletionTimestamp) {
          // The kubelet stops the containers, then removes the pod for good (its status
          // manager deletes with a zero grace period, for this very pod).
          await this.plane
            .request(
              'DELETE',
              `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`,
              { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } },
            )
            .catch(() => undefined);
          continue;
        }
        if (status?.phase === 'Running') continue;
        const containers =
          (pod.spec as { containers?: { name: string; image: string }[] }).containers ?? [];
        const t = now();
        const condition = (type: string) => ({ type, status: 'True', lastTransitionTime: t });
        await this.plane
          .patch(
            'v1',
            'Pod',
            pod.metadata!.name!,
            pod.metadata!.namespace,
            {
              status: {
                phase: 'Running',
                startTime: t,
                conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(
                  condition,
                ),
                containerStatuses: containers.map((c) => ({
                  name: c.name,
                  image: c.image,
                  imageID: c.image,
                  ready: true,
                  started: true,
                  restartCount: 0,
                  state: { running: { startedAt: t } },
                })),
              },
            },
            'merge',
            'status',
          )
          .catch(() => undefined); // deleted meanwhile: the next tick sees the list as it is
      }
    } catch {
      // the API server restarting: the next tick tries again
    } finally {
      this.busy = false;
    }
  }
}
