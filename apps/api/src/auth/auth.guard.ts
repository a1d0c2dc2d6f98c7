import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import { GraphQLError } from 'graphql';
import { ApiTokensService } from './api-tokens.service.js';
import { hasRole, type Principal, type Role } from './principal.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { RateLimiterService, RateLimiterUnavailable } from './rate-limiter.service.js';
import { UnauthenticatedLimiter } from './unauthenticated-limiter.service.js';
import { PUBLIC_ENDPOINT, REQUIRED_ROLE } from './roles.decorator.js';

/** What the guard keeps on the request (HTTP) or the graphql-ws connection context. */
export interface AuthCarrier {
  authorization?: string;
  /** The peer's address (the per-address bound on unauthenticated requests). */
  address?: string;
  principal?: Principal | null;
  rateCounted?: boolean;
}

const fail = (code: string, message: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code, ...extensions } });

/**
 * Global and deny-by-default: a resolver or route without @RequireRole (or @Public) is refused,
 * so a new field cannot ship unguarded by accident (test/api/authorization walks the schema).
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: ApiTokensService,
    private readonly rateLimiter: RateLimiterService,
    private readonly unauthenticated: UnauthenticatedLimiter,
    private readonly metrics: MetricsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ENDPOINT, targets)) return true;
    const required = this.reflector.getAllAndOverride<Role | undefined>(REQUIRED_ROLE, targets);
    if (!required) throw fail('FORBIDDEN', 'this field has no access policy');

    const carrier = carrierOf(context);
    if (carrier.principal === undefined) {
      const secret = bearerSecret(carrier.authorization);
      const address = carrier.address ?? 'unknown';
      const known = secret !== undefined && this.tokens.isKnown(secret);
      const wait = known ? 0 : this.unauthenticated.retryAfter(address);
      if (wait > 0) {
        this.metrics.rateLimited.inc({ limit: 'unauthenticated' });
        throw fail(
          'RATE_LIMITED',
          `too many requests without a valid API token from ${address}; retry later`,
          { retryAfterSeconds: wait },
        );
      }
      carrier.principal = secret ? await this.tokens.verify(secret) : null;
      if (!carrier.principal) this.unauthenticated.refused(address);
    }
    const principal = carrier.principal;
    if (!principal)
      throw fail(
        'UNAUTHENTICATED',
        'a valid, unexpired API token is required (Authorization: Bearer …)',
      );
    if (!carrier.rateCounted) {
      carrier.rateCounted = true;
      const retryAfter = await this.countRequest(context, principal.tokenId);
      if (retryAfter > 0) {
        this.metrics.rateLimited.inc({ limit: 'token' });
        throw fail('RATE_LIMITED', `rate limit exceeded for token ${principal.name}`, {
          retryAfterSeconds: retryAfter,
        });
      }
    }
    if (!hasRole(principal, required)) {
      throw fail(
        'FORBIDDEN',
        `requires role ${required}; token ${principal.name} has ${principal.role}`,
      );
    }
    return true;
  }

  /**
   * Redis away must not hang the API (nor refuse PostgreSQL reads): reads are served uncounted,
   * anything that changes state is refused with SERVICE_UNAVAILABLE, at once.
   */
  private async countRequest(context: ExecutionContext, tokenId: string): Promise<number> {
    try {
      return await this.rateLimiter.hit(tokenId);
    } catch (err) {
      if (!(err instanceof RateLimiterUnavailable)) throw err;
      if (isRead(context)) {
        this.metrics.rateLimiterUnavailable.inc({ outcome: 'served' });
        return 0;
      }
      this.metrics.rateLimiterUnavailable.inc({ outcome: 'refused' });
      throw fail(
        'SERVICE_UNAVAILABLE',
        'the fleet cannot take changes right now (its Redis does not answer); retry later',
        { http: { status: 503 } },
      );
    }
  }
}

function isRead(context: ExecutionContext): boolean {
  if (context.getType<string>() === 'graphql') {
    const kind = GqlExecutionContext.create(context).getInfo<{
      operation: { operation: string };
    }>().operation.operation;
    return kind === 'query' || kind === 'subscription';
  }
  const method = context.switchToHttp().getRequest<{ method?: string }>().method;
  return method === 'GET' || method === 'HEAD';
}

type HttpRequest = {
  headers: Record<string, string | undefined>;
  socket: { remoteAddress?: string };
} & AuthCarrier;

function httpCarrier(req: HttpRequest): AuthCarrier {
  req.authorization ??= req.headers.authorization;
  req.address ??= req.socket.remoteAddress;
  return req;
}

/** The secret of an `Authorization: Bearer <secret>` header, or undefined. */
export const bearerSecret = (authorization: string | undefined): string | undefined =>
  /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];

function carrierOf(context: ExecutionContext): AuthCarrier {
  if (context.getType<string>() === 'graphql') {
    const ctx = GqlExecutionContext.create(context).getContext<{
      req?: HttpRequest;
      connection?: AuthCarrier;
    }>();
    if (ctx.connection) return ctx.connection;
    return httpCarrier(ctx.req!);
  }
  return httpCarrier(context.switchToHttp().getRequest<HttpRequest>());
}

/** The caller, as the guard resolved it. */
export function principalOf(context: { req?: AuthCarrier; connection?: AuthCarrier }): Principal {
  const principal = (context.connection ?? context.req)?.principal;
  if (!principal) throw fail('UNAUTHENTICATED', 'no authenticated caller');
  return principal;
}
