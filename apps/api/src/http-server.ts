import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { GraphQLModule } from '@nestjs/graphql';
import type { WebSocketServer } from 'ws';
import { WEBSOCKET_MAX_PAYLOAD_BYTES } from './graphql/query-limits.js';
import { PLAN_REPORT_BODY_LIMIT_BYTES, STATUS_REPORT_BODY_LIMIT_BYTES } from '@fleet/contracts';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ReportRoute } from './reports/report-route.js';

/** Where sidecars post status reports (ReportsController). */
const STATUS_REPORT_PATH = /^\/v1\/clusters\/[^/]+\/status\/?(\?|$)/;
/** Where sidecars post a plan's result (ReportsController.planReport). */
const PLAN_REPORT_PATH = /^\/v1\/clusters\/[^/]+\/plans\/[^/]+\/?(\?|$)/;
/** Express' own default, kept for GraphQL and everything but status reports. */
export const DEFAULT_BODY_LIMIT_BYTES = 100 * 1024;

/**
 * 413 for a declared body over `DEFAULT_BODY_LIMIT_BYTES` anywhere but status reports (whose
 * limit is the parser's) and plan reports (`PLAN_REPORT_BODY_LIMIT_BYTES`).
 */
function defaultBodyLimit(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  const length = Number(req.headers['content-length'] ?? 0);
  if (STATUS_REPORT_PATH.test(req.url ?? '')) return next();
  const limit = PLAN_REPORT_PATH.test(req.url ?? '')
    ? PLAN_REPORT_BODY_LIMIT_BYTES
    : DEFAULT_BODY_LIMIT_BYTES;
  if (length <= limit) return next();
  res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
  res.end(
    JSON.stringify({
      statusCode: 413,
      message: `request body of ${length} bytes is over the limit of ${limit}`,
    }),
  );
}

/**
 * Idle keep-alive connections are kept longer than any client keeps its own (undici 4 s, the
 * OpenShift router and cloud load balancers 60 s), so the API never closes a socket just as a
 * client reuses it; Node's default of 5 s turned that race into ECONNRESET on busy machines.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Listens the way every process that serves the API does (main, tests, demo); returns the URL. */
export async function listen(app: INestApplication, port: number, host: string): Promise<string> {
  // Express' default JSON limit is 100 kB, which a status report with its CSR decisions can
  // pass. Bodies get an explicit limit the largest valid status report fits within; every other
  // route keeps 100 kB for bodies that declare their length (the parser runs before
  // authentication). Over a limit: 413. Registered before init, replacing Nest's default parser.
  app.use(defaultBodyLimit);
  (app as NestExpressApplication).useBodyParser('json', { limit: STATUS_REPORT_BODY_LIMIT_BYTES });
  await app.init();
  limitWebSocketPayload(app);
  const server = app.getHttpServer() as Server;
  mountReportRoute(server, app.get(ReportRoute, { strict: false }));
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  await app.listen(port, host);
  return app.getUrl();
}

/**
 * Status reports and heartbeats are answered before Express sees them (issue 19): the request
 * listeners Nest installed (Express) get every other request.
 */
function mountReportRoute(server: Server, route: ReportRoute): void {
  const listeners = server.listeners('request') as ((
    req: IncomingMessage,
    res: ServerResponse,
  ) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (route.handle(req, res)) return;
    for (const listener of listeners) listener.call(server, req, res);
  });
}

/**
 * ws accepts 100 MiB messages by default and @nestjs/graphql builds its WebSocketServer without
 * options; the server reads `maxPayload` for every upgrade, so setting it before the first
 * upgrade bounds every graphql-ws message (over it, ws closes the socket with 1009).
 */
function limitWebSocketPayload(app: INestApplication): void {
  const driver = app.get(GraphQLModule, { strict: false }).graphQlAdapter as unknown as {
    _subscriptionService?: { wss?: Partial<Pick<WebSocketServer, 'options'>> };
  };
  // Duck-typed: under Jest's module registry `ws` may be a second instance of the class.
  const wss = driver._subscriptionService?.wss;
  if (!wss?.options) {
    throw new Error('graphql-ws server not found: cannot bound its message size');
  }
  wss.options.maxPayload = WEBSOCKET_MAX_PAYLOAD_BYTES;
}
