import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { HOSTED_GUEST_KUBECONFIG_SECRET } from '@fleet/discovery';
import { pino } from 'pino';
import {
  GUEST_NAMESPACE,
  GUEST_SERVICE_ACCOUNT,
  bootstrapGuestIdentity,
} from '../../../apps/sidecar/src/hosted/guest-identity.js';
import { ClusterClient } from '../../../apps/sidecar/src/kube/cluster-client.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { upstreamCrdFiles } from '../capi-aws-workload.js';
import { Ec2Emulator } from '../ec2/index.js';
import {
  GUEST_KARPENTER_CRDS,
  HOSTED,
  HOSTED_SIDECAR_SA,
  hostedFixtureObjectsFor,
  hostedSidecarAdmissionPolicy,
  hostedSidecarRbac,
  hyperShiftDeployment,
  type HostedSidecarMode,
} from '../hcp-aws-hosted.js';
import type { KubeObject } from '../kube-apiserver/index.js';
import { startControlPlanePair, type RealControlPlane } from './control-plane.js';
import { hostedEc2World } from './karpenter-operator.js';

const HC_API = 'hypershift.openshift.io/v1beta1';
/** deploy/sidecar/hosted/guest-bootstrap.yaml's service account. */
const GUEST_BOOTSTRAP_SA = 'karpenter-fleet-guest-bootstrap';

