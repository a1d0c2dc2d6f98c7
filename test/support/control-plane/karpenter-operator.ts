import type { Ec2Emulator, Ec2World } from '../ec2/index.js';
import { HOSTED, type HostedNames } from '../hcp-aws-hosted.js';
import type { KubeObject } from '../kube-apiserver/index.js';
import type { RealHostedCluster } from './hosted-clusters.js';

// What HyperShift's karpenter-operator does for AutoNode on real servers, and nothing else, each
// part following its upstream file at openshift/hypershift 3ee9615567ac (it cannot be built from
// a fresh clone: test/upstream/hypershift-karpenter-operator):
// - karpenterignition_controller.go: per OpenshiftEC2NodeClass, a user-data Secret in the HCP
//   namespace (label managed-by-karpenter, the release's AMI label, annotation naming the
//   HyperShift NodePool <nodeclass>-karpenter) holding the Ignition pointer;
// - nodeclass/ec2_nodeclass_controller.go reconcileEC2NodeClass: the EC2NodeClass of the same
//   name, owned by it: user data and AMI from that Secret, amiFamily Custom, the instance profile
//   from the HCP's annotation, the default root volume, and the subnet and security-group
//   selectors (the OpenshiftEC2NodeClass's, else the cluster's defaults);
// - karpenter/machine_approver.go: approves a guest CSR when its node name is the private DNS name
//   of the instance behind a NodeClaim (client CSRs from the node-bootstrapper, for NodeClaims
//   without a node yet; serving CSRs from that node), with its reason and message.
// Status mirroring, the subnets ConfigMap and the VAP are not played.

/** The release's RHCOS AMI in the fixture's region (what HyperShift reads from the release). */
export const HOSTED_RELEASE_AMI = 'ami-0e3a9b1c7d5f20481';
const HCP_API = 'hypershift.openshift.io/v1beta1';
const OPENSHIFT_NODECLASS = 'karpenter.hypershift.openshift.io/v1';
const MANAGED_BY_KARPENTER = 'hypershift.openshift.io/managed-by-karpenter';
const AMI_LABEL = 'hypershift.openshift.io/ami';
const NODEPOOL_ANNOTATION = 'hypershift.openshift.io/nodePool';
const INSTANCE_PROFILE_ANNOTATION =
  'hypershift.openshift.io/aws-karpenter-default-instance-profile';
