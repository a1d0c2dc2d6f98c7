import type { Ec2Emulator, Ec2World } from '../ec2/index.js';
import { HOSTED, type HostedNames } from '../hcp-aws-hosted.js';
import type { KubeObject } from '../kube-apiserver/index.js';
import type { ClientCredentials } from './control-plane.js';
import type { RealHostedCluster } from './hosted-clusters.js';
import {
  AMI_LABELS,
  CONFIG_VERSION_ANNOTATION,
  EC2_NODECLASS_FINALIZER,
  HCCO_USER,
  KARPENTER_SUBNETS_CONFIGMAP,
  KUBELET_CONFIGMAP_LABEL,
  KUBELET_CONFIG_FINALIZER,
  configVersionHash,
  derivedEc2NodeClassSpec,
  ec2NodeClassAdmissionPolicy,
  karpenterSubnetIDs,
  kubeletConfigManifest,
  kubeletIsZero,
  mirroredStatus,
  statusMergePatch,
  versionStatus,
  type HostedControlPlaneView,
  type OpenshiftEC2NodeClassSpec,
  type OpenshiftEC2NodeClassStatus,
} from './karpenter-operator-nodeclass.js';

// What HyperShift's karpenter-operator does for AutoNode on real servers, and nothing else, each
// part following its upstream file at openshift/hypershift 3ee9615567ac (it cannot be built from
// a fresh clone: test/upstream/hypershift-karpenter-operator). The parity table, and what is not
// played and why: test/support/hypershift-stand-ins.README.md. It runs while HyperShift keeps the
// karpenter-operator Deployment in the HCP namespace, acts in the guest as HyperShift's
// hcco-kubeconfig user (system:hosted-cluster-config), and reconciles each OpenshiftEC2NodeClass
// on its own (one class's error holds no other back: `errors`):
// - karpenter/karpenter_controller.go reconcileOpenshiftEC2NodeClassDefault: the class `default`
//   (the CRDs, the karpenter Deployment and status.autoNode are RealHyperShiftStandIn's);
// - karpenterignition_controller.go (only while spec.autoNode names Karpenter on AWS): the
//   version status (releaseImage, version, VersionResolved, SupportedVersionSkew; a spec.version
//   takes upstream's resolution-failure path, Cincinnati is not played), the kubelet ConfigMap
//   karpenter-kubelet-<class> and its finalizer, a user-data Secret in the HCP namespace (label
//   managed-by-karpenter, the release's AMI label, annotation naming the HyperShift NodePool
//   <class>-karpenter) holding the Ignition pointer, and the config-version annotation;
// - nodeclass/ec2_nodeclass_controller.go: its finalizer; the EC2NodeClass of the same name
//   (reconcileEC2NodeClass through karpenter_util.go's conversions: karpenter-operator-nodeclass.ts),
//   written as CreateOrUpdate writes it; the class's status mirrored from it (reconcileStatus);
//   the karpenter-subnets ConfigMap; the ValidatingAdmissionPolicy that refuses anyone else's
//   EC2NodeClass writes; on deletion, the EC2NodeClass first, then the finalizer;
// - karpenter/machine_approver.go: approves a guest CSR when its node name is the private DNS name
//   of the instance behind a NodeClaim (client CSRs from the node-bootstrapper, for NodeClaims
//   without a node yet; serving CSRs in group system:nodes from that node), with its reason and
//   message.

