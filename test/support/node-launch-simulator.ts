import { randomBytes } from 'node:crypto';
import type { Ec2Emulator } from './ec2/index.js';
import type { InProcessClient, KubeApiServerEmulator, KubeObject } from './kube-apiserver/index.js';
import { kubeletCsrRequest, type CertificateRequestSans } from './pkcs10.js';
import type { BootedConfig, MachineConfigOperatorEmulator } from './machine-config-operator.js';
import { eventually } from './processes.js';

export const NODE_BOOTSTRAPPER =
  'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
const TERMINATION_FINALIZER = 'karpenter.sh/termination';
/** karpenter-provider-aws's EC2NodeClass finalizer (pkg/apis/v1 TerminationFinalizer). */
const NODECLASS_FINALIZER = 'karpenter.k8s.aws/termination';
const NODECLAIM = 'karpenter.sh/v1';
const NODECLASS = 'karpenter.k8s.aws/v1';
/** What Karpenter labels its NodeClaims and Nodes with, naming their EC2NodeClass. */
const NODECLASS_LABEL = 'karpenter.k8s.aws/ec2nodeclass';
/** The operand's service account (libs/cloud-provider's OPERAND_NAMESPACE/SERVICE_ACCOUNT_NAME). */
export const KARPENTER_USER = {
  username: 'system:serviceaccount:openshift-karpenter:karpenter',
  groups: [
    'system:serviceaccounts',
    'system:serviceaccounts:openshift-karpenter',
    'system:authenticated',
  ],
};

export interface LaunchedNode {
  nodeClaim: string;
  /** The MachineConfigPool and rendered configuration the instance booted with (with an MCO). */
  booted?: BootedConfig;
  nodeName: string;
  instanceId: string;
  providerID: string;
  clientCsr: string;
  servingCsr: string;
  /** Milliseconds from creating each CSR to seeing it approved. */
  clientApprovalMs: number;
  servingApprovalMs: number;
}

export interface NodeLaunchSimulatorOptions {
  kube: KubeApiServerEmulator;
  ec2: Ec2Emulator;
  zone?: string;
  instanceType?: string;
  vcpus?: number;
  /** How long Karpenter takes to drain and terminate a deleted NodeClaim's node. */
  terminationDelayMs?: number;
  /** How long a launch waits for each approval before giving up. */
  approvalTimeoutMs?: number;
  /**
   * The cluster's Machine Config Server: a new instance fetches its configuration from the URL
   * in its user data first, and never becomes a node when that fails.
   */
  mco?: MachineConfigOperatorEmulator;
  log?: (message: string) => void;
  /** Who Karpenter is (default KARPENTER_USER; a hosted guest's operand is kube-system:karpenter). */
  karpenterUser?: { username: string; groups: string[] };
}

export interface CreatedNodeClaim {
  name: string;
  instanceId: string;
  providerID: string;
  nodeName: string;
  nodeClass: string;
  /** The user data the instance was launched with (the NodeClass's, as Karpenter passes it). */
  userData: string | undefined;
}

/** The fleet's launch gate (libs/cloud-provider aws/admission-policies.ts LAUNCH_GATE_POLICY_NAME). */
const LAUNCH_GATE_POLICY = 'karpenter-fleet-nodeclaim-launch-gate';
export const isLaunchGateDenial = (err: unknown): boolean =>
  err instanceof Error && err.message.includes(`'${LAUNCH_GATE_POLICY}'`);

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const LEASE = 'coordination.k8s.io/v1';
/** The kubelet renews its Lease every 10 s (a quarter of nodeLeaseDurationSeconds, 40). */
const LEASE_RENEW_MS = 10_000;
/** How often the simulated kubelet posts its status when nothing changed (kubelet: 5 min). */
const NODE_STATUS_REPORT_MS = 60_000;
interface Taint {
  key?: string;
  effect?: string;
}
const suffix = () => randomBytes(3).toString('hex').slice(0, 5);

