import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';

/**
 * Idle keep-alive connections are kept longer than any client keeps its own (undici 4 s, the
 * OpenShift router and cloud load balancers 60 s), so the API never closes a socket just as a
 * client reuses it; Node's default of 5 s turned that race into ECONNRESET on busy machines.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Listens the way every process that serves the API does (main, tests, demo); returns the URL. */
export async function listen(app: INestApplication, port: number, host: string): Promise<string> {
  const server = app.getHttpServer() as Server;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  await app.listen(port, host);
  return app.getUrl();
}
