// A HyperShift hosted cluster on AWS (test/fixtures/clusters/hcp-aws-hosted): the management
// cluster holding HostedCluster, HostedControlPlane and HyperShift NodePools, and the guest
// cluster; two API servers, each with the real CRDs and RBAC. `HyperShiftStandIn` plays the part
// of HyperShift the fleet relies on in AutoNode mode.
import {
  GUEST_NAMESPACE,
  GUEST_SERVICE_ACCOUNT,
  guestSidecarRbac,
} from '../../apps/sidecar/src/hosted/guest-identity.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { upstreamCrdFiles } from './capi-aws-workload.js';
import { deployDocuments } from './deploy-manifests.js';
import { Ec2Emulator } from './ec2/index.js';
import { fixtureClusterDir } from './fixtures.js';
import { KubeApiServerEmulator, readYamlDir, type KubeObject } from './kube-apiserver/index.js';
import { recordRbacUsage, type RbacUsage } from './rbac-usage.js';

export const HOSTED_FIXTURE = 'hcp-aws-hosted';
export const HOSTED = {
  hostedCluster: { namespace: 'clusters', name: 'alpha' },
  hcpNamespace: 'clusters-alpha',
  infraID: 'alpha-k7m2x',
  region: 'us-west-2',
} as const;
const HC_API = 'hypershift.openshift.io/v1beta1';
export const HOSTED_SIDECAR_SA = 'karpenter-fleet-sidecar';
const SIDECAR_SA = HOSTED_SIDECAR_SA;

export interface EmulatedHostedCluster extends HostedNames {
  /** The HOSTED_MODE its sidecar runs in. */
  mode: HostedSidecarMode;
  management: KubeApiServerEmulator;
  guest: KubeApiServerEmulator;
  /** The cluster's AWS account and region (the CSR approver's DescribeInstances). */
  ec2: Ec2Emulator;
  /** The service account the sidecar runs as on the management cluster. */
  sidecarUser: string;
  /** Every authorization decision for the sidecar on the management cluster, from the start. */
  sidecarAccess: RbacUsage;
  /** deploy/sidecar/hosted's RBAC for this cluster (the overlay an SRE would write). */
  rbac: KubeObject[];
  /** Environment a sidecar process needs: its own (management) kubeconfig, the guest's, its namespace. */
  sidecarEnv: Record<string, string>;
  /** Stops the guest only (the management cluster hosts others). */
  stopGuest(): Promise<void>;
  /** Stops the guest, the management cluster and EC2 (for a cluster started alone). */
  stop(): Promise<void>;
}

/** The fixture's objects, as the management cluster holds them (for in-memory readers). */
export function hostedFixtureObjects(): KubeObject[] {
  return readYamlDir(fixtureClusterDir(HOSTED_FIXTURE));
}

/** What the sidecar of a hosted cluster runs as: HOSTED_MODE. */
export type HostedSidecarMode = 'AutoNode' | 'Converged';

/** The names of one hosted control plane on a management cluster. */
export interface HostedNames {
  hostedCluster: { namespace: string; name: string };
  hcpNamespace: string;
  infraID: string;
}

/** The names HyperShift gives hosted cluster `name` (HostedCluster in `clusters`). */
export function hostedNames(name: string, infraID = `${name}-k7m2x`): HostedNames {
  return {
    hostedCluster: { namespace: 'clusters', name },
    hcpNamespace: `clusters-${name}`,
    infraID,
  };
}

/**
 * The fixture's objects renamed for another hosted cluster on the same management cluster: its
 * HostedCluster, HostedControlPlane (in its own HCP namespace), NodePool and user-data Secret.
 */
export function hostedFixtureObjectsFor(names: HostedNames): KubeObject[] {
  if (names.hostedCluster.namespace !== HOSTED.hostedCluster.namespace)
    throw new Error(`hosted clusters live in ${HOSTED.hostedCluster.namespace} here`);
  const text = JSON.stringify(hostedFixtureObjects())
    // The infraID first (it contains the name), through a placeholder so a new infraID that
    // contains "alpha" is not renamed again.
    .replaceAll(HOSTED.infraID, '\u0000infra\u0000')
    .replace(/\balpha\b/g, names.hostedCluster.name)
    .replaceAll('\u0000infra\u0000', names.infraID);
  return JSON.parse(text) as KubeObject[];
}

/**
 * deploy/sidecar/hosted's admission policy: one per management cluster, whichever hosted clusters
 * it holds (the sidecar may change only spec.autoNode and its annotation on a HostedCluster).
 */
export const hostedSidecarAdmissionPolicy = (): KubeObject[] =>
  deployDocuments()
    .filter((f) => f.file === 'sidecar/hosted/admission-policy.yaml')
    .flatMap((f) => f.docs as KubeObject[]);

