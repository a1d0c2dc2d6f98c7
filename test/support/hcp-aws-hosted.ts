// A HyperShift hosted cluster on AWS (test/fixtures/clusters/hcp-aws-hosted): the management
// cluster holding HostedCluster, HostedControlPlane and HyperShift NodePools, and the guest
// cluster; two API servers, each with the real CRDs and RBAC. `HyperShiftStandIn` plays the part
// of HyperShift the fleet relies on in AutoNode mode.
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
const SIDECAR_SA = 'karpenter-fleet-sidecar';

export interface EmulatedHostedCluster {
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
  stop(): Promise<void>;
}

/** The fixture's objects, as the management cluster holds them (for in-memory readers). */
export function hostedFixtureObjects(): KubeObject[] {
  return readYamlDir(fixtureClusterDir(HOSTED_FIXTURE));
}

/** What the sidecar of a hosted cluster runs as: HOSTED_MODE. */
export type HostedSidecarMode = 'AutoNode' | 'Converged';

/**
 * deploy/sidecar/hosted's RBAC (plus deploy/sidecar/hosted-converged's in converged mode) with
 * this cluster's names put in, as an overlay would.
 */
export function hostedSidecarRbac(mode: HostedSidecarMode = 'AutoNode'): KubeObject[] {
  const files = [
    'sidecar/hosted/rbac.yaml',
    ...(mode === 'Converged' ? ['sidecar/hosted-converged/rbac.yaml'] : []),
  ];
  const text = JSON.stringify(
    deployDocuments()
      .filter((f) => files.includes(f.file))
      .flatMap((f) => f.docs),
  )
    .replaceAll('"clusters-example"', `"${HOSTED.hcpNamespace}"`)
    .replaceAll(
      '"karpenter-fleet-sidecar-example"',
      `"karpenter-fleet-sidecar-${HOSTED.hostedCluster.name}"`,
    )
    .replaceAll('"example"', `"${HOSTED.hostedCluster.name}"`)
    .replaceAll('"clusters"', `"${HOSTED.hostedCluster.namespace}"`);
  return JSON.parse(text) as KubeObject[];
}

/** The Karpenter CRDs HyperShift's karpenter-operator installs in the guest. */
export const GUEST_KARPENTER_CRDS = () =>
  upstreamCrdFiles(
    'karpenter',
    (f) =>
      f === 'karpenter.sh_nodepools.yaml' ||
      f === 'karpenter.sh_nodeclaims.yaml' ||
      f === 'karpenter.hypershift.openshift.io_openshiftec2nodeclasses.yaml',
  );

/**
 * Starts the pair. The management server serves HyperShift's CRDs with the fixture and the guest
 * kubeconfig Secrets HyperShift writes (`hcco-kubeconfig`, `<infraID>-kubeconfig`); the sidecar
 * gets deploy/sidecar/hosted's Roles and nothing else. The guest serves no Karpenter CRD until
 * HyperShift's karpenter-operator (the stand-in) installs them.
 */
