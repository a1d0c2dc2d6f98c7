import { HttpException, HttpStatus, Injectable } from '@nestjs/common';
import {
  compileJsonValidator,
  findUnstorableText,
  Heartbeat,
  mayHoldUnstorableText,
  STATUS_REPORT_BODY_LIMIT_BYTES,
  StatusReport,
} from '@fleet/contracts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ZodType } from 'zod';
import { MetricsService } from '../metrics/metrics.service.js';
import { QueuesService } from '../queues/queues.service.js';
import { ReportGate } from './report-gate.js';

/** `POST /v1/clusters/:id/status` and `/heartbeat`, with an optional trailing slash or query. */
const ROUTE = /^\/v1\/clusters\/([^/?]+)\/(status|heartbeat)\/?(?:\?.*)?$/;
/** A heartbeat is a cluster id and a digest: anything larger is not one. */
const HEARTBEAT_BODY_LIMIT_BYTES = 4 * 1024;

type Answer = { status: number; body: object };

/** The report contract compiled (issue 48, target 1); zod decides, and words, every refusal. */
const acceptsStatusReport = compileJsonValidator(StatusReport);

const refusal = (status: number, body: object): HttpException => new HttpException(body, status);

/**
 * The sidecars' hot path, served straight from node:http before Express (issue 19): at fleet
 * scale every cluster reports every heartbeat, and Nest/Express's per-request pipeline (routing,
 * middleware, body parser, interceptors) cost more CPU than the report itself. It does exactly
 * what the Nest route did, through the same ReportGate (token, per-cluster rate limit, generation
 * check) and the same zod contract and storable-text check, answering with the same bodies; then
 * one XADD onto the report stream, or for a heartbeat one script that refreshes liveness.
 *
 * Order of checks (as before): authentication, rate limit, then the body. The body is read
 * first only as bytes (bounded), and parsed only for an authenticated cluster.
 */
@Injectable()
export class ReportRoute {
  constructor(
    private readonly gate: ReportGate,
    private readonly queues: QueuesService,
    private readonly metrics: MetricsService,
  ) {}

  /** True when this route takes the request (then it answers it). */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'POST') return false;
    const match = ROUTE.exec(req.url ?? '');
    if (!match) return false;
    const clusterId = canonicalClusterId(match[1] ?? '');
    const kind = match[2] as 'status' | 'heartbeat';
    // The fleet's clock orders reports and stamps liveness; the sidecar's reportedAt is
    // information only.
    const receivedAt = Date.now();
    void this.serve(req, clusterId, kind, receivedAt).then(
      (answer) => send(res, answer),
      (err: unknown) => send(res, toAnswer(err)),
    );
    return true;
  }

  private async serve(
    req: IncomingMessage,
    clusterId: string,
    kind: 'status' | 'heartbeat',
    receivedAt: number,
  ): Promise<Answer> {
    const limit = kind === 'status' ? STATUS_REPORT_BODY_LIMIT_BYTES : HEARTBEAT_BODY_LIMIT_BYTES;
    const raw = await readBody(req, limit);
    await this.gate.authenticate(
      clusterId,
      req.headers.authorization,
      req.socket.remoteAddress ?? 'unknown',
    );
    if (kind === 'heartbeat') {
      const beat = await this.heartbeatOf(raw, req.headers['content-type'], clusterId);
      if (!(await this.gate.heartbeat(clusterId, beat.digest, receivedAt))) {
        throw refusal(HttpStatus.CONFLICT, {
          error: 'Conflict',
          message: `digest ${beat.digest} is not the report last applied for cluster ${clusterId}: send the full report`,
        });
      }
      this.metrics.heartbeatsReceived.inc();
      return { status: HttpStatus.ACCEPTED, body: { accepted: true } };
    }
    await this.gate.limit(clusterId);
    const text = raw.toString('utf8');
    const body = parseJson(text, req.headers['content-type']);
    // What the route reads of it is its cluster and generation: the worker validates it again.
    const report = acceptsStatusReport(body)
      ? (body as StatusReport)
      : validate(StatusReport, body);
    // Refused here rather than accepted and then failing in the worker forever (see storable-text).
    // The body as sent: validation drops a `__proto__` key silently. Walked only when its text
    // could hold such a string at all (a sidecar's never does).
    const unstorable = mayHoldUnstorableText(text) ? findUnstorableText(body) : undefined;
    if (unstorable) {
      throw refusal(HttpStatus.BAD_REQUEST, {
        error: 'BadRequest',
        field: unstorable.path.join('.'),
        message: unstorable.reason,
      });
    }
    ownCluster(report.clusterId, clusterId);
    await this.gate.refuseUnknownGeneration(clusterId, report.observedGeneration);
    // The body as sent (what was validated above; the worker validates it again and keeps only
    // the report's fields, so an unknown key, `receivedAt` among them, never reaches the status).
    await this.queues.appendReport(raw, new Date(receivedAt).toISOString());
    this.metrics.reportsReceived.inc();
    return { status: HttpStatus.ACCEPTED, body: { accepted: true } };
  }

  /**
   * The heartbeat's budget is counted in its one Redis command with the digest check, so its body
   * is read first; a body that is not a heartbeat is still counted (and may be refused as over
   * the budget) before it is refused as malformed or as another cluster's, as any report is.
   */
  private async heartbeatOf(raw: Buffer, contentType: string | undefined, clusterId: string) {
    try {
      const beat = validate(Heartbeat, parseJson(raw.toString('utf8'), contentType));
      ownCluster(beat.clusterId, clusterId);
      return beat;
    } catch (malformed) {
      await this.gate.limit(clusterId);
      throw malformed;
    }
  }
}