/**
 * deploy/sidecar/hosted's RBAC, whatever the mode (converged mode is refused and writes nothing), with
 * this cluster's names put in, as an overlay would.
 */
export function hostedSidecarRbac(names: HostedNames = HOSTED): KubeObject[] {
  // The guest bootstrap's service account, Role and (empty) kubeconfig Secret too; not its Job,
  // which the tests run as a function (guest-identity.ts).
  const files = ['sidecar/hosted/rbac.yaml', 'sidecar/hosted/guest-bootstrap.yaml'];
  const text = JSON.stringify(
    deployDocuments()
      .filter((f) => files.includes(f.file))
      .flatMap((f) => f.docs)
      .filter((d) => d.kind !== 'Job'),
  )
    .replaceAll('"clusters-example"', `"${names.hcpNamespace}"`)
    .replaceAll(
      '"karpenter-fleet-sidecar-example"',
      `"karpenter-fleet-sidecar-${names.hostedCluster.name}"`,
    )
    .replaceAll('"example"', `"${names.hostedCluster.name}"`)
    .replaceAll('"clusters"', `"${names.hostedCluster.namespace}"`);
  return JSON.parse(text) as KubeObject[];
}

/**
 * The Karpenter CRDs HyperShift's karpenter-operator installs in the guest (reconcileCRDs in
 * karpenter-operator/controllers/karpenter/karpenter_controller.go and nodeclass/
 * ec2_nodeclass_controller.go at 3ee9615567ac): the fork's NodePool and NodeClaim, the
 * EC2NodeClass as hack/adjust-cel.sh relaxes it, and the OpenshiftEC2NodeClass. Not the
 * NodeOverlay CRD, which sits in its assets but neither installs.
 */
export const GUEST_KARPENTER_CRDS = (openshiftEc2NodeClassVersion: 'v1' | 'v1beta1' = 'v1') => [
  ...upstreamCrdFiles('hypershift-guest'),
  // v1beta1: a HyperShift build before the promotion to v1 (9ce89af8c1, 2026-04-20).
  ...upstreamCrdFiles(
    openshiftEc2NodeClassVersion === 'v1' ? 'karpenter' : 'hypershift-guest-v1beta1',
    (f) => f === 'karpenter.hypershift.openshift.io_openshiftec2nodeclasses.yaml',
  ),
];

/** One management cluster (HyperShift's CRDs, no hosted cluster yet) and its AWS account. */
export interface EmulatedManagementCluster {
  management: KubeApiServerEmulator;
  /** The AWS account and region of the hosted clusters (the CSR approver's DescribeInstances). */
  ec2: Ec2Emulator;
  /** The hosted control planes added so far, in order. */
  hostedControlPlanes: EmulatedHostedCluster[];
  /**
   * A hosted cluster on this management cluster: the fixture renamed (HostedCluster `name` in
   * `clusters`, HCP namespace `clusters-<name>`), its own guest API server, the guest kubeconfig
   * Secrets HyperShift writes, deploy/'s sidecar Roles in its namespace and a service account.
   */
  addHostedControlPlane(options: {
    name: string;
    mode?: HostedSidecarMode;
    infraID?: string;
  }): Promise<EmulatedHostedCluster>;
  /** Stops every guest, then the management cluster and EC2. */
  stop(): Promise<void>;
}

/** Starts an empty management cluster: HyperShift's CRDs, no HostedCluster. */
export async function startEmulatedManagementCluster(): Promise<EmulatedManagementCluster> {
  const management = new KubeApiServerEmulator();
  const ec2 = new Ec2Emulator({ region: HOSTED.region });
  await Promise.all([management.start(), ec2.start()]);
  management.loadCrdFiles(upstreamCrdFiles('hypershift'));
  management.seed(hostedSidecarAdmissionPolicy());
  const hostedControlPlanes: EmulatedHostedCluster[] = [];
  return {
    management,
    ec2,
    hostedControlPlanes,
    async addHostedControlPlane({ name, mode = 'AutoNode', infraID }) {
      const names = hostedNames(name, infraID);
      if (hostedControlPlanes.some((h) => h.hcpNamespace === names.hcpNamespace))
        throw new Error(`hosted cluster ${name} is already on this management cluster`);
      const hcp = await addHostedControlPlane(management, ec2, names, mode);
      hostedControlPlanes.push(hcp);
      return hcp;
    },
    async stop() {
      await Promise.all(hostedControlPlanes.map((h) => h.stopGuest()));
      await Promise.all([management.stop(), ec2.stop()]);
    },
  };
}

