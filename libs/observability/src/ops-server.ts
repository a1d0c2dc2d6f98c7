import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export type ReadinessCheck = () => Promise<unknown>;

export interface OpsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * /healthz (the process is up), /readyz (every dependency answers, each named when it does
 * not) and /metrics (Prometheus text) for processes that have no HTTP server of their own.
 */
export async function startOpsServer(options: {
  port: number;
  host?: string;
  registry: Registry;
  checks: Record<string, ReadinessCheck>;
  timeoutMs?: number;
}): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      } else if (path === '/readyz') {
        const failed = await failingChecks(options.checks, options.timeoutMs ?? 2000);
        res
          .writeHead(failed.length ? 503 : 200, { 'content-type': 'application/json' })
          .end(
            JSON.stringify(failed.length ? { status: 'unavailable', failed } : { status: 'ok' }),
          );
      } else if (path === '/metrics') {
        res
          .writeHead(200, { 'content-type': options.registry.contentType })
          .end(await options.registry.metrics());
      } else {
        res.writeHead(404).end();
      }
    })().catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function failingChecks(
  checks: Record<string, ReadinessCheck>,
  timeoutMs: number,
): Promise<string[]> {
  const names = Object.keys(checks);
  const results = await Promise.allSettled(
    names.map((name) =>
      Promise.race([
        checks[name]!(),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('timeout')), timeoutMs).unref(),
        ),
      ]),
    ),
  );
  return names.filter((_, i) => results[i]!.status === 'rejected');
}