/**
 * Plays Karpenter and a booting node on an emulated cluster, for tests and the demo: a NodeClaim
 * for a NodePool, an EC2 instance behind it, the kubelet's client CSR (a real signed PKCS#10, sent
 * as the node-bootstrapper), the Node once that CSR is approved, then the serving CSR (sent as the
 * node). Deleting a NodeClaim terminates its instance and lifts Karpenter's finalizer, as
 * Karpenter's termination controller would.
 */
export class NodeLaunchSimulator {
  private stopWatch?: () => void;
  /** The kubelets' heartbeats (node Leases and status), while there are nodes to beat for. */
  private heartbeat?: NodeJS.Timeout;
  private readonly kubelets = new Set<string>();
  readonly terminated: string[] = [];
  /**
   * What Karpenter does goes through RBAC as its service account, so the operand needs exactly
   * the permissions the provider grants it (the kubelet's writes stay in-process: a real server
   * authorizes those with the Node authorizer, which the emulator does not have).
   */
  private readonly karpenter: InProcessClient;

  constructor(private readonly options: NodeLaunchSimulatorOptions) {
    this.karpenter = options.kube.as(options.karpenterUser ?? KARPENTER_USER);
  }

  start(): this {
    const offClaims = this.options.kube.watch(NODECLAIM, 'NodeClaim', (type, claim) => {
      if (type === 'DELETED' || !claim.metadata?.deletionTimestamp) return;
      // Never inside the handler: the emulator delivers events synchronously.
      setTimeout(() => this.terminate(claim), this.options.terminationDelayMs ?? 0);
    });
    // Karpenter's EC2NodeClass termination controller lifts its finalizer once the class is
    // being deleted (no NodeClaim uses it any more by then: disabling drains them first).
    const offClasses = this.options.kube.watch(NODECLASS, 'EC2NodeClass', (type, nodeClass) => {
      if (type === 'DELETED' || !nodeClass.metadata?.deletionTimestamp) return;
      if (!nodeClass.metadata.finalizers?.includes(NODECLASS_FINALIZER)) return;
      const name = nodeClass.metadata.name ?? '';
      setTimeout(() => this.releaseNodeClass(name), 0);
    });
    this.stopWatch = () => {
      offClaims();
      offClasses();
    };
    return this;
  }

