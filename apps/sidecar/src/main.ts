import { EC2Client } from '@aws-sdk/client-ec2';
import { AwsStandaloneCloudProvider, loadCustomResourceDefinitions } from '@fleet/cloud-provider';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import { createRegistry, fleetMetrics, startOpsServer } from '@fleet/observability';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { loadSidecarConfig } from './config.js';
import { OrderConsumer } from './orders/order-consumer.js';
import { ReportPublisher } from './report/report-publisher.js';
import { StatusReporter } from './report/status-reporter.js';
import { SidecarRuntime } from './runtime.js';

export async function startSidecar(env: NodeJS.ProcessEnv = process.env) {
  const config = loadSidecarConfig(env);
  const log = pino({
    name: 'sidecar',
    level: config.LOG_LEVEL,
    base: { cluster: config.CLUSTER_ID },
  });
  const kubeConfig = new KubeConfig();
  if (config.KUBECONFIG) kubeConfig.loadFromFile(config.KUBECONFIG);
  else kubeConfig.loadFromDefault();
  const provider = new AwsStandaloneCloudProvider();
  const crds = await loadCustomResourceDefinitions(
    provider.customResourceDefinitions(),
    config.CRD_DIR,
  );
  const ec2Clients = new Map<string, EC2Client>();
  const ec2 = (region: string) => {
    let client = ec2Clients.get(region);
    if (!client) {
      client = new EC2Client({
        region: config.AWS_REGION ?? region,
        ...(config.AWS_ENDPOINT_URL_EC2 ? { endpoint: config.AWS_ENDPOINT_URL_EC2 } : {}),
      });
      ec2Clients.set(region, client);
    }
    return client;
  };
  const runtime = new SidecarRuntime({
    kubeConfig,
    ec2,
    provider,
    crds,
    log,
    version: config.SIDECAR_VERSION,
    csrApprovalsPerMinute: config.CSR_APPROVALS_PER_MINUTE,
    backupNamespace: config.CLUSTER_AUTOSCALER_BACKUP_NAMESPACE,
  });
  runtime.start();
  const reporter = new StatusReporter(config.API_URL, config.CLUSTER_ID, config.REPORT_TOKEN);
  const publisher = new ReportPublisher(runtime, config.CLUSTER_ID, (r) => reporter.send(r), log);
  const connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  const registry = createRegistry('sidecar');
  const reconcileSeconds = fleetMetrics.reconcileSeconds(registry);
  const consumer = new OrderConsumer({
    clusterId: config.CLUSTER_ID,
    connection,
    prefix: config.QUEUE_PREFIX,
    apply: async (order) => {
      const stop = reconcileSeconds.startTimer();
      try {
        const result = await runtime.apply(order);
        stop({ outcome: 'applied' });
        return result;
      } catch (err) {
        stop({ outcome: 'error' });
        throw err;
      }
    },
    report: () => publisher.publish(),
    log,
  });
  await consumer.start();

  // Heartbeat: the current state again, so the fleet can tell a quiet cluster from a dead sidecar.
  const heartbeat = setInterval(() => void publisher.publish(), config.HEARTBEAT_SECONDS * 1000);
  heartbeat.unref();
  const versionApi = kubeConfig.makeApiClient(VersionApi);
  const ops =
    config.OPS_PORT === undefined
      ? undefined
      : await startOpsServer({
          port: config.OPS_PORT,
          host: config.OPS_HOST,
          registry,
          checks: { redis: () => connection.ping(), kubernetes: () => versionApi.getCode() },
        });
  log.info({ ops: ops?.url }, 'sidecar ready');

  return {
    opsUrl: ops?.url,
    async close(): Promise<void> {
      clearInterval(heartbeat);
      await ops?.close();
      publisher.stop();
      await consumer.close();
      await runtime.stop();
      connection.disconnect();
      for (const client of ec2Clients.values()) client.destroy();
    },
  };
}

const isMain = import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
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