/** A HyperShift management cluster and one hosted cluster's guest, each on a real control plane. */
export interface RealHostedCluster {
  management: RealControlPlane;
  guest: RealControlPlane;
  ec2: Ec2Emulator;
  mode: HostedSidecarMode;
  /** the sidecar's service account on the management cluster */
  sidecarUser: string;
  /** the sidecar's own service account in the guest (its guest bootstrap creates it) */
  guestSidecarUser: string;
  /** the guest bootstrap Job's service account on the management cluster */
  bootstrapUser: string;
  /** what a sidecar process needs: its management kubeconfig (TokenRequest), the guest's, its namespace */
  sidecarEnv: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * test/fixtures/clusters/hcp-aws-hosted on two real control planes, as
 * test/support/hcp-aws-hosted.ts lays it on emulators: HyperShift's CRDs and the fixture on the
 * management server with the guest kubeconfig Secrets HyperShift writes, the sidecar's service
 * account holding exactly deploy/sidecar/hosted's Roles; the guest serves no Karpenter CRD until HyperShift's karpenter-operator installs them.
 */
export async function startRealHostedCluster(
  mode: HostedSidecarMode = 'AutoNode',
): Promise<RealHostedCluster> {
  const tmp = mkdtempSync(join(tmpdir(), 'fleet-real-hosted-'));
  const ec2 = new Ec2Emulator(hostedEc2World());
  let management: RealControlPlane | undefined;
  let guest: RealControlPlane | undefined;
  const stop = async () => {
    await Promise.all([management?.stop(), guest?.stop(), ec2.stop()]);
    rmSync(tmp, { recursive: true, force: true });
  };
  try {
    [management, guest] = await startControlPlanePair(
      { name: 'management', audit: true },
      { name: 'guest', audit: true },
    );
    await ec2.start();
    await management.installCrds(upstreamCrdFiles('hypershift'));
    await management.seed(hostedSidecarAdmissionPolicy());
    // What the mounted hcco-kubeconfig Secret holds: the guest's admin.
    const guestKubeconfig = guest.kubeconfigYaml();
    const rbac = hostedSidecarRbac(HOSTED);
    await management.seed([
      ...hostedFixtureObjectsFor(HOSTED),
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
      ...(rbac.some((d) => d.kind === 'ServiceAccount')
        ? []
        : [
            {
              apiVersion: 'v1',
              kind: 'ServiceAccount',
              metadata: { name: HOSTED_SIDECAR_SA, namespace: HOSTED.hcpNamespace },
            },
          ]),
      ...rbac,
    ]);
    const token = await management.serviceAccountToken(HOSTED.hcpNamespace, HOSTED_SIDECAR_SA);
    const managementKubeconfig = join(tmp, 'management.kubeconfig');
    const guestKubeconfigPath = join(tmp, 'guest.kubeconfig');
    writeFileSync(managementKubeconfig, management.kubeconfigYaml({ token }, HOSTED_SIDECAR_SA));
    // deploy/sidecar/hosted/guest-bootstrap.yaml's Job, as its service account: the sidecar gets
    // the kubeconfig it writes, never HyperShift's admin one.
    const bootstrapToken = await management.serviceAccountToken(
      HOSTED.hcpNamespace,
      GUEST_BOOTSTRAP_SA,
    );
    const asClient = (yaml: string) => {
      const config = new KubeConfig();
      config.loadFromString(yaml);
      return new ClusterClient(config);
    };
    await bootstrapGuestIdentity({
      guestAdmin: asClient(guestKubeconfig),
      management: asClient(
        management.kubeconfigYaml({ token: bootstrapToken }, GUEST_BOOTSTRAP_SA),
      ),
      hcpNamespace: HOSTED.hcpNamespace,
      log: pino({ level: 'silent' }),
    });
    const written = await management.get(
      'v1',
      'Secret',
      HOSTED_GUEST_KUBECONFIG_SECRET,
      HOSTED.hcpNamespace,
    );
    writeFileSync(
      guestKubeconfigPath,
      Buffer.from((written?.data as { kubeconfig: string }).kubeconfig, 'base64'),
    );
    return {
      management,
      guest,
      ec2,
      mode,
      sidecarUser: `system:serviceaccount:${HOSTED.hcpNamespace}:${HOSTED_SIDECAR_SA}`,
      guestSidecarUser: `system:serviceaccount:${GUEST_NAMESPACE}:${GUEST_SERVICE_ACCOUNT}`,
      bootstrapUser: `system:serviceaccount:${HOSTED.hcpNamespace}:${GUEST_BOOTSTRAP_SA}`,
      sidecarEnv: {
        KUBECONFIG: managementKubeconfig,
        WORKLOAD_KUBECONFIG: guestKubeconfigPath,
        SIDECAR_NAMESPACE: HOSTED.hcpNamespace,
        SIDECAR_SERVICE_ACCOUNT: HOSTED_SIDECAR_SA,
        HOSTED_MODE: mode,
        AWS_ENDPOINT_URL_EC2: ec2.url,
        AWS_REGION: ec2.region,
        AWS_ACCESS_KEY_ID: ec2.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: ec2.credentials.secretAccessKey,
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * What HyperShift does about spec.autoNode (the same as test/support/hcp-aws-hosted.ts's
 * HyperShiftStandIn, against real servers, polling): the HostedCluster controller copies it to
 * the HostedControlPlane and runs (or removes) the karpenter-operator and karpenter Deployments in
 * the HCP namespace (the real Deployment controller and the simulated kubelets run them); the
 * karpenter-operator installs the Karpenter CRDs in the guest and writes status.autoNode (counted
 * from the guest as upstream counts); the HostedCluster gets AutoNodeEnabled with upstream's
 * reasons. Parity with upstream: test/support/hypershift-stand-ins.README.md.
 */
export class RealHyperShiftStandIn {
  private timer?: NodeJS.Timeout;
  private busy = false;
  private crdsInstalled = false;
  /** What status.autoNode last reported. */
  counts = { nodeCount: 0, nodeClaimCount: 0, vcpus: 0 };

  constructor(private readonly cluster: RealHostedCluster) {}

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
      await this.sync();
    } catch {
      // the next tick tries again, as a controller requeues
    } finally {
      this.busy = false;
    }
  }

  private async sync(): Promise<void> {
    const { management, guest } = this.cluster;
    const { namespace, name } = HOSTED.hostedCluster;
    const ns = HOSTED.hcpNamespace;
    const hc = await management.get(HC_API, 'HostedCluster', name, namespace);
    if (!hc) return;
    const autoNode = (hc.spec as { autoNode?: unknown }).autoNode ?? null;
    const hcp = (await management.get(HC_API, 'HostedControlPlane', name, ns))!;
    if (
      JSON.stringify((hcp.spec as { autoNode?: unknown }).autoNode ?? null) !==
      JSON.stringify(autoNode)
    ) {
      await management.patch(HC_API, 'HostedControlPlane', name, ns, { spec: { autoNode } });
    }
    if (autoNode) {
      if (!this.crdsInstalled) {
        await guest.installCrds(GUEST_KARPENTER_CRDS());
        this.crdsInstalled = true;
      }
      for (const d of ['karpenter-operator', 'karpenter']) {
        if (!(await management.get('apps/v1', 'Deployment', d, ns)))
          await management.create(hyperShiftDeployment(ns, d, hcp));
      }
      await management.patch(
        HC_API,
        'HostedControlPlane',
        name,
        ns,
        { status: { autoNode: await this.autoNodeStatus() } },
        'merge',
        'status',
      );
      await this.setCondition(hc, 'True', 'AsExpected', 'AutoNode is ready');
    } else {
      for (const d of ['karpenter', 'karpenter-operator']) {
        await management.request(
          'DELETE',
          await management.resourcePath('apps/v1', 'Deployment', d, ns),
        );
      }
      await management.patch(
        HC_API,
        'HostedControlPlane',
        name,
        ns,
        { status: { autoNode: null } },
        'merge',
        'status',
      );
      await this.setCondition(
        hc,
        'False',
        'AutoNodeNotConfigured',
        'AutoNode provisioner is not configured',
      );
    }
  }

  /**
   * karpenter_controller.go reconcileAutoNodeStatus (the karpenter-operator's): the guest's nodes
   * carrying karpenter.sh/nodepool, every NodeClaim (deleting ones too), and the vCPUs of the
   * NodeClaims whose node is still there (capacity cpu rounded up, Quantity.Value()).
   */
  private async autoNodeStatus(): Promise<typeof this.counts> {
    const { guest } = this.cluster;
    const items = async (path: string) =>
      ((await guest.request('GET', path)).json as { items?: KubeObject[] }).items ?? [];
    const nodes = await items('/api/v1/nodes');
    const claims = await items('/apis/karpenter.sh/v1/nodeclaims');
    const live = new Set(nodes.map((n) => n.metadata?.name));
    const vcpus = claims
      .map((c) => c.status as { nodeName?: string; capacity?: { cpu?: string } } | undefined)
      .filter((s) => s?.nodeName && live.has(s.nodeName) && s.capacity?.cpu)
      .reduce((sum, s) => sum + quantityValue(s!.capacity!.cpu!), 0);
    this.counts = {
      nodeCount: nodes.filter((n) => n.metadata?.labels?.['karpenter.sh/nodepool'] !== undefined)
        .length,
      nodeClaimCount: claims.length,
      vcpus,
    };
    return this.counts;
  }

  private async setCondition(
    hc: KubeObject,
    status: string,
    reason: string,
    message: string,
  ): Promise<void> {
    const existing =
      (hc.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? [];
    const current = existing.find((x) => x.type === 'AutoNodeEnabled');
    if (current && current.status === status && current.reason === reason) return;
    const condition = {
      type: 'AutoNodeEnabled',
      status,
      reason,
      message,
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      observedGeneration: hc.metadata?.generation ?? 1,
    };
    await this.cluster.management.patch(
      HC_API,
      'HostedCluster',
      HOSTED.hostedCluster.name,
      HOSTED.hostedCluster.namespace,
      {
        status: {
          conditions: [...existing.filter((x) => x.type !== 'AutoNodeEnabled'), condition],
        },
      },
      'merge',
      'status',
    );
  }
}

/** resource.Quantity.Value() of a CPU quantity: whole units, rounded up ("1500m" is 2). */
function quantityValue(quantity: string): number {
  const milli = /^(\d+)m$/.exec(quantity);
  return milli ? Math.ceil(Number(milli[1]) / 1000) : Math.ceil(Number(quantity));
}