async function addHostedControlPlane(
  management: KubeApiServerEmulator,
  ec2: Ec2Emulator,
  names: HostedNames,
  mode: HostedSidecarMode,
): Promise<EmulatedHostedCluster> {
  const guest = new KubeApiServerEmulator();
  await guest.start();
  management.seed(hostedFixtureObjectsFor(names));
  const guestKubeconfig = guest.kubeconfigYaml();
  management.seed([
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hcco-kubeconfig', namespace: names.hcpNamespace },
      stringData: { kubeconfig: guestKubeconfig },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${names.infraID}-kubeconfig`, namespace: names.hcpNamespace },
      stringData: { value: guestKubeconfig },
    },
  ]);
  const rbac = hostedSidecarRbac(names);
  management.seed(rbac);
  const token = management.addServiceAccount(names.hcpNamespace, SIDECAR_SA);
  const sidecarUser = `system:serviceaccount:${names.hcpNamespace}:${SIDECAR_SA}`;
  const sidecarAccess = recordRbacUsage(management, sidecarUser);

  const tmp = mkdtempSync(join(tmpdir(), 'fleet-hosted-'));
  const managementKubeconfig = join(tmp, 'management.kubeconfig');
  const guestKubeconfigPath = join(tmp, 'guest.kubeconfig');
  writeFileSync(managementKubeconfig, management.kubeconfigYaml(names.hcpNamespace, token));
  // The sidecar's own guest identity, as its guest bootstrap leaves it (the bootstrap itself runs
  // on real servers: test/real-karpenter/hosted-autonode.real-spec.ts); the emulator's service
  // account token stands in for the token Secret.
  guest.seed(guestSidecarRbac().filter((d) => d.kind !== 'Secret') as KubeObject[]);
  writeFileSync(
    guestKubeconfigPath,
    guest.kubeconfigYaml(
      GUEST_NAMESPACE,
      guest.addServiceAccount(GUEST_NAMESPACE, GUEST_SERVICE_ACCOUNT),
    ),
  );
  const stopGuest = async () => {
    sidecarAccess.stop();
    await guest.stop();
    rmSync(tmp, { recursive: true, force: true });
  };
  return {
    ...names,
    mode,
    management,
    guest,
    ec2,
    sidecarUser,
    sidecarAccess,
    rbac,
    sidecarEnv: {
      KUBECONFIG: managementKubeconfig,
      WORKLOAD_KUBECONFIG: guestKubeconfigPath,
      SIDECAR_NAMESPACE: names.hcpNamespace,
      SIDECAR_SERVICE_ACCOUNT: SIDECAR_SA,
      HOSTED_MODE: mode,
      AWS_ENDPOINT_URL_EC2: ec2.url,
      AWS_REGION: ec2.region,
      AWS_ACCESS_KEY_ID: ec2.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: ec2.credentials.secretAccessKey,
    },
    stopGuest,
    async stop() {
      await stopGuest();
      await Promise.all([management.stop(), ec2.stop()]);
    },
  };
}

/**
 * Starts the pair: a management cluster with the fixture's hosted cluster (alpha) and its guest.
 * The management server serves HyperShift's CRDs with the fixture and the guest kubeconfig
 * Secrets HyperShift writes (`hcco-kubeconfig`, `<infraID>-kubeconfig`); the sidecar gets
 * deploy/sidecar/hosted's Roles and nothing else. The guest serves no Karpenter CRD until
 * HyperShift's karpenter-operator (the stand-in) installs them.
 */
export async function startEmulatedHostedCluster(
  mode: HostedSidecarMode = 'AutoNode',
): Promise<EmulatedHostedCluster> {
  const mgmt = await startEmulatedManagementCluster();
  return mgmt.addHostedControlPlane({
    name: HOSTED.hostedCluster.name,
    infraID: HOSTED.infraID,
    mode,
  });
}

/** A Deployment of one stand-in container, as HyperShift runs its karpenter-operator and karpenter. */
export function hyperShiftDeployment(namespace: string, name: string, hcp: KubeObject): KubeObject {
  const labels = { app: name };
  const spec = hcp.spec as { infraID?: string; platform?: { aws?: { region?: string } } };
  const container =
    name === 'karpenter'
      ? {
          name,
          image: 'aws-karpenter-provider-aws',
          // control-plane-operator/controllers/hostedcontrolplane/v2/assets/karpenter/
          // deployment.yaml and v2/karpenter/deployment.go adaptDeployment, at 3ee9615567ac: the
          // guest's service-network admin kubeconfig, no webhook, no leader election.
          env: [
            { name: 'KUBECONFIG', value: '/mnt/kubeconfig/target-kubeconfig' },
            {
              name: 'SYSTEM_NAMESPACE',
              valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
            },
            { name: 'DISABLE_WEBHOOK', value: 'true' },
            { name: 'DISABLE_LEADER_ELECTION', value: 'true' },
            { name: 'FEATURE_GATES', value: 'Drift=true' },
            { name: 'AWS_SHARED_CREDENTIALS_FILE', value: '/etc/provider/credentials' },
            { name: 'AWS_SDK_LOAD_CONFIG', value: 'true' },
            { name: 'HEALTH_PROBE_PORT', value: '8081' },
            { name: 'CLUSTER_ENDPOINT', value: 'https://fake.com' },
            { name: 'AWS_REGION', value: spec.platform?.aws?.region ?? '' },
            { name: 'CLUSTER_NAME', value: spec.infraID ?? '' },
          ],
        }
      : { name, image: `quay.io/hypershift/${name}:stand-in` };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [container] } },
    },
  };
}

/**
 * What HyperShift does about spec.autoNode, small and synchronous: the HostedCluster controller
 * copies it to the HostedControlPlane and runs (or removes) the karpenter-operator and karpenter
 * Deployments in the HCP namespace; the karpenter-operator installs the Karpenter CRDs in the
 * guest and writes status.autoNode; the HostedCluster gets the AutoNodeEnabled condition with
 * upstream's reasons. `counts` is what status.autoNode reports (set by the test: nothing here runs
 * Karpenter to count). Parity with upstream: test/support/hypershift-stand-ins.README.md.
 */
export class HyperShiftStandIn {
  private readonly off: () => void;
  private crdsInstalled = false;
  counts = { nodeCount: 0, nodeClaimCount: 0, vcpus: 0 };

  constructor(
    private readonly cluster: Pick<
      EmulatedHostedCluster,
      'management' | 'guest' | 'hostedCluster' | 'hcpNamespace'
    >,
    /** The OpenshiftEC2NodeClass version this HyperShift build installs in the guest. */
    private readonly openshiftEc2NodeClassVersion: 'v1' | 'v1beta1' = 'v1',
  ) {
    const { namespace, name } = this.cluster.hostedCluster;
    this.off = cluster.management.watch(HC_API, 'HostedCluster', (type, o) => {
      if (type !== 'DELETED' && o.metadata?.name === name && o.metadata.namespace === namespace)
        this.sync();
    });
  }

  sync(): void {
    const { management, guest, hcpNamespace } = this.cluster;
    const { namespace, name } = this.cluster.hostedCluster;
    const hc = management.get(HC_API, 'HostedCluster', name, namespace);
    if (!hc) return;
    const autoNode = (hc.spec as { autoNode?: unknown }).autoNode ?? null;
    const hcp = management.get(HC_API, 'HostedControlPlane', name, hcpNamespace)!;
    const hcpAutoNode = (hcp.spec as { autoNode?: unknown }).autoNode ?? null;
    if (JSON.stringify(hcpAutoNode) !== JSON.stringify(autoNode))
      management.patch(HC_API, 'HostedControlPlane', name, hcpNamespace, {
        spec: { autoNode },
      });
    const now = new Date().toISOString();
    const condition = (status: string, reason: string, message: string) => ({
      type: 'AutoNodeEnabled',
      status,
      reason,
      message,
      lastTransitionTime: now,
      observedGeneration: hc.metadata?.generation ?? 1,
    });
    if (autoNode) {
      if (!this.crdsInstalled) {
        guest.loadCrdFiles(GUEST_KARPENTER_CRDS(this.openshiftEc2NodeClassVersion));
        this.crdsInstalled = true;
      }
      for (const d of ['karpenter-operator', 'karpenter']) {
        if (!management.get('apps/v1', 'Deployment', d, hcpNamespace))
          management.create(hyperShiftDeployment(hcpNamespace, d, hcp));
        management.setDeploymentAvailable(hcpNamespace, d);
      }
      management.patchStatus(HC_API, 'HostedControlPlane', name, hcpNamespace, {
        autoNode: { ...this.counts },
      });
      this.setCondition(condition('True', 'AsExpected', 'AutoNode is ready'));
    } else {
      for (const d of ['karpenter', 'karpenter-operator'])
        management.delete('apps/v1', 'Deployment', d, hcpNamespace);
      management.patchStatus(HC_API, 'HostedControlPlane', name, hcpNamespace, {
        autoNode: null,
      });
      this.setCondition(
        condition('False', 'AutoNodeNotConfigured', 'AutoNode provisioner is not configured'),
      );
    }
  }

  private setCondition(c: Record<string, unknown>): void {
    const { management } = this.cluster;
    const { namespace, name } = this.cluster.hostedCluster;
    const hc = management.get(HC_API, 'HostedCluster', name, namespace)!;
    const existing =
      (hc.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? [];
    const current = existing.find((x) => x.type === c.type);
    if (current && current.status === c.status && current.reason === c.reason) return;
    const conditions = [...existing.filter((x) => x.type !== c.type), c];
    management.patchStatus(HC_API, 'HostedCluster', name, namespace, { conditions });
  }

  stop(): void {
    this.off();
  }
}