export async function startEmulatedHostedCluster(
  mode: HostedSidecarMode = 'AutoNode',
): Promise<EmulatedHostedCluster> {
  const management = new KubeApiServerEmulator();
  const guest = new KubeApiServerEmulator();
  const ec2 = new Ec2Emulator({ region: HOSTED.region });
  await Promise.all([management.start(), guest.start(), ec2.start()]);
  management.loadCrdFiles(upstreamCrdFiles('hypershift'));
  management.seedFromDir(fixtureClusterDir(HOSTED_FIXTURE));
  const guestKubeconfig = guest.kubeconfigYaml();
  management.seed([
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hcco-kubeconfig', namespace: HOSTED.hcpNamespace },
      stringData: { kubeconfig: guestKubeconfig },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${HOSTED.infraID}-kubeconfig`, namespace: HOSTED.hcpNamespace },
      stringData: { value: guestKubeconfig },
    },
  ]);
  const rbac = hostedSidecarRbac(mode);
  management.seed(rbac);
  const token = management.addServiceAccount(HOSTED.hcpNamespace, SIDECAR_SA);
  const sidecarUser = `system:serviceaccount:${HOSTED.hcpNamespace}:${SIDECAR_SA}`;
  const sidecarAccess = recordRbacUsage(management, sidecarUser);

  const tmp = mkdtempSync(join(tmpdir(), 'fleet-hosted-'));
  const managementKubeconfig = join(tmp, 'management.kubeconfig');
  const guestKubeconfigPath = join(tmp, 'guest.kubeconfig');
  writeFileSync(managementKubeconfig, management.kubeconfigYaml(HOSTED.hcpNamespace, token));
  // What the mounted hcco-kubeconfig Secret holds.
  writeFileSync(guestKubeconfigPath, guestKubeconfig);
  return {
    management,
    guest,
    ec2,
    sidecarUser,
    sidecarAccess,
    rbac,
    sidecarEnv: {
      KUBECONFIG: managementKubeconfig,
      WORKLOAD_KUBECONFIG: guestKubeconfigPath,
      SIDECAR_NAMESPACE: HOSTED.hcpNamespace,
      SIDECAR_SERVICE_ACCOUNT: SIDECAR_SA,
      HOSTED_MODE: mode,
      AWS_ENDPOINT_URL_EC2: ec2.url,
      AWS_REGION: ec2.region,
      AWS_ACCESS_KEY_ID: ec2.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: ec2.credentials.secretAccessKey,
    },
    async stop() {
      sidecarAccess.stop();
      await Promise.all([management.stop(), guest.stop(), ec2.stop()]);
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

function deployment(namespace: string, name: string): KubeObject {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name, image: `quay.io/hypershift/${name}:stand-in` }] },
      },
    },
  };
}

/**
 * What HyperShift does about spec.autoNode, small and synchronous: the HostedCluster controller
 * copies it to the HostedControlPlane and runs (or removes) the karpenter-operator and karpenter
 * Deployments in the HCP namespace; the karpenter-operator installs the Karpenter CRDs in the
 * guest and writes status.autoNode; the HostedCluster gets the AutoNodeEnabled condition with
 * upstream's reasons. `counts` is what status.autoNode reports.
 */
export class HyperShiftStandIn {
  private readonly off: () => void;
  private crdsInstalled = false;
  counts = { nodeCount: 0, nodeClaimCount: 0, vcpus: 0 };

  constructor(private readonly cluster: Pick<EmulatedHostedCluster, 'management' | 'guest'>) {
    const { namespace, name } = HOSTED.hostedCluster;
    this.off = cluster.management.watch(HC_API, 'HostedCluster', (type, o) => {
      if (type !== 'DELETED' && o.metadata?.name === name && o.metadata.namespace === namespace)
        this.sync();
    });
  }

  sync(): void {
    const { management, guest } = this.cluster;
    const { namespace, name } = HOSTED.hostedCluster;
    const hc = management.get(HC_API, 'HostedCluster', name, namespace);
    if (!hc) return;
    const autoNode = (hc.spec as { autoNode?: unknown }).autoNode ?? null;
    const hcp = management.get(HC_API, 'HostedControlPlane', name, HOSTED.hcpNamespace)!;
    const hcpAutoNode = (hcp.spec as { autoNode?: unknown }).autoNode ?? null;
    if (JSON.stringify(hcpAutoNode) !== JSON.stringify(autoNode))
      management.patch(HC_API, 'HostedControlPlane', name, HOSTED.hcpNamespace, {
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
        guest.loadCrdFiles(GUEST_KARPENTER_CRDS());
        this.crdsInstalled = true;
      }
      for (const d of ['karpenter-operator', 'karpenter']) {
        if (!management.get('apps/v1', 'Deployment', d, HOSTED.hcpNamespace))
          management.create(deployment(HOSTED.hcpNamespace, d));
        management.setDeploymentAvailable(HOSTED.hcpNamespace, d);
      }
      management.patchStatus(HC_API, 'HostedControlPlane', name, HOSTED.hcpNamespace, {
        autoNode: { ...this.counts },
      });
      this.setCondition(condition('True', 'AsExpected', 'AutoNode is ready'));
    } else {
      for (const d of ['karpenter', 'karpenter-operator'])
        management.delete('apps/v1', 'Deployment', d, HOSTED.hcpNamespace);
      management.patchStatus(HC_API, 'HostedControlPlane', name, HOSTED.hcpNamespace, {
        autoNode: null,
      });
      this.setCondition(
        condition('False', 'AutoNodeNotConfigured', 'AutoNode provisioner is not configured'),
      );
    }
  }

  private setCondition(c: Record<string, unknown>): void {
    const { management } = this.cluster;
    const { namespace, name } = HOSTED.hostedCluster;
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
