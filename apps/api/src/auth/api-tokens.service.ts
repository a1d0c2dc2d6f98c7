import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  LabelSelectorError,
  labelSelectorWithin,
  parseLabelSelector,
  type LabelRequirement,
} from '@fleet/contracts';
import type { ApiToken } from '@fleet/database';
import { createHash, randomBytes } from 'node:crypto';
import { AuditService } from '../audit/audit.service.js';
import { forbiddenError, notFoundError, userInputError } from '../common/errors.js';
import { isUuid } from '../common/global-id.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { hasRole, isOidcSession, type Principal, type Role } from './principal.js';

export const hashSecret = (secret: string): string =>
  createHash('sha256').update(secret).digest('hex');

/** How long a verified token is trusted without asking PostgreSQL again (revocation latency). */
const CACHE_MS = 5_000;
/**
 * Valid tokens remembered at once (least recently used forgotten first). Misses are never
 * cached: a bogus secret costs a look-up, which the per-address limit bounds instead.
 */
const CACHE_ENTRIES = 10_000;
/** lastUsedAt is a hint, not a log: written at most this often per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class ApiTokensService implements OnModuleInit {
  /** Valid principals by secret hash, in least-recently-used order; `until` may have passed. */
  private readonly cache = new Map<string, { principal: Principal; until: number }>();
  private readonly lastUsedWritten = new Map<string, number>();

  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * A first admin token from the environment, so a new fleet can be administered at all. It
   * expires FLEET_BOOTSTRAP_TOKEN_TTL_HOURS after its creation; restarts do not renew it.
   */
  async onModuleInit(): Promise<void> {
    const secret = this.config.FLEET_BOOTSTRAP_TOKEN;
    if (!secret) return;
    // INSERT … ON CONFLICT DO NOTHING: replicas starting together all succeed, where Prisma's
    // upsert (a read, then an insert) let the second one fail on the unique token hash.
    await this.prisma.client.apiToken.createMany({
      data: {
        name: 'bootstrap-admin',
        tokenHash: hashSecret(secret),
        role: 'ADMIN',
        createdBy: 'FLEET_BOOTSTRAP_TOKEN',
        expiresAt: new Date(Date.now() + this.config.FLEET_BOOTSTRAP_TOKEN_TTL_HOURS * 3_600_000),
      },
      skipDuplicates: true,
    });
  }

  /**
   * A token no stronger than its creator: its role at most the creator's, its scope within the
   * creator's (an unscoped token only from an unscoped one). Recorded in the audit trail.
   */
  async create(
    input: { name: string; role: Role; labelSelector?: string | null; expiresAt?: Date | null },
    creator: Principal,
  ): Promise<{ token: ApiToken; secret: string }> {
    if (!/^[a-z0-9]([-a-z0-9.]{0,98}[a-z0-9])?$/.test(input.name)) {
      throw userInputError('input.name', 'must be 1-100 lower-case letters, digits, "-" or "."');
    }
    let scope: LabelRequirement[] | null = null;
    if (input.labelSelector != null) {
      // A blank selector would be stored as a scope that limits nothing.
      if (input.labelSelector.trim() === '')
        throw userInputError(
          'input.labelSelector',
          'must not be blank; omit it (null) for a token without a scope',
        );
      try {
        scope = parseLabelSelector(input.labelSelector);
      } catch (err) {
        if (err instanceof LabelSelectorError)
          throw userInputError('input.labelSelector', err.message);
        throw err;
      }
    }
    if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
      throw userInputError('input.expiresAt', 'must be in the future');
    }
    if (!hasRole(creator, input.role))
      throw forbiddenError(
        `token ${creator.name} (${creator.role}) may not create a ${input.role} token`,
      );
    if (!this.manages(creator, scope))
      throw forbiddenError(
        `token ${creator.name} is scoped to "${creator.labelSelector}"; input.labelSelector must repeat or narrow every requirement of it`,
      );
    const secret = `kf_${randomBytes(24).toString('base64url')}`;
    const token = await this.prisma.client.$transaction(async (tx) => {
      const created = await tx.apiToken.create({
        data: {
          name: input.name,
          tokenHash: hashSecret(secret),
          role: input.role,
          labelSelector: input.labelSelector ?? null,
          expiresAt: input.expiresAt ?? null,
          createdBy: creator.name,
        },
      });
      await this.audit.record(tx, creator, 'createApiToken', null, null, auditView(created));
      return created;
    });
    return { token, secret };
  }

  /** Revokes a token the caller manages (see `manages`); others are NOT_FOUND, as if absent. */
  async revoke(id: string, caller: Principal): Promise<ApiToken> {
    const revoked = isUuid(id)
      ? await this.prisma.client.$transaction(async (tx) => {
          const rows = await tx.$queryRaw<ApiToken[]>`
            SELECT * FROM "ApiToken" WHERE id = ${id}::uuid AND "revokedAt" IS NULL FOR UPDATE`;
          const target = rows[0];
          if (!target || !this.manages(caller, scopeOf(target))) return null;
          const updated = await tx.apiToken.update({
            where: { id },
            data: { revokedAt: new Date() },
          });
          await this.audit.record(
            tx,
            caller,
            'revokeApiToken',
            null,
            auditView(target),
            auditView(updated),
          );
          return updated;
        })
      : null;
    if (!revoked) throw notFoundError('active API token', id);
    this.forget(id);
    return revoked;
  }

  /** Drops the cached entry of one token (the cache is keyed by secret hash, not id). */
  private forget(tokenId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.principal.tokenId === tokenId) this.cache.delete(hash);
    }
    this.metrics.tokenCacheEntries.set(this.cache.size);
  }

  /**
   * Ends the caller's own session when it is an OIDC one (the console's "Sign out"); an API
   * token is left alone, as automation may share it. Whether a session ended.
   */
  async endSession(caller: Principal): Promise<boolean> {
    if (!isOidcSession(caller)) return false;
    const ended = await this.prisma.client.$transaction(async (tx) => {
      const { count } = await tx.apiToken.updateMany({
        where: { id: caller.tokenId, revokedAt: null },
        data: { revokedAt: new Date() },
      });
      if (count) await this.audit.record(tx, caller, 'signOut', null, null, { id: caller.tokenId });
      return count > 0;
    });
    // Only this session's entry: any VIEWER signing out must not send every caller back to
    // PostgreSQL.
    this.forget(caller.tokenId);
    return ended;
  }

  /** The tokens the caller manages: all for an unscoped ADMIN, those within its scope otherwise. */
  async list(caller: Principal): Promise<ApiToken[]> {
    const tokens = await this.prisma.client.apiToken.findMany({ orderBy: { createdAt: 'asc' } });
    return tokens.filter((t) => this.manages(caller, scopeOf(t)));
  }

  /** Whether `caller` may create, see or revoke a token of this scope (null: unscoped). */
  private manages(caller: Principal, scope: LabelRequirement[] | null): boolean {
    if (!caller.scope) return true;
    return scope !== null && labelSelectorWithin(scope, caller.scope);
  }

  /** Whether this secret was valid when last looked up (its cache entry may be due a re-check). */
  isKnown(secret: string): boolean {
    return this.cache.has(hashSecret(secret));
  }

  /** The principal behind a bearer secret, or null when unknown, revoked or expired. */
  async verify(secret: string): Promise<Principal | null> {
    const hash = hashSecret(secret);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) {
      this.cache.delete(hash);
      this.cache.set(hash, cached);
      return cached.principal;
    }
    const token = await this.prisma.client.apiToken.findUnique({ where: { tokenHash: hash } });
    const valid =
      token && !token.revokedAt && (!token.expiresAt || token.expiresAt.getTime() > now);
    const principal: Principal | null = valid
      ? {
          tokenId: token.id,
          name: token.name,
          role: token.role,
          scope: token.labelSelector ? parseLabelSelector(token.labelSelector) : null,
          labelSelector: token.labelSelector,
          expiresAt: token.expiresAt,
        }
      : null;
    this.metrics.tokenLookups.inc({ outcome: principal ? 'valid' : 'invalid' });
    this.cache.delete(hash);
    if (principal) {
      // Never trust a token beyond its own expiry.
      const until = Math.min(now + CACHE_MS, token?.expiresAt?.getTime() ?? Infinity);
      this.cache.set(hash, { principal, until });
      if (this.cache.size > CACHE_ENTRIES) {
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
      this.touch(principal.tokenId, now);
    }
    this.metrics.tokenCacheEntries.set(this.cache.size);
    return principal;
  }

  private touch(tokenId: string, now: number): void {
    if ((this.lastUsedWritten.get(tokenId) ?? 0) + LAST_USED_RESOLUTION_MS > now) return;
    this.lastUsedWritten.set(tokenId, now);
    void this.prisma.client.apiToken
      .update({ where: { id: tokenId }, data: { lastUsedAt: new Date(now) } })
      .catch(() => undefined);
  }
}

const scopeOf = (token: ApiToken): LabelRequirement[] | null =>
  token.labelSelector ? parseLabelSelector(token.labelSelector) : null;

/** What the audit trail keeps of a token: never its hash. */
const auditView = (token: ApiToken) => ({
  id: token.id,
  name: token.name,
  role: token.role,
  labelSelector: token.labelSelector,
  expiresAt: token.expiresAt?.toISOString() ?? null,
  revokedAt: token.revokedAt?.toISOString() ?? null,
});