/** The release's RHCOS AMI in the fixture's region (what HyperShift reads from the release). */
export const HOSTED_RELEASE_AMI = 'ami-0e3a9b1c7d5f20481';
const HCP_API = 'hypershift.openshift.io/v1beta1';
const OPENSHIFT_NODECLASS = 'karpenter.hypershift.openshift.io/v1';
const OPENSHIFT_NODECLASSES = `/apis/${OPENSHIFT_NODECLASS}/openshiftec2nodeclasses`;
const EC2_NODECLASSES = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';
const MANAGED_BY_KARPENTER = 'hypershift.openshift.io/managed-by-karpenter';
const NODEPOOL_ANNOTATION = 'hypershift.openshift.io/nodePool';
/** nodepool/token.go TokenSecretAnnotation: the token Secret, not the user data. */
const TOKEN_SECRET_ANNOTATION = 'hypershift.openshift.io/ignition-config';
const E2E_OVERRIDE_ANNOTATION = 'hypershift.openshift.io/karpenter-core-e2e-override';
const NODE_BOOTSTRAPPER =
  'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';

interface AutoNode {
  provisionerConfig?: { name?: string; karpenter?: { platform?: string } };
}

/** The hosted fixture's AWS account, as HyperShift's install lays it out for AutoNode. */
export function hostedEc2World(names: Pick<HostedNames, 'infraID'> = HOSTED): Ec2World {
  const cluster = `kubernetes.io/cluster/${names.infraID}`;
  const vpc = 'vpc-0b7e1d3c5a9f20461';
  return {
    region: HOSTED.region,
    vpcs: [{ VpcId: vpc, CidrBlock: '10.1.0.0/16' }],
    subnets: ['a', 'b'].map((zone, i) => ({
      SubnetId: `subnet-0b7e1d3c5a9f2046${i + 1}`,
      VpcId: vpc,
      AvailabilityZone: `${HOSTED.region}${zone}`,
      AvailabilityZoneId: `usw2-az${i + 1}`,
      CidrBlock: `10.1.${i * 16}.0/20`,
      AvailableIpAddressCount: 4000,
      Tags: { [cluster]: 'owned', 'kubernetes.io/role/internal-elb': '1' },
    })),
    securityGroups: [
      {
        GroupId: 'sg-0b7e1d3c5a9f20461',
        GroupName: `${names.infraID}-default-sg`,
        VpcId: vpc,
        // The control-plane-operator tags the default security group for Karpenter (AutoNode).
        Tags: { [cluster]: 'owned', 'karpenter.sh/discovery': names.infraID },
      },
    ],
    images: [
      {
        ImageId: HOSTED_RELEASE_AMI,
        Name: 'rhcos-9.6.20261020-0-x86_64',
        Architecture: 'x86_64',
        State: 'available',
        OwnerId: '531415883065',
        CreationDate: '2026-10-20T08:00:00.000Z',
      },
    ],
    instanceProfiles: [
      {
        InstanceProfileName: `${names.infraID}-karpenter-worker`,
        Arn: `arn:aws:iam::111122223333:instance-profile/${names.infraID}-karpenter-worker`,
      },
    ],
  };
}

export class RealKarpenterOperatorStandIn {
  private timer?: NodeJS.Timeout;
  private busy = false;
  readonly approved: string[] = [];
  /** The last error of each OpenshiftEC2NodeClass's reconcile (a controller's requeue), by name. */
  readonly errors = new Map<string, string>();
  /** HyperShift's hcco-kubeconfig identity in the guest. */
  private readonly hcco: ClientCredentials;
  /** The spec each object was last written with, and the generation the write produced. */
  private readonly written = new Map<string, { key: string; generation?: number }>();

  constructor(
    private readonly cluster: RealHostedCluster,
    private readonly ec2: Ec2Emulator,
  ) {
    this.hcco = cluster.guest.ca.issueClient(HCCO_USER, ['system:masters']);
  }

