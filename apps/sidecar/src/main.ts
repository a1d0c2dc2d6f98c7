import {
  clusterApiLocation,
  loadCustomResourceDefinitions,
  type ClusterDriver,
} from '@fleet/cloud-provider';
import type { HostedAwsInfrastructure } from '@fleet/discovery';
import { KubeClusterObjectReader, RestClient } from '@fleet/discovery';
import { KubeConfig } from '@kubernetes/client-node';
import { createRegistry, fleetMetrics, startOpsServer } from '@fleet/observability';
import { createRedisClient } from '@fleet/contracts';
import { pino } from 'pino';
import { loadGuestBootstrapConfig, loadSidecarConfig } from './config.js';
import { ClusterClient } from './kube/cluster-client.js';
import { bootstrapGuestIdentity } from './hosted/guest-identity.js';
import { apiServersFor } from './kube/api-servers.js';
import { pooledConnections } from './kube/pooled-connections.js';
import { HeapTrimmer } from './memory/heap-trimmer.js';
import { OrderConsumer } from './orders/order-consumer.js';
import { ReportPublisher } from './report/report-publisher.js';
import { StatusReporter } from './report/status-reporter.js';
import { HostedRuntime } from './hosted/hosted-runtime.js';
import { SidecarRuntime } from './runtime.js';
import { SidecarHost } from './sidecar-host.js';

/** The Cluster the CAPI driver runs Karpenter for (the driver reports it missing). */
function clusterApiCluster(env: NodeJS.ProcessEnv): { namespace: string; clusterName: string } {
  const { namespace, clusterName } = clusterApiLocation(env);
  return { namespace, clusterName: clusterName ?? '' };
}

