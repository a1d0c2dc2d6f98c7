import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Public } from '../auth/roles.decorator.js';
import { UnauthenticatedLimiter } from '../auth/unauthenticated-limiter.service.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  cliTarget,
  cliTargetOf,
  LOGIN_TTL_SECONDS,
  OidcLoginError,
  OidcLoginService,
  type CliTarget,
} from './oidc-login.service.js';

/** The cookie binding a sign-in to the browser that started it (login CSRF, RFC 6749 §10.12). */
export const LOGIN_COOKIE = 'kfleet_oidc_login';
const COOKIE_PATH = '/auth/oidc';

/** Where the console picks up the outcome: in the fragment, which no server or log ever sees. */
export const SESSION_FRAGMENT = 'session';
export const ERROR_FRAGMENT = 'oidc-error';

type Response = ServerResponse & { req?: IncomingMessage };

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

/**
 * The browser side of OIDC sign-in. Public: the person has no token yet; what protects these
 * routes is the state bound to the browser's cookie, PKCE and the ID token's checks.
 */
@Controller('auth/oidc')
@Public()
export class OidcController {
  private readonly secureCookie: boolean;

  constructor(
    private readonly login: OidcLoginService,
    private readonly unauthenticated: UnauthenticatedLimiter,
    private readonly metrics: MetricsService,
    @Inject(API_CONFIG) config: ApiConfig,
  ) {
    this.secureCookie = config.FLEET_PUBLIC_URL.startsWith('https:');
  }

  /** What the console's sign-in page offers. */
  @Get()
  provider(): { enabled: boolean; providerName: string | null; loginPath: string | null } {
    const settings = this.login.settings;
    return {
      enabled: settings !== null,
      providerName: settings?.providerName ?? null,
      loginPath: settings ? `${COOKIE_PATH}/login` : null,
    };
  }

  /** `cli_callback` and `cli_state`: `kfleet login --oidc` waits for the session there. */
  @Get('login')
  async start(
    @Req() req: IncomingMessage,
    @Res() res: Response,
    @Query() query: Record<string, string | undefined>,
  ): Promise<void> {
    const address = req.socket.remoteAddress ?? 'unknown';
    const wait = this.unauthenticated.retryAfter(address);
    if (wait > 0)
      return this.fail(res, `too many failed sign-ins from ${address}; retry in ${wait} s`);
    try {
      const started = await this.login.start(cliTarget(query.cli_callback, query.cli_state));
      this.setLoginCookie(res, started.browserCookie, LOGIN_TTL_SECONDS);
      res.writeHead(302, { location: started.authorizationUrl, 'cache-control': 'no-store' });
      res.end();
    } catch (err) {
      this.fail(res, messageOf(err));
    }
  }

  @Get('callback')
  async callback(
    @Req() req: IncomingMessage,
    @Res() res: Response,
    @Query() query: Record<string, string | undefined>,
  ): Promise<void> {
    const address = req.socket.remoteAddress ?? 'unknown';
    const wait = this.unauthenticated.retryAfter(address);
    if (wait > 0)
      return this.fail(res, `too many failed sign-ins from ${address}; retry in ${wait} s`);
    // One sign-in per cookie, whatever its outcome.
    this.setLoginCookie(res, '', 0);
    const browserCookie = cookie(req, LOGIN_COOKIE);
    const cli = cliTargetOf(browserCookie);
    if (query.error) {
      this.unauthenticated.refused(address);
      this.metrics.oidcSignIns.inc({ outcome: 'refused' });
      return this.fail(
        res,
        `the identity provider refused the sign-in: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}`,
        cli,
      );
    }
    try {
      const session = await this.login.complete({
        state: query.state,
        code: query.code,
        browserCookie,
      });
      this.metrics.oidcSignIns.inc({ outcome: 'session' });
      res.writeHead(302, {
        location: cli
          ? cliLocation(cli, 'session', session.secret)
          : `/#${SESSION_FRAGMENT}=${encodeURIComponent(session.secret)}`,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      res.end();
    } catch (err) {
      const refused = err instanceof OidcLoginError;
      if (refused) this.unauthenticated.refused(address);
      this.metrics.oidcSignIns.inc({ outcome: refused ? 'refused' : 'failed' });
      this.fail(res, messageOf(err), cli);
    }
  }

  private setLoginCookie(res: Response, value: string, maxAge: number): void {
    // Lax: the provider's redirect back is a top-level GET from its origin, which Strict drops.
    res.setHeader(
      'set-cookie',
      `${LOGIN_COOKIE}=${encodeURIComponent(value)}; Path=${COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${this.secureCookie ? '; Secure' : ''}`,
    );
  }

  /** Back to the console's sign-in page (or the waiting kfleet), which shows why. */
  private fail(res: Response, message: string, cli?: CliTarget): void {
    res.writeHead(302, {
      location: cli
        ? cliLocation(cli, 'error', message)
        : `/#${ERROR_FRAGMENT}=${encodeURIComponent(message)}`,
      'cache-control': 'no-store',
    });
    res.end();
  }
}

/**
 * The loopback listener gets the outcome in its query (the fragment never reaches a server) with
 * the state kfleet chose, so it takes nothing it did not ask for.
 */
function cliLocation(cli: CliTarget, key: 'session' | 'error', value: string): string {
  const url = new URL(cli.callback);
  url.searchParams.set('cli_state', cli.state);
  url.searchParams.set(key, value);
  return url.toString();
}

/** Sign-in refusals are said as they are; anything else is not shown to an unauthenticated caller. */
function messageOf(err: unknown): string {
  if (err instanceof OidcLoginError) return err.message;
  console.error(
    JSON.stringify({ msg: 'oidc sign-in failed', error: err instanceof Error ? err.stack : err }),
  );
  return 'the sign-in failed on the fleet side; try again or ask an administrator to read the API log';
}
