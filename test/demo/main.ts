/**
 * `npm run demo`: the fleet on this machine. The API and the worker on local PostgreSQL and
 * Redis, a handful of emulated OpenShift-on-AWS clusters, one Cluster API workload cluster (with
 * its management cluster) and two OpenShift-on-Azure clusters (with the ARM emulator): one on a
 * marketplace image the fork can boot, one on the installer's gallery image, which it cannot
 * (Degraded ImageNotSupported), and one HyperShift management cluster hosting three control
 * planes in AutoNode mode; each cluster with its own sidecar process.
 */
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AppModule } from '../../apps/api/src/app.module.js';
import { loadApiConfig } from '../../apps/api/src/config.js';
import { listen } from '../../apps/api/src/http-server.js';
import { startWorker } from '../../apps/worker/src/main.js';
import { CAPI_CLUSTER, startEmulatedCapiCluster } from '../support/capi-aws-workload.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { startEmulatedAzureCluster } from '../support/emulated-azure-cluster.js';
import { HyperShiftStandIn, startEmulatedManagementCluster } from '../support/hcp-aws-hosted.js';
import {
  azureFixtureObjects,
  azureMarketplaceFixtureObjects,
} from '../support/ocp-azure-standalone.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { graphqlClient } from '../support/graphql-client.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { eventually, type RunningProcess } from '../support/processes.js';
import { upstreamBinary } from '../support/upstream-binaries.js';
import type { KubeApiServerEmulator } from '../support/kube-apiserver/index.js';

const CLUSTERS = Number(process.env.DEMO_CLUSTERS ?? 3);
const say = (msg: string) => console.log(`[demo] ${msg}`);

/**
 * Where the demo writes one administrator kubeconfig per emulated API server (the sidecars'
 * own kubeconfigs are their service accounts', Forbidden for most reads): DEMO_KUBECONFIG_DIR,
 * else <tmp>/karpenter-fleet-demo. Each is the emulator's cluster-admin token over HTTPS with
 * its CA, which kubectl needs (it sends no bearer token to a plain-http server).
 */
const KUBECONFIG_DIR = process.env.DEMO_KUBECONFIG_DIR ?? join(tmpdir(), 'karpenter-fleet-demo');
const kubeconfigs: { name: string; path: string }[] = [];
function writeAdminKubeconfig(name: string, kube: KubeApiServerEmulator): string {
  mkdirSync(KUBECONFIG_DIR, { recursive: true, mode: 0o700 });
  const path = join(KUBECONFIG_DIR, `${name}.kubeconfig`);
  writeFileSync(path, kube.kubeconfigYaml(), { mode: 0o600 });
  kubeconfigs.push({ name, path });
  return path;
}

/**
 * The kubectl the set-up built (pinned, test/upstream/versions.json), else the one on PATH. The
 * built demo runs from dist/, where test/upstream/.bin is not copied: the repository's, from the
 * working directory `npm run demo` runs in.
 */
function kubectlCommand(): string {
  for (const candidate of [
    () => upstreamBinary('kubectl'),
    () => {
      const path = join(process.cwd(), 'test', 'upstream', '.bin', 'kubectl');
      accessSync(path, constants.X_OK);
      return path;
    },
  ]) {
    try {
      return candidate();
    } catch {
      // the next one
    }
  }
  return 'kubectl';
}

