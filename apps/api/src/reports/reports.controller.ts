import {
  Body,
  Controller,
  Headers,
  HttpCode,
  HttpException,
  HttpStatus,
  Inject,
  Ip,
  Param,
  Post,
} from '@nestjs/common';
import { findUnstorableText, PlanReport, StatusReport } from '@fleet/contracts';
import DataLoader from 'dataloader';
import { timingSafeEqual } from 'node:crypto';
import { RateLimiterService, RateLimiterUnavailable } from '../auth/rate-limiter.service.js';
import { Public } from '../auth/roles.decorator.js';
import { UnauthenticatedLimiter } from '../auth/unauthenticated-limiter.service.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { hashToken } from '../clusters/cluster-access.js';
import { PrismaService } from '../database/prisma.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { QueuesService } from '../queues/queues.service.js';
import { PlansService } from '../plans/plans.service.js';

/**
 * Where sidecars report. A report is accepted only with the cluster's own token and only for that
 * cluster; it is queued for the ingest workers, which apply it only if it moves status forward.
 */
interface ReportCredentials {
  reportTokenHash: string;
  previousReportTokenHash: string | null;
  previousCredentialsExpireAt: Date | null;
  desired: { generation: number } | null;
}

const CREDENTIALS_CACHE_MS = 5_000;

const matches = (presented: Buffer, hash: string | null) =>
  hash !== null && timingSafeEqual(presented, Buffer.from(hash, 'hex'));