  stop(): void {
    this.stopWatch?.();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /**
   * The kubelet's heartbeats, as the kubelet sends them: its Lease in kube-node-lease renewed
   * every nodeLeaseDurationSeconds/4 (10 s of the default 40 s), and the node's status posted
   * every nodeStatusReportFrequency (here 1 min, the kubelet's 5 min being too slow to watch
   * in a demo) with each condition's lastHeartbeatTime moved on. A node that is gone loses its
   * Lease (upstream: its ownerReference to the Node, garbage-collected).
   */
  private beat(): void {
    const { kube } = this.options;
    const t = now();
    for (const nodeName of [...this.kubelets]) {
      const node = kube.get('v1', 'Node', nodeName);
      if (!node) {
        this.kubelets.delete(nodeName);
        if (kube.get(LEASE, 'Lease', nodeName, 'kube-node-lease'))
          kube.delete(LEASE, 'Lease', nodeName, 'kube-node-lease');
        continue;
      }
      kube.patch(LEASE, 'Lease', nodeName, 'kube-node-lease', {
        spec: { renewTime: new Date().toISOString().replace('Z', '000Z') },
      });
      const status = node.status as { conditions?: { lastHeartbeatTime?: string }[] } | undefined;
      const last = status?.conditions?.[0]?.lastHeartbeatTime;
      if (!last || Date.now() - Date.parse(last) >= NODE_STATUS_REPORT_MS) {
        kube.patchStatus('v1', 'Node', nodeName, undefined, {
          conditions: (status?.conditions ?? []).map((c) => ({ ...c, lastHeartbeatTime: t })),
        });
      }
    }
    if (!this.kubelets.size && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }

  /**
   * Karpenter's EC2NodeClass status controller, as its service account: the termination
   * finalizer, then status (resolved subnets, security groups, AMI, instance profile) with
   * Ready=True. Tests call it when they want the class ready, so "not ready yet" can be tested.
   */
  markNodeClassReady(name = 'default'): KubeObject {
    const kube = this.karpenter;
    const live = kube.get(NODECLASS, 'EC2NodeClass', name);
    if (!live) throw new Error(`EC2NodeClass ${name} does not exist`);
    const finalizers = live.metadata?.finalizers ?? [];
    if (!finalizers.includes(NODECLASS_FINALIZER))
      kube.patch(NODECLASS, 'EC2NodeClass', name, undefined, {
        metadata: { finalizers: [...finalizers, NODECLASS_FINALIZER] },
      });
    const spec = (live.spec ?? {}) as {
      amiSelectorTerms?: { id?: string }[];
      instanceProfile?: string;
    };
    const t = now();
    const zone = this.options.zone ?? 'us-east-1a';
    return kube.patchStatus(NODECLASS, 'EC2NodeClass', name, undefined, {
      subnets: [{ id: 'subnet-karpenter-sim', zone }],
      securityGroups: [{ id: 'sg-karpenter-sim' }],
      amis: (spec.amiSelectorTerms ?? []).flatMap((term) =>
        term.id
          ? [
              {
                id: term.id,
                requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
              },
            ]
          : [],
      ),
      ...(spec.instanceProfile ? { instanceProfile: spec.instanceProfile } : {}),
      conditions: [
        'AMIsReady',
        'InstanceProfileReady',
        'SecurityGroupsReady',
        'SubnetsReady',
        'ValidationSucceeded',
        'Ready',
      ].map((type) => ({ type, status: 'True', reason: type, message: '', lastTransitionTime: t })),
    });
  }

  private releaseNodeClass(name: string): void {
    const kube = this.karpenter;
    const live = kube.get(NODECLASS, 'EC2NodeClass', name);
    const finalizers = live?.metadata?.finalizers ?? [];
    if (!live || !finalizers.includes(NODECLASS_FINALIZER)) return;
    kube.patch(NODECLASS, 'EC2NodeClass', name, undefined, {
      metadata: { finalizers: finalizers.filter((f) => f !== NODECLASS_FINALIZER) },
    });
  }

  private say(message: string): void {
    this.options.log?.(message);
  }

  private terminate(claim: KubeObject): void {
    const { ec2 } = this.options;
    const kube = this.karpenter;
    const name = claim.metadata?.name ?? '';
    const live = kube.get(NODECLAIM, 'NodeClaim', name);
    if (!live?.metadata?.finalizers?.includes(TERMINATION_FINALIZER)) return;
    const status = (live.status ?? {}) as { providerID?: string; nodeName?: string };
    const instanceId = status.providerID?.split('/').at(-1);
    if (instanceId && ec2.getInstance(instanceId)) ec2.setInstanceState(instanceId, 'terminated');
    if (status.nodeName) {
      // The Node carries Karpenter's termination finalizer (registration added it).
      kube.delete('v1', 'Node', status.nodeName);
      if (kube.get('v1', 'Node', status.nodeName))
        kube.patch('v1', 'Node', status.nodeName, undefined, { metadata: { finalizers: null } });
    }
    kube.patch(
      NODECLAIM,
      'NodeClaim',
      name,
      undefined,
      [{ op: 'remove', path: '/metadata/finalizers' }],
      'json',
    );
    this.terminated.push(name);
    this.say(`NodeClaim ${name} terminated (instance ${instanceId ?? '-'})`);
  }

  /**
   * Creates a NodeClaim of the NodePool with a running instance behind it (Launched), launched
   * with the user data of the NodePool's EC2NodeClass (or `userData`, as a tampered launch).
   * As in Karpenter, the NodeClaim is created before the instance: when admission refuses it
   * (the fleet's launch gate, say) this throws and nothing is launched.
   */
  createNodeClaim(
    nodePool: string,
    options: { instance?: { PrivateDnsName?: string }; userData?: string } = {},
  ): CreatedNodeClaim {
    const { ec2 } = this.options;
    const kube = this.karpenter;
    const zone = this.options.zone ?? 'us-east-1a';
    const instanceType = this.options.instanceType ?? 'm6i.xlarge';
    const name = `${nodePool}-${suffix()}`;
    // Karpenter makes its NodePool the owner, so deleting the NodePool deletes its NodeClaims.
    const owner = kube.get(NODECLAIM, 'NodePool', nodePool);
    const nodeClassRef = (
      owner?.spec as
        | {
            template?: {
              spec?: { nodeClassRef?: { group?: string; kind?: string; name?: string } };
            };
          }
        | undefined
    )?.template?.spec?.nodeClassRef ?? {
      group: 'karpenter.k8s.aws',
      kind: 'EC2NodeClass',
      name: 'default',
    };
    // karpenter-provider-aws serves EC2NodeClass only: Karpenter ignores any other NodePool
    // (IsManaged in sigs.k8s.io/karpenter pkg/utils/nodepool) and never launches for it.
    if (nodeClassRef.group !== 'karpenter.k8s.aws' || nodeClassRef.kind !== 'EC2NodeClass')
      throw new Error(
        `Karpenter ignores NodePool ${nodePool}: its nodeClassRef names ${nodeClassRef.group}/${nodeClassRef.kind}, not karpenter.k8s.aws/EC2NodeClass`,
      );
    const nodeClass = nodeClassRef.name ?? 'default';
    const userData =
      options.userData ??
      (kube.get(NODECLASS, 'EC2NodeClass', nodeClass)?.spec as { userData?: string } | undefined)
        ?.userData;
    kube.create(
      {
        apiVersion: NODECLAIM,
        kind: 'NodeClaim',
        metadata: {
          name,
          labels: {
            'karpenter.sh/nodepool': nodePool,
            [NODECLASS_LABEL]: nodeClass,
            'node.kubernetes.io/instance-type': instanceType,
          },
          finalizers: [TERMINATION_FINALIZER],
          ...(owner?.metadata?.uid
            ? {
                ownerReferences: [
                  {
                    apiVersion: NODECLAIM,
                    kind: 'NodePool',
                    name: nodePool,
                    uid: owner.metadata.uid,
                    blockOwnerDeletion: true,
                  },
                ],
              }
            : {}),
        },
        spec: {
          nodeClassRef: {
            group: nodeClassRef.group,
            kind: nodeClassRef.kind,
            name: nodeClass,
          },
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [instanceType] },
          ],
        },
      },
      { fieldManager: 'karpenter' },
    );
    const instance = ec2.addInstance({
      AvailabilityZone: zone,
      InstanceType: instanceType,
      Tags: { 'karpenter.sh/nodeclaim': name, 'karpenter.sh/nodepool': nodePool },
      ...(userData !== undefined ? { UserData: userData } : {}),
      ...(options.instance ?? {}),
    });
    const providerID = `aws:///${zone}/${instance.InstanceId}`;
    const vcpus = String(this.options.vcpus ?? 4);
    kube.patchStatus(NODECLAIM, 'NodeClaim', name, undefined, {
      providerID,
      imageID: instance.ImageId,
      capacity: { cpu: vcpus, memory: '16Gi', pods: '110' },
      allocatable: { cpu: vcpus, memory: '15Gi', pods: '110' },
      conditions: [
        {
          type: 'Launched',
          status: 'True',
          reason: 'Launched',
          message: '',
          lastTransitionTime: now(),
        },
      ],
    });
    this.say(`NodeClaim ${name} launched ${instance.InstanceId} (${instance.PrivateDnsName})`);
    return {
      name,
      instanceId: instance.InstanceId,
      providerID,
      nodeName: instance.PrivateDnsName,
      nodeClass,
      userData,
    };
  }

