import { generateKeyPairSync } from 'node:crypto';

import type { Ec2Emulator, Ec2Instance } from '../ec2/index.js';
import type { KubeObject } from '../kube-apiserver/index.js';
import { createCertificateRequestPem } from '../pkcs10.js';
import { eventually } from '../processes.js';
import type { ClientCredentials, RealControlPlane } from './control-plane.js';
import { readyNodeStatus } from './kubelets.js';

// What an EC2 instance that real Karpenter launched does on a real control plane, and nothing of
// Karpenter's: it boots, its kubelet asks for a client certificate as the node-bootstrapper (a
// signed PKCS#10 CSR), waits until someone approves it and kube-controller-manager signs it,
// then, as system:node:<name> (the Node authorizer and NodeRestriction judge it), registers its
// Node with the provider ID, the taints its configuration names and a Ready status, renews its
// Lease, and asks for its serving certificate. Approving is the product's job (the sidecar).

export const NODE_BOOTSTRAPPER_NAMESPACE = 'openshift-machine-config-operator';
export const NODE_BOOTSTRAPPER = 'node-bootstrapper';
const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

const microNow = () => new Date().toISOString().replace(/Z$/, '000Z');

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface JoinedMachine {
  instanceId: string;
  nodeName: string;
  providerID: string;
  clientCsr: string;
  servingCsr: string;
  /** Milliseconds from creating each CSR to holding its signed certificate. */
  clientIssuedMs: number;
  servingIssuedMs: number;
}

export interface SimulatedMachinesOptions {
  /**
   * The taints the kubelet registers with (its KubeletConfiguration's registerWithTaints): on
   * OpenShift they come from the MachineConfigPool's rendered configuration.
   */
  registerWithTaints: (instance: Ec2Instance) => Taint[] | Promise<Taint[]>;
  /** How long a kubelet waits for each certificate before the machine gives up. */
  certificateTimeoutMs?: number;
  log?: (message: string) => void;
}

/**
 * The taints of an OpenShift machine's kubelet, as the MCO would render them: the pool its user
 * data's Ignition pointer names (`…:22623/config/<pool>`), then the registerWithTaints of the
 * KubeletConfigs whose machineConfigPoolSelector matches that pool's labels.
 */
export function taintsOfMachineConfigPool(
  plane: RealControlPlane,
): (instance: Ec2Instance) => Promise<Taint[]> {
  return async (instance) => {
    const ignition = JSON.parse(Buffer.from(instance.UserData ?? '', 'base64').toString()) as {
      ignition?: { config?: { merge?: { source?: string }[] } };
    };
    const source = ignition.ignition?.config?.merge?.[0]?.source ?? '';
    const pool = /\/config\/([^/?]+)$/.exec(source)?.[1];
    if (!pool) throw new Error(`user data names no MachineConfigPool: ${source}`);
    const live = await plane.get('machineconfiguration.openshift.io/v1', 'MachineConfigPool', pool);
    if (!live) throw new Error(`MachineConfigPool ${pool} does not exist`);
    const labels = live.metadata?.labels ?? {};
    const { json } = await plane.request(
      'GET',
      '/apis/machineconfiguration.openshift.io/v1/kubeletconfigs',
    );
    const configs = ((json as { items?: KubeObject[] }).items ?? []).filter((config) => {
      const selector = (
        config.spec as { machineConfigPoolSelector?: { matchLabels?: Record<string, string> } }
      ).machineConfigPoolSelector?.matchLabels;
      return selector && Object.entries(selector).every(([k, v]) => labels[k] === v);
    });
    return configs.flatMap(
      (config) =>
        (config.spec as { kubeletConfig?: { registerWithTaints?: Taint[] } }).kubeletConfig
          ?.registerWithTaints ?? [],
    );
  };
}

/** Boots every instance launched through CreateFleet after `start()`, once. */
export class SimulatedMachines {
  readonly joined: JoinedMachine[] = [];
  readonly failed: { instanceId: string; error: string }[] = [];
  private readonly seen = new Set<string>();
  private timer?: NodeJS.Timeout;
  private bootstrapToken?: string;
  private readonly leases = new Map<string, ClientCredentials>();
  private leasesRenewed = 0;

  constructor(
    private readonly plane: RealControlPlane,
    private readonly ec2: Ec2Emulator,
    private readonly options: SimulatedMachinesOptions,
  ) {}