/** A fresh demo database each run (the report tokens of a previous run are gone with it). */
async function freshDatabase(): Promise<string> {
  const base = new URL(
    process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet',
  );
  const name = `${base.pathname.slice(1)}_demo`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.query(
    `CREATE DATABASE "${name}" TEMPLATE "${process.env.FLEET_TEST_TEMPLATE_DB ?? 'karpenter_fleet_template'}"`,
  );
  await client.end();
  base.pathname = `/${name}`;
  return base.toString();
}

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase();
  const prefix = `demo-${randomBytes(3).toString('hex')}`;
  // The demo's admin token: FLEET_BOOTSTRAP_TOKEN if given, else a fresh one printed below.
  const adminToken =
    process.env.FLEET_BOOTSTRAP_TOKEN ?? `kf_demo_${randomBytes(18).toString('base64url')}`;
  const config = loadApiConfig({
    ...process.env,
    DATABASE_URL: databaseUrl,
    QUEUE_PREFIX: prefix,
    FLEET_BOOTSTRAP_TOKEN: adminToken,
  });
  const app = await NestFactory.create(AppModule.forRoot(config), { logger: ['error', 'warn'] });
  const apiUrl = await listen(app, config.API_PORT, config.API_HOST);
  const worker = await startWorker({
    ...process.env,
    DATABASE_URL: databaseUrl,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
  });
  const gql = graphqlClient(`${apiUrl}/graphql`, { authorization: `Bearer ${adminToken}` });

  const clusters: EmulatedCluster[] = [];
  const capiClusters: { stop(): Promise<void> }[] = [];
  const sidecars: RunningProcess[] = [];
  let stopping = false;
  // Also the way out after a failure: the sidecars are child processes and would outlive us.
  const stop = async (exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    say('stopping');
    await Promise.all(sidecars.map((s) => s.stop()));
    await worker.close();
    await app.close();
    await Promise.all([...clusters, ...capiClusters].map((c) => c.stop()));
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  try {
    const ids: string[] = [];
    for (let i = 1; i <= CLUSTERS; i++) {
      const cluster = await startEmulatedCluster();
      clusters.push(cluster);
      writeAdminKubeconfig(`ocp-east-${i}`, cluster.kube);
      const registered = await registerCluster(gql, {
        name: `ocp-east-${i}`,
        labels: { env: i === 1 ? 'staging' : 'prod', region: 'us-east-1' },
      });
      ids.push(registered.id);
      sidecars.push(
        startSidecarProcess(
          cluster,
          registered,
          { apiUrl, queuePrefix: prefix },
          { LOG_LEVEL: 'warn', HEARTBEAT_SECONDS: '10' },
          `sidecar ocp-east-${i}`,
        ),
      );
      say(`registered ocp-east-${i} (${registered.id}); its sidecar watches ${cluster.kube.url}`);
    }

    // A Cluster API workload cluster on AWS, its CAPI objects on a separate management cluster:
    // its sidecar runs on the workload cluster and reaches the management one by kubeconfig.
    const capi = await startEmulatedCapiCluster();
    capiClusters.push(capi);
    writeAdminKubeconfig('capi-east', capi.workload);
    writeAdminKubeconfig('capi-east-management', capi.management);
    const capiRegistered = await registerCluster(gql, {
      name: 'capi-east',
      platform: 'CAPI',
      clusterApiName: CAPI_CLUSTER.name,
      clusterApiNamespace: CAPI_CLUSTER.namespace,
      infrastructureProvider: 'aws',
      managementCluster: 'mgmt-east',
      labels: { env: 'prod', region: 'us-east-1', platform: 'capi' },
    });
    sidecars.push(
      startSidecarProcess(
        {
          sidecarEnv: {
            ...capi.env,
            KUBECONFIG: capi.workloadKubeconfigPath,
            WORKLOAD_KUBECONFIG: '',
            MANAGEMENT_KUBECONFIG: capi.managementKubeconfigPath,
            CLUSTER_API_CLUSTER_NAME: CAPI_CLUSTER.name,
            CLUSTER_API_NAMESPACE: CAPI_CLUSTER.namespace,
          },
        },
        capiRegistered,
        { apiUrl, queuePrefix: prefix },
        { LOG_LEVEL: 'warn', HEARTBEAT_SECONDS: '10' },
        'sidecar capi-east',
      ),
    );
    await gql(
      `mutation($id: ID!) { upsertNodePool(clusterId: $id, input: { name: "general", spec: { template: { spec: { nodeClassRef: { group: "karpenter.cluster.x-k8s.io", kind: "ClusterAPINodeClass", name: "default" }, requirements: [] } }, limits: { cpu: "64" } } }) { id } }`,
      { id: capiRegistered.id },
    );
    await gql(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true, clusterAutoscalerMode: KEEP, allowedInstanceTypes: ["m6i.xlarge", "c6i.2xlarge"] }) { id } }`,
      { id: capiRegistered.id },
    );
    await eventually(
      () =>
        capi.management
          .list('cluster.x-k8s.io/v1beta1', 'MachineDeployment', CAPI_CLUSTER.namespace)
          .filter((md) => md.metadata?.labels?.['fleet.karpenter.sh/managed-by']).length === 6
          ? true
          : undefined,
      { timeoutMs: 60_000, what: 'capi-east to get its MachineDeployments' },
    );
    say(
      `registered capi-east (${capiRegistered.id}): 6 MachineDeployments (2 instance types × 3 zones) on its management cluster ${capi.management.url}, the operand and ClusterAPINodeClass default on ${capi.workload.url}`,
    );

    // OpenShift on Azure, installed with ARO's no-plan marketplace image (the variant the
    // OpenShift fork of karpenter-provider-azure can boot), its Azure Resource Manager emulated.
    const azure = await startEmulatedAzureCluster({ objects: azureMarketplaceFixtureObjects() });
    capiClusters.push(azure);
    writeAdminKubeconfig('azure-east', azure.kube);
    const azureRegistered = await registerCluster(gql, {
      name: 'azure-east',
      platform: 'AZURE',
      region: 'eastus',
      infraID: 'prod-west-q8m4d',
      labels: { env: 'prod', region: 'eastus', platform: 'azure' },
    });
    sidecars.push(
      startSidecarProcess(
        azure,
        azureRegistered,
        { apiUrl, queuePrefix: prefix },
        { LOG_LEVEL: 'warn', HEARTBEAT_SECONDS: '10' },
        'sidecar azure-east',
      ),
    );
    await gql(
      `mutation($id: ID!) { upsertNodePool(clusterId: $id, input: { name: "general", spec: { template: { spec: { nodeClassRef: { group: "karpenter.azure.com", kind: "AKSNodeClass", name: "default" }, requirements: [] } }, limits: { cpu: "64" } } }) { id } }`,
      { id: azureRegistered.id },
    );
    await gql(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true, clusterAutoscalerMode: KEEP }) { id } }`,
      { id: azureRegistered.id },
    );
    await eventually(
      async () => {
        const res = await gql<{ cluster: { inSync: boolean } }>(
          `query($id: ID!) { cluster(id: $id) { inSync } }`,
          { id: azureRegistered.id },
        );
        return res.data?.cluster.inSync ? true : undefined;
      },
      { timeoutMs: 60_000, what: 'azure-east to apply its order' },
    );
    say(
      `registered azure-east (${azureRegistered.id}): the fork's operand (PROVISION_MODE=openshift), AKSNodeClass default and NodePool "general" (zones eastus-1..3) on ${azure.kube.url}; ARM at ${azure.arm.url}`,
    );

    // OpenShift on Azure as the installer leaves it: workers on the cluster's own gallery image,
    // which the fork cannot boot. Enabling Karpenter there reports why, and writes nothing.
    const gallery = await startEmulatedAzureCluster({ objects: azureFixtureObjects() });
    capiClusters.push(gallery);
    writeAdminKubeconfig('azure-gallery', gallery.kube);
    const galleryRegistered = await registerCluster(gql, {
      name: 'azure-gallery',
      platform: 'AZURE',
      region: 'eastus',
      infraID: 'prod-west-q8m4d',
      labels: { env: 'staging', region: 'eastus', platform: 'azure' },
    });
    sidecars.push(
      startSidecarProcess(
        gallery,
        galleryRegistered,
        { apiUrl, queuePrefix: prefix },
        { LOG_LEVEL: 'warn', HEARTBEAT_SECONDS: '10' },
        'sidecar azure-gallery',
      ),
    );
    await gql(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true, clusterAutoscalerMode: KEEP }) { id } }`,
      { id: galleryRegistered.id },
    );
    const galleryDegraded = await eventually(
      async () => {
        const res = await gql<{
          cluster: {
            status: {
              conditions: { type: string; status: string; reason: string; message: string }[];
            } | null;
          };
        }>(
          `query($id: ID!) { cluster(id: $id) { status { conditions { type status reason message } } } }`,
          { id: galleryRegistered.id },
        );
        return res.data?.cluster.status?.conditions.find(
          (c) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'ImageNotSupported',
        );
      },
      { timeoutMs: 60_000, what: 'azure-gallery to report Degraded ImageNotSupported' },
    );
    say(
      `registered azure-gallery (${galleryRegistered.id}): Degraded ImageNotSupported (Karpenter not installed): ${galleryDegraded.message}`,
    );

    // HyperShift on AWS: one management cluster hosting three control planes in AutoNode mode
    // (HyperShift runs Karpenter; a stand-in plays HyperShift), each served by its own sidecar
    // with only its own Roles in its own HCP namespace.
    const mgmt = await startEmulatedManagementCluster();
    capiClusters.push(mgmt);
    writeAdminKubeconfig('mgmt-west', mgmt.management);
    const hypershifts: HyperShiftStandIn[] = [];
    const hosted = await Promise.all(
      (
        [
          ['hcp-west-1', 'AutoNode'],
          ['hcp-west-2', 'AutoNode'],
          ['hcp-west-3', 'AutoNode'],
        ] as const
      ).map(async ([name, mode]) => {
        const hcp = await mgmt.addHostedControlPlane({ name, mode });
        writeAdminKubeconfig(name, hcp.guest);
        hypershifts.push(new HyperShiftStandIn(hcp));
        const registered = await registerCluster(gql, {
          name,
          topology: 'HOSTED',
          platform: 'AWS',
          region: 'us-west-2',
          infraID: hcp.infraID,
          managementCluster: 'mgmt-west',
          hcpNamespace: hcp.hcpNamespace,
          labels: { env: 'prod', region: 'us-west-2', platform: 'hypershift' },
        });
        sidecars.push(
          startSidecarProcess(
            hcp,
            registered,
            { apiUrl, queuePrefix: prefix },
            { LOG_LEVEL: 'warn', HEARTBEAT_SECONDS: '10' },
            `sidecar ${name}`,
          ),
        );
        await gql(
          `mutation($id: ID!) { upsertNodePool(clusterId: $id, input: { name: "general", spec: { template: { spec: { nodeClassRef: { group: "karpenter.k8s.aws", kind: "EC2NodeClass", name: "karpenter-fleet" }, requirements: [] } }, limits: { cpu: "64" } } }) { id } }`,
          { id: registered.id },
        );
        await gql(
          `mutation($id: ID!, $role: String!) { setKarpenter(clusterId: $id, input: { enabled: true, webIdentityRoleArn: $role }) { id } }`,
          { id: registered.id, role: `arn:aws:iam::111122223333:role/${hcp.infraID}-karpenter` },
        );
        await eventually(
          async () => {
            const res = await gql<{
              cluster: {
                inSync: boolean;
                status: { conditions: { type: string; status: string }[] } | null;
              };
            }>(
              `query($id: ID!) { cluster(id: $id) { inSync status { conditions { type status } } } }`,
              {
                id: registered.id,
              },
            );
            const c = res.data?.cluster;
            return c?.inSync &&
              c.status?.conditions.some((x) => x.type === 'Available' && x.status === 'True')
              ? true
              : undefined;
          },
          { timeoutMs: 90_000, what: `${name} to be Available` },
        );
        return { name, mode, hcp, registered };
      }),
    );
    // Stopped with the management cluster; the stand-ins only watch it.
    process.once('exit', () => hypershifts.forEach((h) => h.stop()));
    for (const { name, hcp, registered } of hosted)
      say(
        `registered ${name} (${registered.id}): hosted on mgmt-west in AutoNode mode: spec.autoNode set on HostedCluster clusters/${name}, HyperShift's Karpenter in ${hcp.hcpNamespace}, NodePool "general" and OpenshiftEC2NodeClass karpenter-fleet on its guest ${hcp.guest.url}; Available`,
      );
    const onMgmt = await gql<{
      clusters: { totalCount: number; edges: { node: { name: string } }[] };
    }>(
      `{ clusters(first: 10, filter: { managementCluster: "mgmt-west" }) { totalCount edges { node { name } } } }`,
    );
    say(
      `clusters(filter: { managementCluster: "mgmt-west" }) lists ${onMgmt.data?.clusters.totalCount ?? 0}: ${(onMgmt.data?.clusters.edges ?? []).map((e) => e.node.name).join(', ')} (management cluster ${mgmt.management.url})`,
    );

    const first = ids[0]!;
    await gql(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true, clusterAutoscalerMode: DISABLE }) { id } }`,
      { id: first },
    );
    const upsert = await gql<{ upsertNodePool: { karpenter: { generation: number } } }>(
      `mutation($id: ID!, $spec: JSON!) { upsertNodePool(clusterId: $id, input: { name: "general", spec: $spec }) { karpenter { generation } } }`,
      {
        id: first,
        spec: {
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              requirements: [
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
            },
          },
          limits: { cpu: '64' },
        },
      },
    );
    const generation = upsert.data?.upsertNodePool.karpenter.generation;
    say(`enabled Karpenter on ocp-east-1 with NodePool "general" (generation ${generation})`);
    await eventually(
      async () => {
        const res = await gql<{ cluster: { inSync: boolean } }>(
          `query($id: ID!) { cluster(id: $id) { inSync } }`,
          { id: first },
        );
        return res.data?.cluster.inSync ? true : undefined;
      },
      { timeoutMs: 30_000, what: 'ocp-east-1 to apply the change' },
    );
    say('ocp-east-1 applied it: operand, default EC2NodeClass and NodePool are on its API server');

    // ocp-east-1 moves from the Cluster Autoscaler to Karpenter (clusterAutoscalerMode DISABLE):
    // the Cluster Autoscaler stays until Karpenter can take over.
    const east1 = clusters[0]!;
    const casState = () => {
      const kept = east1.kube.get(
        'v1',
        'ConfigMap',
        'karpenter-fleet-cluster-autoscaler-backup',
        'openshift-config',
      );
      return (
        `ClusterAutoscaler/default ${east1.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default') ? 'still present' : 'removed'}, ` +
        `${east1.kube.list('autoscaling.openshift.io/v1beta1', 'MachineAutoscaler', 'openshift-machine-api').length} MachineAutoscaler(s) left; ` +
        `copy kept in ${kept ? 'openshift-config/karpenter-fleet-cluster-autoscaler-backup' : '(none)'}`
      );
    };
    say(`ocp-east-1: ${casState()} (kept until Karpenter is Available and its NodeClass Ready)`);
    east1.kube.setDeploymentAvailable('openshift-karpenter', 'karpenter');
    say(
      'ocp-east-1: the Karpenter Deployment is available (ClusterOperator karpenter → AsExpected)',
    );
    const simulator = new NodeLaunchSimulator({
      kube: east1.kube,
      ec2: east1.ec2,
      log: (message) => say(`ocp-east-1: ${message}`),
    }).start();
    simulator.markNodeClassReady('default');
    say('ocp-east-1: Karpenter reports EC2NodeClass default Ready');
    await eventually(
      () =>
        east1.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default')
          ? undefined
          : true,
      { timeoutMs: 30_000, what: 'ocp-east-1 to remove its Cluster Autoscaler' },
    );
    say(`ocp-east-1: ${casState()}`);
    for (let n = 0; n < 3; n++) {
      const node = await simulator.launch('general');
      say(
        `ocp-east-1: node ${node.nodeName} joined (client CSR approved in ${node.clientApprovalMs} ms, serving in ${node.servingApprovalMs} ms)`,
      );
    }
    // A read-only token too, to see the console as a VIEWER sees it (no mutating controls).
    const viewer = await gql<{ createApiToken: { secret: string } }>(
      `mutation { createApiToken(input: { name: "demo-viewer", role: VIEWER }) { secret } }`,
    );
    const viewerToken = viewer.data?.createApiToken.secret ?? '(not created)';
    const east1Kubeconfig = kubeconfigs.find((k) => k.name === 'ocp-east-1')!.path;
    console.log(`
Console: ${apiUrl}/   (sign in with the admin token, or ${viewerToken} read-only)
GraphQL: ${apiUrl}/graphql   (admin token: ${adminToken})

  curl -s ${apiUrl}/graphql -H 'content-type: application/json' -H 'authorization: Bearer ${adminToken}' -d '{"query":"{ clusters(first: 10) { totalCount edges { node { name inSync karpenter { enabled generation } status { observedGeneration conditions { type status reason } } nodePools { name } } } } }"}'

Kubeconfigs (cluster-admin on each emulated API server), in ${KUBECONFIG_DIR}:
${kubeconfigs.map((k) => `  ${k.name.padEnd(22)} ${k.path}`).join('\n')}

  ${kubectlCommand()} --kubeconfig ${east1Kubeconfig} get nodepools.karpenter.sh,ec2nodeclasses,nodes

Ctrl-C stops everything.`);
  } catch (err) {
    console.error(err);
    await stop(1);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