  /**
   * Creates a CSR as the given user, as a kubelet would; returns its name. A serving CSR names
   * the instance's PrivateDnsName and private IP (as the kubelet does from the node's
   * addresses) unless `request.subjectAltNames` says otherwise.
   */
  submitCsr(
    nodeName: string,
    kind: 'client' | 'serving',
    as?: { username: string; groups: string[] },
    request: { subjectAltNames?: CertificateRequestSans; usages?: string[] } = {},
  ): string {
    const name = `csr-${suffix()}${suffix()}`;
    const instance = this.options.ec2
      .listInstances()
      .find((i) => i.PrivateDnsName === nodeName && i.State !== 'terminated');
    const sans =
      request.subjectAltNames ??
      (kind === 'serving'
        ? { dnsNames: [nodeName], ipAddresses: instance ? [instance.PrivateIpAddress] : [] }
        : undefined);
    const user =
      as ??
      (kind === 'client'
        ? {
            username: NODE_BOOTSTRAPPER,
            groups: [
              'system:serviceaccounts',
              'system:serviceaccounts:openshift-machine-config-operator',
              'system:authenticated',
            ],
          }
        : {
            username: `system:node:${nodeName}`,
            groups: ['system:nodes', 'system:authenticated'],
          });
    this.options.kube.create(
      {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name },
        spec: {
          request: kubeletCsrRequest(nodeName, sans),
          signerName: kind === 'client' ? CLIENT_SIGNER : SERVING_SIGNER,
          usages:
            request.usages ??
            (kind === 'client'
              ? ['digital signature', 'client auth']
              : ['digital signature', 'server auth']),
        },
      },
      { fieldManager: 'kubelet', user },
    );
    return name;
  }

  /** Waits for the CSR to be approved; returns how long that took. */
  async approved(csr: string, since = Date.now()): Promise<number> {
    await eventually(
      () => {
        const o = this.options.kube.get('certificates.k8s.io/v1', 'CertificateSigningRequest', csr);
        const conditions =
          (o?.status as { conditions?: { type: string; status: string }[] } | undefined)
            ?.conditions ?? [];
        return conditions.some((c) => c.type === 'Approved' && c.status === 'True')
          ? true
          : undefined;
      },
      {
        timeoutMs: this.options.approvalTimeoutMs ?? 10_000,
        intervalMs: 2,
        what: `CSR ${csr} to be approved`,
      },
    );
    return Date.now() - since;
  }

  /** The status a kubelet posts at registration: Ready, with allocatable and heartbeats. */
  private kubeletStatus(claim: { nodeName: string; providerID: string }, vcpus: string) {
    const t = now();
    const instance = this.options.ec2
      .listInstances()
      .find((i) => claim.providerID.endsWith(`/${i.InstanceId}`));
    const condition = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: t,
      lastTransitionTime: t,
    });
    return {
      capacity: { cpu: vcpus, memory: '16Gi', pods: '110', 'ephemeral-storage': '125293548Ki' },
      allocatable: {
        cpu: `${Number(vcpus) * 1000 - 500}m`,
        memory: '15Gi',
        pods: '110',
        'ephemeral-storage': '114396791822',
      },
      conditions: [
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        condition(
          'DiskPressure',
          'False',
          'KubeletHasNoDiskPressure',
          'kubelet has no disk pressure',
        ),
        condition(
          'PIDPressure',
          'False',
          'KubeletHasSufficientPID',
          'kubelet has sufficient PID available',
        ),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        ...(instance?.PrivateIpAddress
          ? [{ type: 'InternalIP', address: instance.PrivateIpAddress }]
          : []),
        { type: 'Hostname', address: claim.nodeName },
        { type: 'InternalDNS', address: claim.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        operatingSystem: 'linux',
        osImage: 'Red Hat Enterprise Linux CoreOS',
        kubeletVersion: this.options.kube.gitVersion,
        kubeProxyVersion: '',
        containerRuntimeVersion: 'cri-o://1.34.1',
        kernelVersion: '5.14.0-570.el9_6.x86_64',
        machineID: '',
        systemUUID: '',
        bootID: '',
      },
    };
  }

  /** The kubelet's Lease, then its heartbeats (see beat). */
  private startKubelet(nodeName: string): void {
    const { kube } = this.options;
    if (!kube.get('v1', 'Namespace', 'kube-node-lease')) {
      kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-node-lease' } });
    }
    const node = kube.get('v1', 'Node', nodeName);
    kube.create({
      apiVersion: LEASE,
      kind: 'Lease',
      metadata: {
        name: nodeName,
        namespace: 'kube-node-lease',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node?.metadata?.uid ?? '' },
        ],
      },
      spec: {
        holderIdentity: nodeName,
        leaseDurationSeconds: 40,
        renewTime: new Date().toISOString().replace('Z', '000Z'),
      },
    });
    this.kubelets.add(nodeName);
    if (!this.heartbeat) {
      this.heartbeat = setInterval(() => this.beat(), LEASE_RENEW_MS);
      this.heartbeat.unref();
    }
  }

  /** The Node registers (the kubelet holds a client certificate now) and Karpenter notices. */
  registerNode(
    claim: { name: string; nodeName: string; providerID: string; nodeClass?: string },
    nodePool: string,
    booted?: BootedConfig,
  ): void {
    const { kube } = this.options;
    const vcpus = String(this.options.vcpus ?? 4);
    kube.create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: claim.nodeName,
        labels: {
          'karpenter.sh/nodepool': nodePool,
          [NODECLASS_LABEL]: claim.nodeClass ?? 'default',
          'kubernetes.io/hostname': claim.nodeName,
          'node-role.kubernetes.io/worker': '',
        },
        // The daemon's first boot ran the configuration the MCS served.
        ...(booted
          ? {
              annotations: {
                'machineconfiguration.openshift.io/currentConfig': booted.renderedConfig,
                'machineconfiguration.openshift.io/desiredConfig': booted.renderedConfig,
                'machineconfiguration.openshift.io/state': 'Done',
              },
            }
          : {}),
      },
      // The kubelet registers with the taints its kubelet.conf names (registerWithTaints).
      spec: {
        providerID: claim.providerID,
        ...(booted?.kubeletConfig?.registerWithTaints
          ? { taints: booted.kubeletConfig.registerWithTaints as unknown[] }
          : {}),
      },
      // What the kubelet posts with its registration (kubelet_node_status.go initialNode and
      // the setters): capacity, allocatable, addresses, node info and its conditions, Ready once
      // its runtime and network are up (a booted RHCOS worker's are at first sync).
      status: this.kubeletStatus(claim, vcpus),
    });
    this.startKubelet(claim.nodeName);
    // Karpenter core's registration (nodeclaim/lifecycle/registration.go): a node without
    // karpenter.sh/unregistered:NoExecute is registered anyway, with an error and this event.
    // Judged only where the simulation knows the kubelet's configuration (booted through an MCO).
    const taints = (kube.get('v1', 'Node', claim.nodeName)?.spec as { taints?: Taint[] }).taints;
    const unregistered = (t: Taint) =>
      t.key === 'karpenter.sh/unregistered' && t.effect === 'NoExecute';
    if (booted && !taints?.some(unregistered)) {
      kube.create({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${claim.name}.${suffix()}`, namespace: 'default' },
        involvedObject: { apiVersion: NODECLAIM, kind: 'NodeClaim', name: claim.name },
        reason: 'UnregisteredTaintMissing',
        message: `Missing karpenter.sh/unregistered taint which prevents registration related race conditions on Karpenter-managed nodes`,
        type: 'Warning',
        source: { component: 'karpenter' },
      });
    }
    // Karpenter's registration (nodeclaim/lifecycle): the NodeClaim becomes the Node's blocking
    // owner and the Node gets the termination finalizer. On OpenShift,
    // OwnerReferencesPermissionEnforcement lets that through only with update on
    // nodeclaims/finalizers.
    const owner = this.karpenter.get(NODECLAIM, 'NodeClaim', claim.name);
    this.karpenter.patch('v1', 'Node', claim.nodeName, undefined, {
      // ...and lifts the taint once the NodePool's labels and taints are on the Node.
      ...(taints ? { spec: { taints: taints.filter((t) => !unregistered(t)) } } : {}),
      metadata: {
        labels: { 'karpenter.sh/registered': 'true' },
        finalizers: [TERMINATION_FINALIZER],
        ownerReferences: [
          {
            apiVersion: NODECLAIM,
            kind: 'NodeClaim',
            name: claim.name,
            uid: owner?.metadata?.uid ?? '',
            blockOwnerDeletion: true,
          },
        ],
      },
    });
    const t = now();
    // Karpenter core's initialization (nodeclaim/lifecycle/initialization.go): Initialized only
    // once the Node is Ready, its startup and unregistered taints are gone and its resources are
    // registered; until then the NodeClaim is Registered but not Initialized (and not Ready).
    const node = kube.get('v1', 'Node', claim.nodeName);
    const nodeStatus = node?.status as
      | { conditions?: { type: string; status: string }[]; allocatable?: Record<string, string> }
      | undefined;
    const nodeReady =
      nodeStatus?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    const stillTainted = (node?.spec as { taints?: Taint[] } | undefined)?.taints?.some(
      unregistered,
    );
    const initialized = nodeReady && !stillTainted && !!nodeStatus?.allocatable;
    const condition = (type: string, status: boolean, reason: string, message = '') => ({
      type,
      status: status ? 'True' : 'False',
      reason,
      message,
      lastTransitionTime: t,
    });
    this.karpenter.patchStatus(NODECLAIM, 'NodeClaim', claim.name, undefined, {
      nodeName: claim.nodeName,
      conditions: [
        condition('Launched', true, 'Launched'),
        condition('Registered', true, 'Registered'),
        initialized
          ? condition('Initialized', true, 'Initialized')
          : condition('Initialized', false, 'NodeNotReady', 'Node status is NotReady'),
        initialized
          ? condition('Ready', true, 'Ready')
          : condition('Ready', false, 'UnhealthyDependents', 'Initialized=False'),
      ],
    });
    // Karpenter's NodePool counter: the resources its nodes hold, on nodepools/status.
    const nodes = this.options.kube
      .list('v1', 'Node')
      .filter((n) => n.metadata?.labels?.['karpenter.sh/nodepool'] === nodePool);
    this.karpenter.patchStatus(NODECLAIM, 'NodePool', nodePool, undefined, {
      nodes: nodes.length,
      resources: {
        cpu: String(nodes.length * Number(vcpus)),
        memory: `${nodes.length * 16}Gi`,
        pods: String(nodes.length * 110),
        nodes: String(nodes.length),
      },
    });
  }

  /**
   * The whole boot of one node; resolves when both of its CSRs are approved. With an MCO the
   * instance first fetches its configuration; when that fails it rejects with an
   * IgnitionFetchError and no CSR is ever sent (the node never joins).
   */
  async launch(nodePool: string, options: { userData?: string } = {}): Promise<LaunchedNode> {
    // Karpenter's provisioner retries a NodeClaim the API server refused in its next loop.
    const deadline = Date.now() + (this.options.approvalTimeoutMs ?? 10_000);
    let claim: CreatedNodeClaim;
    for (;;) {
      try {
        claim = this.createNodeClaim(nodePool, options);
        break;
      } catch (err) {
        if (!isLaunchGateDenial(err) || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    let booted: BootedConfig | undefined;
    if (this.options.mco) {
      booted = await this.options.mco.boot(claim.userData);
      this.say(`${claim.nodeName} fetched ${booted.renderedConfig} from pool ${booted.pool}`);
    }
    const clientStart = Date.now();
    const clientCsr = this.submitCsr(claim.nodeName, 'client');
    const clientApprovalMs = await this.approved(clientCsr, clientStart);
    this.say(`client CSR ${clientCsr} of ${claim.nodeName} approved after ${clientApprovalMs} ms`);
    this.registerNode(claim, nodePool, booted);
    const servingStart = Date.now();
    const servingCsr = this.submitCsr(claim.nodeName, 'serving');
    const servingApprovalMs = await this.approved(servingCsr, servingStart);
    this.say(
      `serving CSR ${servingCsr} of ${claim.nodeName} approved after ${servingApprovalMs} ms`,
    );
    return {
      nodeClaim: claim.name,
      ...(booted ? { booted } : {}),
      nodeName: claim.nodeName,
      instanceId: claim.instanceId,
      providerID: claim.providerID,
      clientCsr,
      servingCsr,
      clientApprovalMs,
      servingApprovalMs,
    };
  }
}
