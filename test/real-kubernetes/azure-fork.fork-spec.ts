import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { azureOperandEnv } from '@fleet/cloud-provider';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { GENERAL_NODEPOOL, startAzureSidecarRuntime, type AzureHarness } from '../azure/harness.js';
import {
  startRealOpenShiftAzureCluster,
  type RealOpenShiftAzureCluster,
} from '../support/control-plane/openshift-cluster.js';
import {
  azureFixtureArmWorld,
  azureFixtureInfrastructure,
  azureMarketplaceFixtureObjects,
} from '../support/ocp-azure-standalone.js';
import { refusedRequests } from '../support/control-plane/scenario.js';
import { eventually, spawnProcess, type RunningProcess } from '../support/processes.js';
import { DEFAULT_SPEC } from '../azure/harness.js';

/**
 * The OpenShift fork of karpenter-provider-azure itself (pull request 6 at 8e5b2e51), against a
 * real kube-apiserver and the ARM emulator, with the settings the fleet renders for its operand.
 * The Go module proxy refuses the fork, so the set-up cannot build it on a fresh machine and
 * `npm test` does not run this suite: `npm run test:forks` does, with AZURE_FORK_BINARY naming a
 * binary built from the fork's own source (`scripts/try-azure-fork.sh <checkout>`), and fails
 * without one.
 */
const BINARY = process.env.AZURE_FORK_BINARY ?? '';
if (!existsSync(BINARY))
  throw new Error(
    `AZURE_FORK_BINARY must name the fork's binary (scripts/try-azure-fork.sh <checkout>); it names "${BINARY}"`,
  );

// The operand's service principal (the fixture's azure-cloud-credentials Secret).
const OPERAND_CLIENT = {
  clientId: '5f0c1d2e-8a3b-4c6d-9e7f-0a1b2c3d4e5f',
  secret: 'operand-secret',
};

/**
 * The fork's HTTPS_PROXY: Entra ID's public host (where MSAL sends instance discovery for an
 * authority it does not know) tunnelled to the ARM emulator, every other host refused at once
 * (the retail prices API: the fork falls back to its static prices). Loopback is never proxied.
 */