const NODE_BOOTSTRAPPER =
  'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';

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
  /** What each EC2NodeClass was last written with. */
  private readonly applied = new Map<string, string>();

  constructor(
    private readonly cluster: RealHostedCluster,
    private readonly ec2: Ec2Emulator,
  ) {}

  start(): this {
    this.timer = setInterval(() => void this.tick(), 250);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async list(plane: 'guest' | 'management', path: string): Promise<KubeObject[]> {
    const { json } = await this.cluster[plane].request('GET', path);
    return (json as { items?: KubeObject[] }).items ?? [];
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const hcp = await this.cluster.management.get(
        HCP_API,
        'HostedControlPlane',
        HOSTED.hostedCluster.name,
        HOSTED.hcpNamespace,
      );
      if (!hcp || !(hcp.spec as { autoNode?: unknown }).autoNode) return;
      for (const nodeClass of await this.list(
        'guest',
        '/apis/karpenter.hypershift.openshift.io/v1/openshiftec2nodeclasses',
      )) {
        const secret = await this.userData(nodeClass);
        await this.ec2NodeClass(nodeClass, hcp, secret);
      }
      await this.approveCsrs();
    } catch {
      // CRDs not served yet, or a server restarting: the next tick tries again
    } finally {
      this.busy = false;
    }
  }

  /** karpenterignition: the user-data Secret of a NodeClass's HyperShift NodePool. */
  private async userData(nodeClass: KubeObject): Promise<KubeObject> {
    const name = nodeClass.metadata!.name!;
    const nodePool = `${HOSTED.hostedCluster.namespace}/${name}-karpenter`;
    const secretName = `user-data-${name}-karpenter`;
    const existing = await this.cluster.management.get(
      'v1',
      'Secret',
      secretName,
      HOSTED.hcpNamespace,
    );
    if (existing) return existing;
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
    return this.cluster.management.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: secretName,
        namespace: HOSTED.hcpNamespace,
        labels: { [MANAGED_BY_KARPENTER]: 'true', [AMI_LABEL]: HOSTED_RELEASE_AMI },
        annotations: { [NODEPOOL_ANNOTATION]: nodePool },
      },
      type: 'Opaque',
      data: { value: Buffer.from(ignition).toString('base64') },
    });
  }

  /** nodeclass controller: reconcileEC2NodeClass, applied as the operator's CreateOrUpdate. */
  private async ec2NodeClass(nodeClass: KubeObject, hcp: KubeObject, secret: KubeObject) {
    const name = nodeClass.metadata!.name!;
    const spec = (nodeClass.spec ?? {}) as {
      subnetSelectorTerms?: { tags?: Record<string, string>; id?: string }[];
      securityGroupSelectorTerms?: { tags?: Record<string, string>; id?: string; name?: string }[];
      tags?: Record<string, string>;
      blockDeviceMappings?: unknown[];
    };
    const infraID = (hcp.spec as { infraID: string }).infraID;
    const instanceProfile = hcp.metadata?.annotations?.[INSTANCE_PROFILE_ANNOTATION];
    const desired = {
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: {
        name,
        ownerReferences: [
          {
            apiVersion: OPENSHIFT_NODECLASS,
            kind: 'OpenshiftEC2NodeClass',
            name,
            uid: nodeClass.metadata!.uid!,
          },
        ],
      },
      spec: {
        userData: Buffer.from((secret.data as { value: string }).value, 'base64').toString(),
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: secret.metadata!.labels![AMI_LABEL] }],
        ...(spec.tags ? { tags: spec.tags } : {}),
        ...(instanceProfile ? { instanceProfile } : {}),
        blockDeviceMappings: spec.blockDeviceMappings ?? [
          {
            deviceName: '/dev/xvda',
            ebs: { volumeSize: '120Gi', volumeType: 'gp3', encrypted: true },
          },
        ],
        subnetSelectorTerms: spec.subnetSelectorTerms ?? [
          {
            tags: {
              'kubernetes.io/role/internal-elb': '1',
              [`kubernetes.io/cluster/${infraID}`]: '*',
            },
          },
        ],
        securityGroupSelectorTerms: spec.securityGroupSelectorTerms ?? [
          { tags: { 'karpenter.sh/discovery': infraID } },
        ],
      },
    };
    // CreateOrUpdate writes only when the object would change: so does the stand-in.
    const key = JSON.stringify(desired);
    if (this.applied.get(name) === key) return;
    const { status, body } = await this.cluster.guest.request(
      'PATCH',
      `/apis/karpenter.k8s.aws/v1/ec2nodeclasses/${name}?fieldManager=karpenter-operator&force=true`,
      desired,
      'application/apply-patch+yaml',
    );
    if (status >= 300) throw new Error(`EC2NodeClass ${name}: ${status} ${body}`);
    this.applied.set(name, key);
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
      const spec = csr.spec as { signerName: string; username: string; request: string };
      let nodeName: string | undefined;
      let candidates: KubeObject[] = [];
      if (spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet') {
        if (spec.username !== NODE_BOOTSTRAPPER) continue;
        nodeName = commonNameOf(spec.request)?.replace(/^system:node:/, '');
        candidates = claims.filter((c) => !(c.status as { nodeName?: string }).nodeName);
      } else if (spec.signerName === 'kubernetes.io/kubelet-serving') {
        nodeName = spec.username.replace(/^system:node:/, '');
        candidates = claims.filter(
          (c) => (c.status as { nodeName?: string }).nodeName === nodeName,
        );
      }
      if (!nodeName || !candidates.some((c) => dnsName(c) === nodeName)) continue;
      const name = csr.metadata!.name!;
      await this.cluster.guest.request(
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