  /**
   * The node-bootstrapper's identity, as the installer lays it down: a service account bound to
   * `system:node-bootstrapper` (create and read CSRs, nothing else).
   */
  async start(): Promise<this> {
    await this.plane.seed([
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: NODE_BOOTSTRAPPER, namespace: NODE_BOOTSTRAPPER_NAMESPACE },
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'system-bootstrap-node-bootstrapper' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'system:node-bootstrapper',
        },
        subjects: [
          {
            kind: 'ServiceAccount',
            name: NODE_BOOTSTRAPPER,
            namespace: NODE_BOOTSTRAPPER_NAMESPACE,
          },
        ],
      },
    ]);
    this.bootstrapToken = await this.plane.serviceAccountToken(
      NODE_BOOTSTRAPPER_NAMESPACE,
      NODE_BOOTSTRAPPER,
    );
    for (const instance of this.ec2.listInstances()) this.seen.add(instance.InstanceId);
    this.timer = setInterval(() => void this.tick(), 250);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    for (const instance of this.ec2.listInstances()) {
      if (this.seen.has(instance.InstanceId) || instance.State !== 'running') continue;
      this.seen.add(instance.InstanceId);
      this.boot(instance).catch((err: unknown) => {
        const error = err instanceof Error ? err.message : String(err);
        this.failed.push({ instanceId: instance.InstanceId, error });
        this.options.log?.(`machine ${instance.InstanceId}: ${error}`);
      });
    }
    // Leases every 10 s, a quarter of their duration, as each kubelet renews its own.
    if (Date.now() - this.leasesRenewed < 10_000) return;
    this.leasesRenewed = Date.now();
    for (const [node, identity] of this.leases) {
      const terminated = this.joined.find((m) => m.nodeName === node);
      if (terminated && this.ec2.getInstance(terminated.instanceId)?.State === 'terminated') {
        this.leases.delete(node);
        continue;
      }
      await this.plane
        .request(
          'PATCH',
          `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`,
          { spec: { renewTime: microNow() } },
          'application/merge-patch+json',
          identity,
        )
        .catch(() => undefined); // the API server restarting: the next round renews it
    }
  }

  private async boot(instance: Ec2Instance): Promise<void> {
    const nodeName = instance.PrivateDnsName;
    const zone = instance.AvailabilityZone ?? '';
    const providerID = `aws:///${zone}/${instance.InstanceId}`;
    const clientKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const client = await this.certificate(
      CLIENT_SIGNER,
      createCertificateRequestPem(
        { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] },
        clientKeys,
      ),
      ['digital signature', 'client auth'],
      this.bootstrapToken!,
    );
    const node: ClientCredentials = {
      certPem: client.certificate,
      keyPem: clientKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    const type = this.ec2.instanceType(instance.InstanceType);
    const resources = {
      cpu: String(type?.VCpus ?? 2),
      memory: `${type?.MemoryMiB ?? 8192}Mi`,
      pods: '250',
      'ephemeral-storage': '120Gi',
    };
    await this.asNode(node, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: nodeName,
        labels: {
          'kubernetes.io/hostname': nodeName,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'node.kubernetes.io/instance-type': instance.InstanceType,
          'topology.kubernetes.io/region': this.ec2.region,
          'topology.kubernetes.io/zone': zone,
        },
      },
      spec: {
        providerID,
        taints: await this.options.registerWithTaints(instance),
      },
    });
    await this.asNode(
      node,
      'PATCH',
      `/api/v1/nodes/${nodeName}/status`,
      {
        status: readyNodeStatus(instance.InstanceId, resources, [
          { type: 'InternalIP', address: instance.PrivateIpAddress },
          { type: 'Hostname', address: nodeName },
          { type: 'InternalDNS', address: nodeName },
        ]),
      },
      'application/merge-patch+json',
    );
    await this.asNode(
      node,
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: nodeName, namespace: 'kube-node-lease' },
        spec: { holderIdentity: nodeName, leaseDurationSeconds: 40, renewTime: microNow() },
      },
    );
    this.leases.set(nodeName, node);
    const serving = await this.certificate(
      SERVING_SIGNER,
      createCertificateRequestPem(
        {
          commonName: `system:node:${nodeName}`,
          organizations: ['system:nodes'],
          subjectAltNames: { dnsNames: [nodeName], ipAddresses: [instance.PrivateIpAddress] },
        },
        generateKeyPairSync('ec', { namedCurve: 'prime256v1' }),
      ),
      ['digital signature', 'server auth'],
      node,
    );
    this.joined.push({
      instanceId: instance.InstanceId,
      nodeName,
      providerID,
      clientCsr: client.name,
      servingCsr: serving.name,
      clientIssuedMs: client.ms,
      servingIssuedMs: serving.ms,
    });
    this.options.log?.(`machine ${instance.InstanceId} joined as ${nodeName}`);
  }

  /** Creates a CSR as `identity` and waits for its signed certificate, as a kubelet does. */
  private async certificate(
    signerName: string,
    pem: string,
    usages: string[],
    identity: string | ClientCredentials,
  ): Promise<{ name: string; certificate: string; ms: number }> {
    const started = Date.now();
    const created = await this.asNode(
      identity,
      'POST',
      '/apis/certificates.k8s.io/v1/certificatesigningrequests',
      {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { generateName: 'csr-' },
        spec: { request: Buffer.from(pem).toString('base64'), signerName, usages },
      },
    );
    const name = created.metadata!.name!;
    const certificate = await eventually(
      async () => {
        const { json } = await this.asNodeRaw(
          identity,
          'GET',
          `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`,
        );
        const status = json.status as
          { certificate?: string; conditions?: { type: string; message?: string }[] } | undefined;
        const refused = status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
        if (refused) throw new Error(`CSR ${name} ${refused.type}: ${refused.message ?? ''}`);
        return status?.certificate
          ? Buffer.from(status.certificate, 'base64').toString()
          : undefined;
      },
      {
        timeoutMs: this.options.certificateTimeoutMs ?? 60_000,
        intervalMs: 250,
        what: `CSR ${name} (${signerName}) to be approved and signed`,
      },
    );
    return { name, certificate, ms: Date.now() - started };
  }

  private async asNode(
    identity: string | ClientCredentials,
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<KubeObject> {
    const {
      status,
      json,
      body: text,
    } = await this.asNodeRaw(identity, method, path, body, contentType);
    if (status >= 300) throw new Error(`${method} ${path}: ${status} ${text}`);
    return json;
  }

  private asNodeRaw(
    identity: string | ClientCredentials,
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ) {
    return this.plane.request(method, path, body, contentType, identity);
  }
}
