import { HttpException, HttpStatus, Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import DataLoader from 'dataloader';
import { timingSafeEqual } from 'node:crypto';
import { RateLimiterUnavailable } from '../auth/rate-limiter.service.js';
import { UnauthenticatedLimiter } from '../auth/unauthenticated-limiter.service.js';
import { hashToken } from '../clusters/cluster-access.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { ReportBudget } from './report-budget.js';

interface ReportCredentials {
  reportTokenHash: string;
  previousReportTokenHash: string | null;
  previousCredentialsExpireAt: Date | null;
  desired: { generation: number } | null;
}

const matches = (presented: Buffer, hash: string | null) =>
  hash !== null && timingSafeEqual(presented, Buffer.from(hash, 'hex'));

interface CachedCredentials {
  row: ReportCredentials;
  until: number;
  /**
   * The token last accepted as the cluster's current one, as sent: the next requests compare
   * with it in constant time rather than hash what they present (a SHA-256 a heartbeat was the
   * largest part of authenticating one, issue 48 target 2). Dropped with the entry, on a
   * rotation or deregistration. A previous token (a rotation's grace) is never remembered: its
   * expiry is checked on each request.
   */
  current?: Buffer;
}

/** Constant time for tokens of the same length; their length is not a secret. */
const sameToken = (presented: string, remembered: Buffer) => {
  const bytes = Buffer.from(presented);
  return bytes.length === remembered.length && timingSafeEqual(bytes, remembered);
};

/**
 * What every sidecar request (status report, heartbeat, plan answer) passes before it is looked
 * at: the cluster's own token (cached briefly), the per-cluster rate limit, and for reports the
 * generation check. Shared by the Nest controller (plan answers) and the lean report route
 * (`report-route.ts`), so both refuse the same way with the same error shapes. Failures are
 * HttpExceptions whose response object is the body either answers with.
 */
/**
 * How long one read of a cluster's credentials is trusted: between half and all of the cache
 * time, drawn per read. A fixed lifetime made every credential read in the same minute (the
 * fleet's first reports after an API start) expire in the same minute again, and each expiry
 * is a read on the request's path: in the 100,000-cluster soak the accepted rate fell from
 * 3,333/s to ~1,100/s for the last 110 s of each run, just as the entries read while priming
 * expired (issue 48, target 3). Never longer than REPORT_CREDENTIALS_CACHE_SECONDS, so the bound
 * on how long a lost `credentials-changed` publish keeps an ended token working is unchanged.
 */
export function credentialsLifetimeMs(cacheMs: number, random: () => number = Math.random): number {
  return Math.round(cacheMs * (0.5 + 0.5 * random()));
}

@Injectable()
export class ReportGate implements OnModuleInit {
  constructor(
    private readonly events: FleetEventsService,
    private readonly prisma: PrismaService,
    private readonly metrics: MetricsService,
    private readonly budget: ReportBudget,
    private readonly unauthenticated: UnauthenticatedLimiter,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  private readonly credentials = new Map<string, CachedCredentials>();
  /** How many credentials-changed events this replica has seen (any cluster). */
  private invalidations = 0;

  async onModuleInit(): Promise<void> {
    await this.events.local.subscribe('credentials-changed', (event: { clusterId: string }) => {
      this.credentials.delete(event.clusterId);
      this.invalidations++;
    });
    // Events published while this replica was not subscribed are lost: what they would have
    // dropped cannot be known, so everything is read again.
    this.events.onGap(() => {
      this.credentials.clear();
      this.invalidations++;
    });
  }

  /**
   * How long a cluster's report credentials are trusted from memory. Every sidecar reports every
   * 30 s; at 100,000 clusters a 60 s cache was 1,667 credential reads a second, the API's largest
   * cost (issue 19). A rotation or deregistration drops the entry on every replica at once
   * (`credentials-changed`) and a gap in the subscription drops them all, so this only bounds how
   * long a lost publish could keep an ended token working.
   */
  private get cacheMs(): number {
    return this.config.REPORT_CREDENTIALS_CACHE_SECONDS * 1000;
  }

  /**
   * Credentials read for every cluster whose reports arrive in the same tick with one query: at
   * fleet scale most reports are a cache miss (a cluster reports every 30 s), and one statement
   * for many clusters costs about what one costs for one.
   */
  private readonly credentialsLoader = new DataLoader<string, ReportCredentials | null>(
    async (ids) => {
      // One statement (a join), not Prisma's query per relation: a miss is the common case.
      const rows = await this.prisma.client.$queryRaw<
        (Omit<ReportCredentials, 'desired'> & { id: string; generation: number | null })[]
      >`SELECT c.id::text AS id, c."reportTokenHash", c."previousReportTokenHash",
               c."previousCredentialsExpireAt", d.generation
          FROM "Cluster" c LEFT JOIN "DesiredState" d ON d."clusterId" = c.id
         WHERE c.id = ANY(${[...ids]}::uuid[])`;
      const byId = new Map(
        rows.map(({ id, generation, ...row }) => [
          id,
          { ...row, desired: generation === null ? null : { generation } },
        ]),
      );
      return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
    },
    { cache: false, maxBatchSize: 500 },
  );

  /** Per cluster: a leaked or runaway report token cannot flood the fleet. */
  async limit(clusterId: string): Promise<void> {
    const wait = await this.budget
      .hit(clusterId)
      .catch((err: unknown) => this.refuseUnavailable(err));
    if (wait > 0) this.refuseOverBudget(clusterId, wait);
  }

  /**
   * A heartbeat counted against the cluster's budget and checked against its applied digest in
   * one step; true when taken, false when the digest is not the one last applied.
   */
  async heartbeat(clusterId: string, digest: string, receivedAtMs: number): Promise<boolean> {
    const outcome = await this.budget
      .heartbeat(clusterId, digest, receivedAtMs)
      .catch((err: unknown) => this.refuseUnavailable(err));
    if (outcome.kind === 'over-budget') this.refuseOverBudget(clusterId, outcome.retryAfterSeconds);
    return outcome.kind === 'accepted';
  }

  private refuseUnavailable(err: unknown): never {
    if (!(err instanceof RateLimiterUnavailable)) throw err;
    // A report is a write onto Redis itself: the sidecar keeps it and sends it again.
    this.metrics.rateLimiterUnavailable.inc({ outcome: 'refused' });
    throw new HttpException(
      { error: 'ServiceUnavailable', message: 'the fleet cannot take reports right now' },
      HttpStatus.SERVICE_UNAVAILABLE,
    );
  }

  private refuseOverBudget(clusterId: string, retryAfterSeconds: number): never {
    this.metrics.rateLimited.inc({ limit: 'cluster' });
    throw new HttpException(
      {
        error: 'TooManyRequests',
        message: `more than ${this.config.REPORTS_PER_CLUSTER_PER_MINUTE} reports a minute for cluster ${clusterId}`,
        retryAfterSeconds,
      },
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }

  /**
   * A sidecar can only have applied a generation the fleet asked for: a higher one (a bug or a
   * compromised node) would freeze status ordering and stop later orders. The cached desired
   * generation is read again before refusing, since a change may have just bumped it.
   */
  async refuseUnknownGeneration(clusterId: string, observed: number): Promise<void> {
    const cached = this.credentials.get(clusterId.toLowerCase());
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

  /** The cluster's own report token (or its previous one during a rotation's grace). */
  async authenticate(
    pathClusterId: string,
    authorization: string | undefined,
    address: string,
  ): Promise<void> {
    // PostgreSQL's spelling is the cache's one key, the key credentials-changed deletes: an id
    // sent in upper case must not keep a revoked token cached under a key nothing invalidates.
    const clusterId = pathClusterId.toLowerCase();
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
    // Every sidecar reports every heartbeat: remember credentials briefly, and look again before
    // refusing, so a rotation takes effect at once and a miss never locks a sidecar out.
    const cached = this.credentials.get(clusterId);
    if (cached && cached.until > Date.now() && cached.current && sameToken(token, cached.current))
      return;
    const presented = Buffer.from(hashToken(token), 'hex');
    const isCurrent = (c: ReportCredentials) => matches(presented, c.reportTokenHash);
    const isPrevious = (c: ReportCredentials) =>
      (c.previousCredentialsExpireAt?.getTime() ?? 0) > Date.now() &&
      matches(presented, c.previousReportTokenHash);
    const accepts = (c: ReportCredentials) => isCurrent(c) || isPrevious(c);
    if (cached && cached.until > Date.now()) {
      if (isCurrent(cached.row)) {
        cached.current = Buffer.from(token);
        return;
      }
      if (isPrevious(cached.row)) return;
    }
    // A known cluster's credentials are read again once they are due (a rotation takes effect
    // within REPORT_CREDENTIALS_CACHE_SECONDS whoever shares the address); any other look-up only within
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
    // A rotation or deregistration that lands while this look-up is in flight may have been read
    // before it committed: such a row answers this request but is not remembered.
    const invalidationsBefore = this.invalidations;
    const row = await this.credentialsLoader.load(clusterId);
    if (!row) {
      this.credentials.delete(clusterId);
      this.unauthenticated.refused(address);
      throw unauthorized();
    }
    if (this.credentials.size > 1_000_000) this.credentials.clear();
    if (this.invalidations === invalidationsBefore)
      this.credentials.set(clusterId, {
        row,
        until: Date.now() + credentialsLifetimeMs(this.cacheMs),
        ...(isCurrent(row) ? { current: Buffer.from(token) } : {}),
      });
    if (!accepts(row)) {
      this.unauthenticated.refused(address);
      throw unauthorized();
    }
  }
}