async function startEntraProxy(
  armUrl: string,
): Promise<{ url: string; server: Server; tunnels: string[] }> {
  const arm = new URL(armUrl);
  const tunnels: string[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(502);
    res.end();
  });
  server.on('connect', (req, socket) => {
    tunnels.push(req.url ?? '');
    if (req.url !== 'login.microsoftonline.com:443') {
      socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = connect(Number(arm.port), arm.hostname, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, server, tunnels };
}

describe('the OpenShift fork of karpenter-provider-azure on a real API server', () => {
  let cluster: RealOpenShiftAzureCluster;
  let proxy: Awaited<ReturnType<typeof startEntraProxy>> | undefined;
  let sidecar: Omit<AzureHarness, 'cluster'>;
  let fork: RunningProcess | undefined;

  beforeAll(async () => {
    cluster = await startRealOpenShiftAzureCluster(azureMarketplaceFixtureObjects());
    const world = azureFixtureArmWorld();
    cluster.arm.seed({
      ...world,
      servicePrincipals: [
        ...(world.servicePrincipals ?? []),
        { clientId: OPERAND_CLIENT.clientId, clientSecret: OPERAND_CLIENT.secret },
      ],
      roleAssignments: [
        ...(world.roleAssignments ?? []),
        {
          clientId: OPERAND_CLIENT.clientId,
          scope: `/subscriptions/${world.subscriptionID}`,
          role: 'Contributor',
        },
      ],
    });
    sidecar = await startAzureSidecarRuntime(cluster, { requeueMs: 500 });
  }, 180_000);
  afterAll(async () => {
    await fork?.stop();
    proxy?.server.close();
    await sidecar?.stop();
    await cluster?.stop();
  });

  it("starts, finds every CRD it waits for, and makes the fleet's AKSNodeClass Ready from its own conditions", async () => {
    await sidecar.runtime.apply(
      sidecar.order({ ...DEFAULT_SPEC, enabled: true, nodePools: [GENERAL_NODEPOOL] }),
    );
    const infra = azureFixtureInfrastructure();
    // The environment the fleet renders for the operand, with the Secret's keys filled in.
    const rendered = azureOperandEnv(infra, { ...DEFAULT_SPEC, enabled: true });
    const env: Record<string, string> = {};
    for (const e of rendered) if (e.value !== undefined) env[e.name] = e.value;
    const dir = mkdtempSync(join(tmpdir(), 'azure-fork-'));
    const envFile = join(dir, 'azure-environment.json');
    writeFileSync(
      envFile,
      JSON.stringify({
        name: 'AzureEmulator',
        resourceManagerEndpoint: `${cluster.arm.url}/`,
        activeDirectoryEndpoint: `${cluster.arm.url}/`,
        tokenAudience: cluster.arm.url,
      }),
    );
    writeFileSync(join(dir, 'arm-ca.pem'), cluster.arm.caPem);
    delete env.ARM_CLOUD;
    proxy = await startEntraProxy(cluster.arm.url);
    // As its pod would run: its service account's token and the cluster CA at the in-cluster
    // paths (the fork reads rest.InClusterConfig()), mounted in a private mount namespace so the
    // machine's /run is untouched; the same identity in KUBECONFIG.
    const token = await cluster.plane.serviceAccountToken('openshift-karpenter', 'karpenter');
    const kubeconfig = cluster.plane.kubeconfigYaml({ token }, 'karpenter');
    const ca = Buffer.from(
      /certificate-authority-data: (\S+)/.exec(kubeconfig)![1]!,
      'base64',
    ).toString();
    const sa = join(dir, 'serviceaccount');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), token);
    writeFileSync(join(sa, 'ca.crt'), ca);
    writeFileSync(join(sa, 'namespace'), 'openshift-karpenter');
    writeFileSync(join(dir, 'kubeconfig'), kubeconfig);
    const apiServer = new URL(cluster.plane.url);
    fork = spawnProcess({
      command: 'unshare',
      args: [
        '--mount',
        'sh',
        '-c',
        'mount -t tmpfs tmpfs /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount && cp "$SA_DIR"/* /run/secrets/kubernetes.io/serviceaccount/ && exec "$FORK_BINARY"',
      ],
      env: {
        ...env,
        SA_DIR: sa,
        FORK_BINARY: BINARY,
        KUBERNETES_SERVICE_HOST: apiServer.hostname,
        KUBERNETES_SERVICE_PORT: apiServer.port,
        KUBECONFIG: join(dir, 'kubeconfig'),
        SYSTEM_NAMESPACE: 'openshift-karpenter',
        AZURE_SUBSCRIPTION_ID: infra.credentials.subscriptionID,
        AZURE_TENANT_ID: infra.credentials.tenantID,
        AZURE_CLIENT_ID: OPERAND_CLIENT.clientId,
        AZURE_CLIENT_SECRET: OPERAND_CLIENT.secret,
        AZURE_ENVIRONMENT_FILEPATH: envFile,
        SSL_CERT_FILE: join(dir, 'arm-ca.pem'),
        HTTPS_PROXY: proxy.url,
        DISABLE_LEADER_ELECTION: 'true',
        METRICS_PORT: '0',
        HEALTH_PROBE_PORT: '18081',
        LOG_LEVEL: 'debug',
      },
      name: 'karpenter-provider-azure-openshift',
    });
    const why = () =>
      `\n--- the fork ---\n${fork!.output().slice(-6000)}\n--- ARM ---\n${cluster.arm.requests
        .map((r) => `${r.status} ${r.method} ${r.path}`)
        .join('\n')}`;
    // Point 1 of issue 44: it waits for every karpenter.sh kind, NodeOverlay included, and finds them.
    await eventually(
      () => (/all required CRDs are available/.test(fork!.output()) ? true : undefined),
      { timeoutMs: 60_000, what: 'the fork to find every CRD it waits for' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}${why()}`);
    });
    expect(fork.output()).toMatch(/CRD is available.*karpenter.sh\/v1alpha1, Kind=NodeOverlay/);
    // The fleet's default AKSNodeClass, Ready from the fork's own status controllers.
    type Condition = { type: string; status: string };
    const conditions = await eventually(
      async () => {
        const nodeClass = await cluster.plane.get(
          'karpenter.azure.com/v1beta1',
          'AKSNodeClass',
          'default',
        );
        const found = (nodeClass?.status as { conditions?: Condition[] } | undefined)?.conditions;
        return found?.some((c) => c.type === 'Ready' && c.status === 'True') ? found : undefined;
      },
      { timeoutMs: 60_000, what: 'the fork to make AKSNodeClass default Ready' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}${why()}`);
    });
    expect(Object.fromEntries(conditions.map((c) => [c.type, c.status]))).toEqual({
      ImagesReady: 'True',
      KubernetesVersionReady: 'True',
      LocalDNSReady: 'True',
      SubnetsReady: 'True',
      ValidationSucceeded: 'True',
      Ready: 'True',
    });
    // It read what its launch path needs from the emulator: VM sizes, the subnet, Resource Graph.
    const paths = cluster.arm.requests.filter((r) => r.status === 200).map((r) => r.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        `/subscriptions/${infra.credentials.subscriptionID}/providers/Microsoft.Compute/skus`,
        '/providers/Microsoft.ResourceGraph/resources',
      ]),
    );
    expect(proxy.tunnels).toEqual(expect.arrayContaining(['login.microsoftonline.com:443']));
    // As its own service account, with the RBAC the fleet renders for it: nothing refused but
    // the kube-dns Service it looks up at start (pkg/operator/operator.go kubeDNSIP), which
    // OpenShift does not have and which only the AKS bootstrap uses (the MCO's kubelet config
    // sets clusterDNS here); it falls back to 10.0.0.10. Not granted: least privilege.
    expect(
      refusedRequests(cluster.plane, 'system:serviceaccount:openshift-karpenter:karpenter').map(
        (r) => r.split(':')[0],
      ),
    ).toEqual(['get /api/v1/namespaces/kube-system/services/kube-dns']);
  }, 120_000);
});