/**
 * The path's cluster id as PostgreSQL writes a uuid (lower case), however the client spelled it:
 * the one key of the credentials cache, its invalidation, the rate limit and the report, so a
 * change of case neither escapes a rotation nor opens a fresh rate-limit bucket. A segment that is
 * not valid percent-encoding stays as sent and fails authentication (401); it must never throw in
 * the server's request listener, where nothing would catch it.
 */
function canonicalClusterId(segment: string): string {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    return segment;
  }
}

function ownCluster(reported: string, path: string): void {
  if (reported !== path) {
    throw refusal(HttpStatus.FORBIDDEN, {
      error: 'Forbidden',
      message: 'a sidecar reports only for its own cluster',
    });
  }
}

function validate<T>(schema: ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw refusal(HttpStatus.BAD_REQUEST, {
    error: 'BadRequest',
    field: issue?.path.join('.'),
    message: issue?.message,
  });
}

/** As Express' JSON parser did: a body that is not declared JSON is no body at all. */
function parseJson(text: string, contentType: string | undefined): unknown {
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType ?? '')) return {};
  if (text.length === 0) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw refusal(HttpStatus.BAD_REQUEST, {
      error: 'BadRequest',
      message: `the body is not JSON: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
}

/** The body's bytes, or 413 as soon as it declares or sends more than `limit`. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = (length: number) =>
    refusal(HttpStatus.PAYLOAD_TOO_LARGE, {
      statusCode: HttpStatus.PAYLOAD_TOO_LARGE,
      message: `request body of ${length} bytes is over the limit of ${limit}`,
    });
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    return Promise.reject(tooLarge(declared));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge(length));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function toAnswer(err: unknown): Answer {
  if (err instanceof HttpException) {
    const body = err.getResponse();
    return { status: err.getStatus(), body: typeof body === 'string' ? { message: body } : body };
  }
  // As Nest answers an unexpected error: no detail to the client.
  console.error('report route:', err);
  return {
    status: HttpStatus.INTERNAL_SERVER_ERROR,
    body: { statusCode: 500, message: 'Internal server error' },
  };
}

function send(res: ServerResponse, { status, body }: Answer): void {
  if (res.headersSent || res.destroyed) return;
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    // A refused body may still be arriving: do not read it just to keep the connection.
    ...(status === 413 ? { connection: 'close' } : {}),
  });
  res.end(json);
}