export async function startSidecar(env: NodeJS.ProcessEnv = process.env) {
  const config = loadSidecarConfig(env);
  const log = pino({
    name: 'sidecar',
    level: config.LOG_LEVEL,
    base: { cluster: config.CLUSTER_ID },
  });
  // The driver, and with it the API servers and the cloud, is known from the first order.
  const host = new SidecarHost({
    log,
    version: config.SIDECAR_VERSION,
    async createRuntime(registration) {
      const apiServers = apiServersFor(registration.targets, config, registration.sidecarRunsOn);
      // Only now is the driver's code (its cloud's SDK) loaded: the one platform this sidecar runs.
      const { create } = await registration.load();
      const driver = create({
        reader: (target) =>
          new KubeClusterObjectReader(apiServers.kubeConfig(target), apiServers.timeoutMs),
        // The hosted driver finds its HostedControlPlane in the sidecar's own (HCP) namespace.
        env: {
          ...env,
          SIDECAR_NAMESPACE: config.SIDECAR_NAMESPACE,
          HOSTED_MODE: config.HOSTED_MODE,
        },
        dryRunCreate: (target, object) => apiServers.client(target).dryRunCreate(object),
        sameApiServer: apiServers.single,
        requestToken: (target, namespace, serviceAccount, seconds) =>
          apiServers.client(target).requestToken(namespace, serviceAccount, seconds),
        connection: (target) => apiServers.client(target).connection(),
      });
      if (registration.topology === 'HOSTED') {
        return new HostedRuntime({
          apiServers,
          driver: driver as ClusterDriver<HostedAwsInfrastructure>,
          reader: new KubeClusterObjectReader(
            apiServers.kubeConfig('management'),
            apiServers.timeoutMs,
          ),
          mode: config.HOSTED_MODE,
          hcpNamespace: config.SIDECAR_NAMESPACE,
          ...(config.WORKLOAD_KUBECONFIG
            ? { guestKubeconfigPath: config.WORKLOAD_KUBECONFIG }
            : {}),
          log,
        });
      }
      const crds = await loadCustomResourceDefinitions(
        driver.provider.customResourceDefinitions(),
        config.CRD_DIR,
      );
      return new SidecarRuntime({
        apiServers,
        driver,
        crds,
        // Standalone: the sidecar runs on the cluster it changes, as deploy/sidecar/standalone.
        ...(registration.topology === 'STANDALONE'
          ? {
              identity: {
                namespace: config.SIDECAR_NAMESPACE,
                serviceAccount: config.SIDECAR_SERVICE_ACCOUNT,
              },
            }
          : {}),
        crdsFor: (version) =>
          loadCustomResourceDefinitions(
            driver.provider.customResourceDefinitions(version),
            config.CRD_DIR,
          ),
        log,
        version: config.SIDECAR_VERSION,
        csrApprovalsPerMinute: config.CSR_APPROVALS_PER_MINUTE,
        credentialRenewalMs: config.CREDENTIAL_RENEWAL_CHECK_SECONDS * 1000,
        backupNamespace: config.CLUSTER_AUTOSCALER_BACKUP_NAMESPACE,
        ...(registration.platform === 'CAPI' ? { clusterApi: clusterApiCluster(env) } : {}),
      });
    },
  });
  const reporter = new StatusReporter(config.API_URL, config.CLUSTER_ID, config.REPORT_TOKEN);
  const publisher = new ReportPublisher(host, config.CLUSTER_ID, (r) => reporter.send(r), log);
  const connection = createRedisClient(config.REDIS_URL, { maxRetriesPerRequest: null });
  const registry = createRegistry('sidecar', { cluster: config.CLUSTER_ID });
  const reconcileSeconds = fleetMetrics.reconcileSeconds(registry);
  fleetMetrics.csrDecisions(registry, () => host.csrCounts());
  const consumer = new OrderConsumer({
    clusterId: config.CLUSTER_ID,
    connection,
    prefix: config.QUEUE_PREFIX,
    apply: async (order) => {
      const stop = reconcileSeconds.startTimer();
      try {
        const result = await host.apply(order);
        stop({ outcome: 'applied' });
        return result;
      } catch (err) {
        stop({ outcome: 'error' });
        throw err;
      }
    },
    report: () => publisher.publish(),
    plan: (order) => host.plan(order),
    reportPlan: (report) => reporter.sendPlan(report),
    log,
  });
  await consumer.start();

  // Heartbeat: the current state again, so the fleet can tell a quiet cluster from a dead sidecar.
  const heartbeat = setInterval(() => void publisher.publish(), config.HEARTBEAT_SECONDS * 1000);
  heartbeat.unref();
  // After a burst of work, the heap goes back to what is live (memory/heap-trimmer.ts).
  const heapTrimmer = new HeapTrimmer({ intervalMs: 15_000, slackBytes: 16 * 2 ** 20 });
  heapTrimmer.start();
  // Readiness checks the sidecar's own API server, which every topology has.
  const ownKubeConfig = new KubeConfig();
  if (config.KUBECONFIG) ownKubeConfig.loadFromFile(config.KUBECONFIG);
  else ownKubeConfig.loadFromDefault();
  pooledConnections(ownKubeConfig);
  const ownApiServer = new RestClient(ownKubeConfig, config.API_SERVER_TIMEOUT_SECONDS * 1000);
  const ops =
    config.OPS_PORT === undefined
      ? undefined
      : await startOpsServer({
          port: config.OPS_PORT,
          host: config.OPS_HOST,
          registry,
          checks: {
            redis: () => connection.ping(),
            kubernetes: () => ownApiServer.get('/version'),
          },
        });
  log.info({ ops: ops?.url }, 'sidecar ready');

  return {
    opsUrl: ops?.url,
    async close(): Promise<void> {
      clearInterval(heartbeat);
      heapTrimmer.stop();
      await ops?.close();
      publisher.stop();
      await consumer.close();
      await host.stop();
      connection.disconnect();
    },
  };
}

/**
 * `main.mjs bootstrap-guest`: the hosted sidecar's one-shot guest bootstrap
 * (deploy/sidecar/hosted/guest-bootstrap.yaml), with HyperShift's guest kubeconfig mounted at
 * GUEST_ADMIN_KUBECONFIG and the HCP namespace in SIDECAR_NAMESPACE.
 */
export async function bootstrapGuest(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadGuestBootstrapConfig(env);
  await bootstrapGuestIdentity({
    guestAdmin: ClusterClient.fromKubeconfigFile(config.GUEST_ADMIN_KUBECONFIG),
    management: ClusterClient.fromKubeconfigFile(config.KUBECONFIG),
    hcpNamespace: config.SIDECAR_NAMESPACE,
    log: pino({ name: 'sidecar-guest-bootstrap', level: config.LOG_LEVEL }),
  });
}

/** `main.mjs [bootstrap-guest]`: what the process does, from its arguments (bin.ts runs it). */
export function runCommandLine(argv: readonly string[] = process.argv): void {
  if (argv[2] === 'bootstrap-guest') {
    bootstrapGuest().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err instanceof Error ? err.message : err);
        process.exit(1);
      },
    );
    return;
  }
  startSidecar()
    .then((sidecar) => {
      const stop = () => void sidecar.close().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    })
    .catch((err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    });
}