/** Authenticated by the cluster's own report token, not an API token. */
@Public()
@Controller('v1/clusters/:clusterId')
export class ReportsController {
  constructor(
    private readonly prisma: PrismaService,
    private readonly queues: QueuesService,
    private readonly metrics: MetricsService,
    private readonly rateLimiter: RateLimiterService,
    private readonly unauthenticated: UnauthenticatedLimiter,
    private readonly plans: PlansService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  private readonly credentials = new Map<string, { row: ReportCredentials; until: number }>();

  /**
   * Credentials read for every cluster whose reports arrive in the same tick with one query: at
   * fleet scale most reports are a cache miss (a cluster reports every 30 s), and one statement
   * for many clusters costs about what one costs for one.
   */
  private readonly credentialsLoader = new DataLoader<string, ReportCredentials | null>(
    async (ids) => {
      const rows = await this.prisma.client.cluster.findMany({
        where: { id: { in: [...ids] } },
        select: {
          id: true,
          reportTokenHash: true,
          previousReportTokenHash: true,
          previousCredentialsExpireAt: true,
          desired: { select: { generation: true } },
        },
      });
      const byId = new Map(rows.map(({ id, ...row }) => [id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    },
    { cache: false, maxBatchSize: 500 },
  );

  /**
   * A plan's result (issue 21 §1), beside the status report: the same cluster token, the same
   * per-cluster rate limit; recorded only for a PENDING entry of this cluster in that plan.
   */
  @Post('plans/:planId')
  @HttpCode(HttpStatus.ACCEPTED)
  async planReport(
    @Param('clusterId') clusterId: string,
    @Param('planId') planId: string,
    @Headers('authorization') authorization: string | undefined,
    @Ip() address: string | undefined,
    @Body() body: unknown,
  ): Promise<{ accepted: true }> {
    await this.authenticate(clusterId, authorization, address ?? 'unknown');
    await this.limit(clusterId);
    const parsed = PlanReport.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new HttpException(
        { error: 'BadRequest', field: issue?.path.join('.'), message: issue?.message },
        HttpStatus.BAD_REQUEST,
      );
    }
    const unstorable = findUnstorableText(body);
    if (unstorable) {
      throw new HttpException(
        { error: 'BadRequest', field: unstorable.path.join('.'), message: unstorable.reason },
        HttpStatus.BAD_REQUEST,
      );
    }
    if (parsed.data.clusterId !== clusterId || parsed.data.planId !== planId) {
      throw new HttpException(
        { error: 'Forbidden', message: 'a sidecar reports only for its own cluster' },
        HttpStatus.FORBIDDEN,
      );
    }
    if ((await this.plans.recordReport(parsed.data)) === 'unknown') {
      throw new HttpException(
        {
          error: 'Conflict',
          message: `plan ${planId} awaits no answer from cluster ${clusterId} at generation ${parsed.data.generation}`,
        },
        HttpStatus.CONFLICT,
      );
    }
    return { accepted: true };
  }

  /** Per cluster: a leaked or runaway report token cannot flood the fleet. */
  private async limit(clusterId: string): Promise<void> {
    const wait = await this.rateLimiter
      .hit(`report:${clusterId}`, this.config.REPORTS_PER_CLUSTER_PER_MINUTE)
      .catch((err: unknown) => {
        if (!(err instanceof RateLimiterUnavailable)) throw err;
        this.metrics.rateLimiterUnavailable.inc({ outcome: 'refused' });
        throw new HttpException(
          { error: 'ServiceUnavailable', message: 'the fleet cannot take reports right now' },
          HttpStatus.SERVICE_UNAVAILABLE,
        );
      });
    if (wait > 0) {
      this.metrics.rateLimited.inc({ limit: 'cluster' });
      throw new HttpException(
        {
          error: 'TooManyRequests',
          message: `more than ${this.config.REPORTS_PER_CLUSTER_PER_MINUTE} reports a minute for cluster ${clusterId}`,
          retryAfterSeconds: wait,
        },
        HttpStatus.TOO_MANY_REQUESTS,
      );
    }
  }

  @Post('status')
  @HttpCode(HttpStatus.ACCEPTED)
  async report(
    @Param('clusterId') clusterId: string,
    @Headers('authorization') authorization: string | undefined,
    @Ip() address: string | undefined,
    @Body() body: unknown,
  ): Promise<{ accepted: true }> {
    // The fleet's clock orders reports; the sidecar's reportedAt is information only.
    const receivedAt = new Date().toISOString();
    await this.authenticate(clusterId, authorization, address ?? 'unknown');
    // Per cluster: a leaked or runaway report token cannot flood the ingest queue.
    const wait = await this.rateLimiter
      .hit(`report:${clusterId}`, this.config.REPORTS_PER_CLUSTER_PER_MINUTE)
      .catch((err: unknown) => {
        if (!(err instanceof RateLimiterUnavailable)) throw err;
        // A report is a write onto Redis itself: the sidecar keeps it and sends it again.
        this.metrics.rateLimiterUnavailable.inc({ outcome: 'refused' });
        throw new HttpException(
          { error: 'ServiceUnavailable', message: 'the fleet cannot take reports right now' },
          HttpStatus.SERVICE_UNAVAILABLE,
        );
      });
    if (wait > 0) {
      this.metrics.rateLimited.inc({ limit: 'cluster' });
      throw new HttpException(
        {
          error: 'TooManyRequests',
          message: `more than ${this.config.REPORTS_PER_CLUSTER_PER_MINUTE} reports a minute for cluster ${clusterId}`,
          retryAfterSeconds: wait,
        },
        HttpStatus.TOO_MANY_REQUESTS,
      );
    }
    const parsed = StatusReport.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new HttpException(
        { error: 'BadRequest', field: issue?.path.join('.'), message: issue?.message },
        HttpStatus.BAD_REQUEST,
      );
    }
    // Refused here rather than accepted and then failing in the worker forever (see storable-text).
    // The body as sent: validation drops a `__proto__` key silently.
    const unstorable = findUnstorableText(body);
    if (unstorable) {
      throw new HttpException(
        { error: 'BadRequest', field: unstorable.path.join('.'), message: unstorable.reason },
        HttpStatus.BAD_REQUEST,
      );
    }
    if (parsed.data.clusterId !== clusterId) {
      throw new HttpException(
        { error: 'Forbidden', message: 'a sidecar reports only for its own cluster' },
        HttpStatus.FORBIDDEN,
      );
    }
    await this.refuseUnknownGeneration(clusterId, parsed.data.observedGeneration);
    await this.queues.ingestStatus({ ...parsed.data, receivedAt });
    this.metrics.reportsReceived.inc();
    return { accepted: true };
  }

  /**
   * A sidecar can only have applied a generation the fleet asked for: a higher one (a bug or a
   * compromised node) would freeze status ordering and stop later orders. The cached desired
   * generation is read again before refusing, since a change may have just bumped it.
   */
  private async refuseUnknownGeneration(clusterId: string, observed: number): Promise<void> {
    const cached = this.credentials.get(clusterId);
    if (observed <= (cached?.row.desired?.generation ?? 0)) return;
    const desired = await this.prisma.client.desiredState.findUnique({
      where: { clusterId },
      select: { generation: true },
    });
    if (cached) cached.row.desired = desired;
    if (desired && observed <= desired.generation) return;
    throw new HttpException(
      {
        error: 'BadRequest',
        field: 'observedGeneration',
        message: `observedGeneration ${observed} is above the desired generation ${desired?.generation ?? 0} of cluster ${clusterId}`,
      },
      HttpStatus.BAD_REQUEST,
    );
  }

  private async authenticate(
    clusterId: string,
    authorization: string | undefined,
    address: string,
  ): Promise<void> {
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    const unauthorized = () =>
      new HttpException(
        { error: 'Unauthorized', message: 'a valid cluster token is required' },
        HttpStatus.UNAUTHORIZED,
      );
    // Exactly PostgreSQL's uuid text form: one malformed id must not fail a whole batched look-up.
    if (!token || !/^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i.test(clusterId)) {
      this.unauthenticated.refused(address);
      throw unauthorized();
    }
    const presented = Buffer.from(hashToken(token), 'hex');
    const accepts = (c: ReportCredentials) =>
      matches(presented, c.reportTokenHash) ||
      ((c.previousCredentialsExpireAt?.getTime() ?? 0) > Date.now() &&
        matches(presented, c.previousReportTokenHash));
    // Every sidecar reports every heartbeat: remember credentials briefly, and look again before
    // refusing, so a rotation takes effect at once and a miss never locks a sidecar out.
    const cached = this.credentials.get(clusterId);
    if (cached && cached.until > Date.now() && accepts(cached.row)) return;
    // A known cluster's credentials are read again once they are due (a rotation takes effect
    // within CREDENTIALS_CACHE_MS whoever shares the address); any other look-up only within
    // the address's budget of refusals, so bogus tokens and cluster ids cannot turn into
    // unbounded database look-ups.
    const due = cached !== undefined && cached.until <= Date.now();
    const wait = due ? 0 : this.unauthenticated.retryAfter(address);
    if (wait > 0) {
      this.metrics.rateLimited.inc({ limit: 'unauthenticated' });
      throw new HttpException(
        {
          error: 'TooManyRequests',
          message: `too many requests without a valid cluster token from ${address}; retry later`,
          retryAfterSeconds: wait,
        },
        HttpStatus.TOO_MANY_REQUESTS,
      );
    }
    const row = await this.credentialsLoader.load(clusterId);
    if (!row) {
      this.credentials.delete(clusterId);
      this.unauthenticated.refused(address);
      throw unauthorized();
    }
    if (this.credentials.size > 100_000) this.credentials.clear();
    this.credentials.set(clusterId, { row, until: Date.now() + CREDENTIALS_CACHE_MS });
    if (!accepts(row)) {
      this.unauthenticated.refused(address);
      throw unauthorized();
    }
  }
}
