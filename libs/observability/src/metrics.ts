import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** One registry per process, with Node's default metrics and the process's name as a label. */
export function createRegistry(app: 'api' | 'worker' | 'sidecar'): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ app });
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
};
