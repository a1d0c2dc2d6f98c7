import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * One registry per process, with Node's default metrics and the process's name as a label; a
 * sidecar also labels its series with its cluster, for the dashboard's per-cluster drill-down.
 */
export function createRegistry(
  app: 'api' | 'worker' | 'sidecar',
  labels: Record<string, string> = {},
): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ ...labels, app });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export const fleetMetrics = {
  graphqlRequestSeconds: (registry: Registry) =>
    new Histogram({
      name: 'fleet_graphql_request_duration_seconds',
      help: 'GraphQL operation latency',
      labelNames: ['operation', 'type', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  reportsIngested: (registry: Registry) =>
    new Counter({
      name: 'fleet_status_reports_ingested_total',
      help: 'Status reports recorded in PostgreSQL',
      registers: [registry],
    }),
  reportsReceived: (registry: Registry) =>
    new Counter({
      name: 'fleet_status_reports_received_total',
      help: 'Status reports accepted by the API and queued for ingest',
      registers: [registry],
    }),
  reconcileSeconds: (registry: Registry) =>
    new Histogram({
      name: 'fleet_reconcile_duration_seconds',
      help: 'Time to apply one order on the cluster',
      labelNames: ['outcome'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  dispatchSeconds: (registry: Registry) =>
    new Histogram({
      name: 'fleet_dispatch_duration_seconds',
      help: 'Time to turn a reconcile request into an order on the cluster queue',
      labelNames: ['outcome'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
  queueDepth: (registry: Registry, collect: () => Promise<Record<string, number>>) =>
    new Gauge({
      name: 'fleet_queue_depth',
      help: 'Jobs waiting or delayed per fleet queue',
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const [queue, depth] of Object.entries(await collect())) this.set({ queue }, depth);
      },
    }),
  /** Age of the oldest report not yet ingested (0 when none waits): the ingest lag. */
  ingestLag: (registry: Registry, oldestQueuedAt: () => Promise<number | undefined>) =>
    new Gauge({
      name: 'fleet_status_ingest_lag_seconds',
      help: 'Age of the oldest status report waiting for ingest (0 when none waits)',
      registers: [registry],
      async collect() {
        const at = await oldestQueuedAt();
        this.set(at === undefined ? 0 : Math.max(0, (Date.now() - at) / 1000));
      },
    }),
  /**
   * The fleet's state as PostgreSQL holds it, read once per scrape: every series of every
   * worker replica says the same, so queries aggregate them with max(). While PostgreSQL does
   * not answer these series are left out rather than failing the whole scrape.
   */
  fleetState: (registry: Registry, read: () => Promise<FleetState>) => {
    const snapshot = sharedPerScrape(() => read().catch(() => undefined));
    new Gauge({
      name: 'fleet_clusters',
      help: 'Registered clusters by topology and platform',
      labelNames: ['topology', 'platform'] as const,
      registers: [registry],
      async collect() {
        const state = await snapshot();
        this.reset();
        for (const c of state?.clusters ?? [])
          this.set({ topology: c.topology, platform: c.platform }, c.clusters);
      },
    });
    new Gauge({
      name: 'fleet_cluster_conditions',
      help: 'Clusters by condition type and status (as last reported or raised by the fleet)',
      labelNames: ['type', 'status'] as const,
      registers: [registry],
      async collect() {
        const state = await snapshot();
        this.reset();
        for (const c of state?.conditions ?? [])
          this.set({ type: c.type, status: c.status }, c.clusters);
      },
    });
    new Gauge({
      name: 'fleet_rollouts',
      help: 'Rollouts by state',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        const fleet = await snapshot();
        this.reset();
        for (const [state, count] of Object.entries(fleet?.rollouts ?? {}))
          this.set({ state }, count);
      },
    });
  },
  /** The sidecar's CSR approver decisions since it started (its own counts, read on scrape). */
  csrDecisions: (registry: Registry, counts: () => Readonly<Record<string, number>> | undefined) =>
    new Counter({
      name: 'fleet_csr_decisions_total',
      help: 'Node CSR decisions of the cluster approver: approved, denied, ignored, or dropped unreported',
      labelNames: ['decision'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [decision, n] of Object.entries(counts() ?? {})) this.inc({ decision }, n);
      },
    }),
};

export interface FleetState {
  clusters: { topology: string; platform: string; clusters: number }[];
  conditions: { type: string; status: string; clusters: number }[];
  /** Every rollout state, zeros included, so an alert sees 0 rather than no series. */
  rollouts: Record<string, number>;
}

/** Calls `read` once for all the collectors of one scrape (they run concurrently). */
function sharedPerScrape<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  return () => {
    inFlight ??= read().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

/** The part of a BullMQ queue the ingest lag reads (structural, so this lib needs no BullMQ). */
export interface JobListing {
  getJobs(
    types: ('waiting' | 'delayed' | 'prioritized')[],
    start: number,
    end: number,
    asc: boolean,
  ): Promise<({ timestamp: number } | undefined)[]>;
}

/**
 * When the oldest job still waiting was queued. Waiting lists are FIFO, so their head is the
 * oldest; a job backing off between attempts (delayed) is ordered by when it runs next, so the
 * first few delayed jobs are read and the oldest of them taken.
 */
export async function oldestQueuedAt(queue: JobListing): Promise<number | undefined> {
  const [waiting, delayed] = await Promise.all([
    queue.getJobs(['waiting'], 0, 0, true),
    queue.getJobs(['delayed'], 0, 9, true),
  ]);
  const stamps = [...waiting, ...delayed].flatMap((job) => (job ? [job.timestamp] : []));
  return stamps.length ? Math.min(...stamps) : undefined;
}