  start(): this {
    this.timer = setInterval(() => void this.tick(), 250);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * A request to one plane (the guest as system:hosted-cluster-config, the management cluster as
   * its admin); undefined for a 404 except on create, an error for anything else but 2xx.
   */
  private async call(
    plane: 'guest' | 'management',
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<KubeObject | undefined> {
    const res = await this.cluster[plane].request(
      method,
      path,
      body,
      contentType,
      plane === 'guest' ? this.hcco : undefined,
    );
    if (res.status === 404 && method !== 'POST') return undefined;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body}`);
    return res.json;
  }

  private guest(method: string, path: string, body?: unknown, contentType?: string) {
    return this.call('guest', method, path, body, contentType);
  }

  private management(method: string, path: string, body?: unknown, contentType?: string) {
    return this.call('management', method, path, body, contentType);
  }

  private async list(plane: 'guest' | 'management', path: string): Promise<KubeObject[]> {
    const json = await this[plane]('GET', path);
    return (json as { items?: KubeObject[] } | undefined)?.items ?? [];
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.reconcile();
    } catch {
      // CRDs not served yet, or a server restarting: the next tick tries again
    } finally {
      this.busy = false;
    }
  }

  private async reconcile(): Promise<void> {
    const ns = HOSTED.hcpNamespace;
    // karpenterutil.GetHCP: the first HostedControlPlane in the namespace.
    const [hcp] = await this.list(
      'management',
      `/apis/${HCP_API}/namespaces/${ns}/hostedcontrolplanes`,
    );
    if (!hcp) return;
    // The operator is the karpenter-operator Deployment HyperShift runs (or removes).
    if (
      !(await this.management(
        'GET',
        `/apis/apps/v1/namespaces/${ns}/deployments/karpenter-operator`,
      ))
    )
      return;
    const view = hcp as unknown as HostedControlPlaneView;
    const autoNode = (hcp.spec as { autoNode?: AutoNode }).autoNode;
    // karpenterutil.IsKarpenterEnabled: the ignition controller does nothing otherwise.
    const enabled =
      autoNode?.provisionerConfig?.name === 'Karpenter' &&
      autoNode.provisionerConfig.karpenter?.platform === 'AWS';
    // KarpenterCoreE2EOverrideAnnotation: the nodeclass controller leaves everything alone.
    const e2eOverride = hcp.metadata?.annotations?.[E2E_OVERRIDE_ANNOTATION] === 'true';
    if (!e2eOverride) await this.defaultNodeClass(view);
    for (const nodeClass of await this.list('guest', OPENSHIFT_NODECLASSES)) {
      const name = nodeClass.metadata!.name!;
      try {
        if (enabled) await this.ignition(name, hcp, view);
        if (!e2eOverride) await this.nodeClass(name, hcp, view);
        this.errors.delete(name);
      } catch (err) {
        this.errors.set(name, err instanceof Error ? err.message : String(err));
      }
    }
    await this.approveCsrs();
  }

  /**
   * karpenter_controller.go reconcileOpenshiftEC2NodeClassDefault: the class `default` with the
   * cluster's subnet and security-group selectors, its spec replaced whole (CreateOrUpdate).
   */
  private async defaultNodeClass(hcp: HostedControlPlaneView): Promise<void> {
    const spec = {
      subnetSelectorTerms: [
        {
          tags: {
            'kubernetes.io/role/internal-elb': '1',
            [`kubernetes.io/cluster/${hcp.spec.infraID}`]: '*',
          },
        },
      ],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': hcp.spec.infraID } }],
    };
    await this.createOrUpdate(OPENSHIFT_NODECLASSES, 'default', JSON.stringify(spec), (live) =>
      live
        ? { ...live, spec }
        : {
            apiVersion: OPENSHIFT_NODECLASS,
            kind: 'OpenshiftEC2NodeClass',
            metadata: { name: 'default' },
            spec,
          },
    );
  }

  /**
   * hypershift's upsert.CreateOrUpdate for a guest object: written when absent, or when what the
   * operator sets (`key`) or the object's generation (another writer's spec change) moved since
   * its last write; otherwise left alone. Returns the object as it stands.
   */
  private async createOrUpdate(
    collection: string,
    name: string,
    key: string,
    desired: (live: KubeObject | undefined) => KubeObject,
  ): Promise<KubeObject> {
    const path = `${collection}/${name}`;
    const live = await this.guest('GET', path);
    const last = this.written.get(path);
    if (live && last?.key === key && last.generation === live.metadata?.generation) return live;
    const written = live
      ? await this.guest('PUT', path, desired(live))
      : await this.guest('POST', collection, desired(undefined));
    this.written.set(path, { key, generation: written!.metadata?.generation });
    return written!;
  }

  private openshiftNodeClass(name: string): Promise<KubeObject | undefined> {
    return this.guest('GET', `${OPENSHIFT_NODECLASSES}/${name}`);
  }

  /** A finalizer added or removed, with the optimistic lock controller-runtime's patch carries. */
  private async setFinalizer(
    nodeClass: KubeObject,
    finalizer: string,
    present: boolean,
  ): Promise<KubeObject> {
    const finalizers = nodeClass.metadata?.finalizers ?? [];
    if (finalizers.includes(finalizer) === present) return nodeClass;
    return (await this.guest(
      'PATCH',
      `${OPENSHIFT_NODECLASSES}/${nodeClass.metadata!.name}`,
      {
        metadata: {
          resourceVersion: nodeClass.metadata!.resourceVersion,
          finalizers: present
            ? [...finalizers, finalizer]
            : finalizers.filter((f) => f !== finalizer),
        },
      },
      'application/merge-patch+json',
    ))!;
  }

  private async patchStatus(nodeClass: KubeObject, status: OpenshiftEC2NodeClassStatus) {
    const patch = statusMergePatch(
      nodeClass.status as Record<string, unknown> | undefined,
      status as Record<string, unknown>,
    );
    if (!patch) return;
    await this.guest(
      'PATCH',
      `${OPENSHIFT_NODECLASSES}/${nodeClass.metadata!.name}/status`,
      { status: patch },
      'application/merge-patch+json',
    );
  }

  /** karpenterignition_controller.go Reconcile for one class. */
  private async ignition(name: string, hcp: KubeObject, view: HostedControlPlaneView) {
    let nodeClass = await this.openshiftNodeClass(name);
    if (!nodeClass) return;
    const kubeletConfigMap = `/api/v1/namespaces/${HOSTED.hcpNamespace}/configmaps/karpenter-kubelet-${name}`;
    if (nodeClass.metadata?.deletionTimestamp) {
      // reconcileDeletedNodeClass
      if (!nodeClass.metadata.finalizers?.includes(KUBELET_CONFIG_FINALIZER)) return;
      await this.management('DELETE', kubeletConfigMap);
      await this.setFinalizer(nodeClass, KUBELET_CONFIG_FINALIZER, false);
      return;
    }
    const version = versionStatus(nodeClass, view);
    if (!version.resolved) {
      // Validation or resolution failed: the status says so and nothing else is written.
      await this.patchStatus(nodeClass, version.status);
      throw new Error(
        version.status.conditions!.find((c) => c.type === 'VersionResolved')!.message,
      );
    }
    const spec = (nodeClass.spec ?? {}) as OpenshiftEC2NodeClassSpec;
    const kubeletZero = kubeletIsZero(spec.kubelet);
    if (!kubeletZero)
      nodeClass = await this.setFinalizer(nodeClass, KUBELET_CONFIG_FINALIZER, true);
    // reconcileKubeletConfigMap
    if (kubeletZero) await this.management('DELETE', kubeletConfigMap);
    else
      await this.upsertConfigMap(kubeletConfigMap, (cm) => {
        cm.metadata!.labels = { ...cm.metadata!.labels, [KUBELET_CONFIGMAP_LABEL]: 'true' };
        cm.data = { config: kubeletConfigManifest(name, spec.kubelet!) };
      });
    if (kubeletZero)
      nodeClass = await this.setFinalizer(nodeClass, KUBELET_CONFIG_FINALIZER, false);
    // reconcileNodeClassToken: the user data, then the config-version annotation.
    const releaseImage = (hcp.spec as { releaseImage?: string }).releaseImage ?? '';
    await this.userData(name);
    const hash = configVersionHash(releaseImage, spec.kubelet);
    if (nodeClass.metadata?.annotations?.[CONFIG_VERSION_ANNOTATION] !== hash)
      nodeClass = (await this.guest(
        'PATCH',
        `${OPENSHIFT_NODECLASSES}/${name}`,
        {
          metadata: {
            resourceVersion: nodeClass.metadata!.resourceVersion,
            annotations: { [CONFIG_VERSION_ANNOTATION]: hash },
          },
        },
        'application/merge-patch+json',
      ))!;
    await this.patchStatus(nodeClass, versionStatus(nodeClass, view).status);
  }

  /** The user-data Secret of a NodeClass's HyperShift NodePool (token.go's, for Karpenter). */
  private async userData(name: string): Promise<void> {
    const nodePool = `${HOSTED.hcpNamespace}/${name}-karpenter`;
    const secretName = `user-data-${name}-karpenter`;
    if (await this.cluster.management.get('v1', 'Secret', secretName, HOSTED.hcpNamespace)) return;
    const ignition = JSON.stringify({
      ignition: {
        config: {
          merge: [
            {
              source: `https://ignition-server-${HOSTED.hcpNamespace}.apps.mgmt.example.com/ignition`,
              httpHeaders: [
                { name: 'Authorization', value: 'Bearer c2VjcmV0LXRva2Vu' },
                { name: 'NodePool', value: nodePool },
              ],
            },
          ],
        },
        version: '3.2.0',
      },
    });
    await this.cluster.management.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: secretName,
        namespace: HOSTED.hcpNamespace,
        labels: { [MANAGED_BY_KARPENTER]: 'true', [AMI_LABELS[0]!]: HOSTED_RELEASE_AMI },
        annotations: { [NODEPOOL_ANNOTATION]: nodePool },
      },
      type: 'Opaque',
      data: {
        disableTemplating: Buffer.from(Buffer.from('true').toString('base64')).toString('base64'),
        value: Buffer.from(ignition).toString('base64'),
      },
    });
  }

  /** getUserDataSecret: the managed-by-karpenter Secret naming <class>-karpenter, not a token. */
  private async userDataSecret(name: string): Promise<KubeObject | undefined> {
    const secrets = await this.list(
      'management',
      `/api/v1/namespaces/${HOSTED.hcpNamespace}/secrets?labelSelector=${encodeURIComponent(`${MANAGED_BY_KARPENTER}=true`)}`,
    );
    return secrets.find((secret) => {
      const annotations = secret.metadata?.annotations ?? {};
      const nodePool = annotations[NODEPOOL_ANNOTATION];
      if (!nodePool || annotations[TOKEN_SECRET_ANNOTATION] === 'true') return false;
      return nodePool.slice(nodePool.indexOf('/') + 1) === `${name}-karpenter`;
    });
  }

  /** ec2_nodeclass_controller.go Reconcile for one class. */
  private async nodeClass(name: string, hcp: KubeObject, view: HostedControlPlaneView) {
    let nodeClass = await this.openshiftNodeClass(name);
    if (!nodeClass) return;
    const path = `${EC2_NODECLASSES}/${name}`;
    if (nodeClass.metadata?.deletionTimestamp) {
      const live = await this.guest('GET', path);
      if (live) {
        // wait until the EC2NodeClass is gone (Karpenter's own finalizer first)
        if (!live.metadata?.deletionTimestamp) await this.guest('DELETE', path);
        return;
      }
      await this.subnetsConfigMap(hcp);
      await this.setFinalizer(nodeClass, EC2_NODECLASS_FINALIZER, false);
      return;
    }
    nodeClass = await this.setFinalizer(nodeClass, EC2_NODECLASS_FINALIZER, true);
    const secret = await this.userDataSecret(name);
    // Not an error: the ignition controller may not have written it yet.
    if (!secret) return;
    const ec2NodeClass = await this.writeEc2NodeClass(nodeClass, view, secret);
    await this.patchStatus(
      nodeClass,
      mirroredStatus(nodeClass, ec2NodeClass.status as Parameters<typeof mirroredStatus>[1], view),
    );
    await this.subnetsConfigMap(hcp);
    await this.admissionPolicy();
  }

  /**
   * reconcileEC2NodeClass through hypershift's upsert.CreateOrUpdate: the live object's spec
   * replaced whole and its controller reference ensured, written when that changes it (another
   * writer's spec change, a new generation, is reverted as the operator's watch would).
   */
  private async writeEc2NodeClass(
    nodeClass: KubeObject,
    view: HostedControlPlaneView,
    secret: KubeObject,
  ): Promise<KubeObject> {
    const name = nodeClass.metadata!.name!;
    const spec = derivedEc2NodeClassSpec(
      nodeClass as { spec?: OpenshiftEC2NodeClassSpec },
      view,
      secret,
    );
    const owner = {
      apiVersion: OPENSHIFT_NODECLASS,
      kind: 'OpenshiftEC2NodeClass',
      name,
      uid: nodeClass.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
    return this.createOrUpdate(EC2_NODECLASSES, name, JSON.stringify([spec, owner]), (live) =>
      live
        ? {
            ...live,
            metadata: {
              ...live.metadata,
              ownerReferences: withOwner(live.metadata?.ownerReferences, owner),
            },
            spec,
          }
        : {
            apiVersion: 'karpenter.k8s.aws/v1',
            kind: 'EC2NodeClass',
            metadata: { name, ownerReferences: [owner] },
            spec,
          },
    );
  }

  /** A ConfigMap on the management cluster, created or updated through `mutate` (CreateOrUpdate). */
  private async upsertConfigMap(path: string, mutate: (cm: KubeObject) => void): Promise<void> {
    const live = await this.management('GET', path);
    const name = path.slice(path.lastIndexOf('/') + 1);
    const cm: KubeObject = live
      ? structuredClone(live)
      : {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: HOSTED.hcpNamespace },
        };
    cm.metadata!.labels ??= {};
    mutate(cm);
    if (live && JSON.stringify(cm) === JSON.stringify(live)) return;
    if (live) await this.management('PUT', path, cm);
    else await this.management('POST', path.slice(0, path.lastIndexOf('/')), cm);
  }

  /** reconcileKarpenterSubnetsConfigMap: every class's subnets, for HyperShift's VPC endpoints. */
  private async subnetsConfigMap(hcp: KubeObject): Promise<void> {
    const path = `/api/v1/namespaces/${HOSTED.hcpNamespace}/configmaps/${KARPENTER_SUBNETS_CONFIGMAP}`;
    const ids = karpenterSubnetIDs(await this.list('guest', OPENSHIFT_NODECLASSES));
    if (!ids) {
      await this.management('DELETE', path);
      return;
    }
    await this.upsertConfigMap(path, (cm) => {
      cm.metadata!.ownerReferences = withOwner(cm.metadata!.ownerReferences, {
        apiVersion: HCP_API,
        kind: 'HostedControlPlane',
        name: hcp.metadata!.name!,
        uid: hcp.metadata!.uid!,
        controller: true,
        blockOwnerDeletion: true,
      });
      cm.metadata!.labels = {
        ...cm.metadata!.labels,
        'hypershift.openshift.io/managed-by': 'karpenter',
        'hypershift.openshift.io/infra-id': (hcp.spec as { infraID: string }).infraID,
      };
      cm.data = {
        ...(cm.data as Record<string, string> | undefined),
        subnetIDs: JSON.stringify(ids),
      };
    });
  }

  /** reconcileVAP: the policy and binding, their fields set as CreateOrUpdate sets them. */
  private async admissionPolicy(): Promise<void> {
    for (const desired of ec2NodeClassAdmissionPolicy()) {
      const resource =
        desired.kind === 'ValidatingAdmissionPolicy'
          ? 'validatingadmissionpolicies'
          : 'validatingadmissionpolicybindings';
      await this.createOrUpdate(
        `/apis/admissionregistration.k8s.io/v1/${resource}`,
        (desired.metadata as { name: string }).name,
        JSON.stringify(desired.spec),
        (live) =>
          live
            ? { ...live, spec: { ...(live.spec as object), ...(desired.spec as object) } }
            : desired,
      );
    }
  }

  /** machine approver: CSRs whose node name is a NodeClaim's instance's private DNS name. */
  private async approveCsrs(): Promise<void> {
    const claims = await this.list('guest', '/apis/karpenter.sh/v1/nodeclaims');
    const dnsName = (claim: KubeObject) => {
      const providerID = (claim.status as { providerID?: string } | undefined)?.providerID ?? '';
      const id = providerID.slice(providerID.lastIndexOf('/') + 1);
      return id ? this.ec2.getInstance(id)?.PrivateDnsName : undefined;
    };
    for (const csr of await this.list(
      'guest',
      '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    )) {
      const status = csr.status as { conditions?: unknown[] } | undefined;
      if (status?.conditions?.length) continue;
      const spec = csr.spec as {
        signerName: string;
        username: string;
        groups?: string[];
        request: string;
      };
      let nodeName: string | undefined;
      let candidates: KubeObject[] = [];
      if (spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet') {
        if (spec.username !== NODE_BOOTSTRAPPER) continue;
        nodeName = commonNameOf(spec.request)?.replace(/^system:node:/, '');
        candidates = claims.filter((c) => !(c.status as { nodeName?: string }).nodeName);
      } else if (spec.signerName === 'kubernetes.io/kubelet-serving') {
        if (!spec.groups?.includes('system:nodes')) continue;
        nodeName = spec.username.replace(/^system:node:/, '');
        // FindTargetNodeClaim: the first NodeClaim of that node.
        candidates = claims
          .filter((c) => (c.status as { nodeName?: string }).nodeName === nodeName)
          .slice(0, 1);
      }
      if (!nodeName || !candidates.some((c) => dnsName(c) === nodeName)) continue;
      const name = csr.metadata!.name!;
      await this.guest(
        'PUT',
        `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}/approval`,
        {
          ...csr,
          status: {
            conditions: [
              {
                type: 'Approved',
                status: 'True',
                reason: 'KarpenterCSRApprove',
                message: 'Auto approved by karpenter_machine_approver',
              },
            ],
          },
        },
      );
      this.approved.push(name);
    }
  }
}

/** k8sutil.EnsureOwnerRef: the reference replaced where it is (same kind and name, same API version or UID), else appended. */
function withOwner(
  refs: readonly Record<string, unknown>[] | undefined,
  owner: Record<string, string | boolean>,
): Record<string, unknown>[] {
  const list = [...(refs ?? [])];
  const at = list.findIndex(
    (r) =>
      r.kind === owner.kind &&
      r.name === owner.name &&
      (r.apiVersion === owner.apiVersion || r.uid === owner.uid),
  );
  if (at >= 0) list[at] = owner;
  else list.push(owner);
  return list;
}

/** The subject common name of a base64 PEM CSR (the one string a kubelet's CSR names itself by). */
function commonNameOf(request: string): string | undefined {
  const pem = Buffer.from(request, 'base64').toString();
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  // The CN attribute: OID 2.5.4.3 (06 03 55 04 03), then its string's tag and length.
  const at = der.indexOf(Buffer.from([0x06, 0x03, 0x55, 0x04, 0x03]));
  if (at < 0) return undefined;
  const length = der[at + 6]!;
  return der.subarray(at + 7, at + 7 + length).toString('utf8');
}
