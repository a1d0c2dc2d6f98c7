import { Inject, Injectable } from '@nestjs/common';
import type { Prisma } from '@fleet/database';
import { parseLabelSelector, unstorableTextReason } from '@fleet/contracts';
import { createHash, randomBytes } from 'node:crypto';
import {
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { z } from 'zod';
import { hashSecret } from '../auth/api-tokens.service.js';
import { OIDC_SESSION_PREFIX, type Principal } from '../auth/principal.js';
import { AuditService } from '../audit/audit.service.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import { oidcSettings, roleForGroups, type OidcSettings } from './oidc-settings.js';

/** A sign-in refused, with the reason the person (or the test) is shown. */
export class OidcLoginError extends Error {
  override readonly name = 'OidcLoginError';
}

/** A started sign-in waits this long for the provider's answer. */
export const LOGIN_TTL_SECONDS = 600;
/** The discovery document is read again after this long. */
const DISCOVERY_MAX_AGE_MS = 3_600_000;
/**
 * After a failed read, sign-ins are refused with the same error this long before the next try:
 * unauthenticated callers cannot make the API hammer a provider that is down.
 */
const DISCOVERY_RETRY_MS = 5_000;
/** Every call to the provider is bounded: sign-in never hangs the API. */
const CALL_TIMEOUT_MS = 5_000;
/** Signatures accepted on ID tokens: asymmetric only (never `none`, never the client secret). */
const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

const discoverySchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  jwks_uri: z.url(),
  code_challenge_methods_supported: z.array(z.string()).optional(),
  id_token_signing_alg_values_supported: z.array(z.string()).optional(),
});
type Discovery = z.infer<typeof discoverySchema>;

const tokenResponseSchema = z.object({ id_token: z.string().min(1) });
const tokenErrorSchema = z.object({
  error: z.string(),
  error_description: z.string().optional(),
});

/** What the browser keeps of a started sign-in until the provider sends the person back. */
const pendingLoginSchema = z.object({
  state: z.string().min(1),
  nonce: z.string().min(1),
  verifier: z.string().min(43).max(128),
  startedAt: z.number(),
  cli: z.object({ callback: z.string(), state: z.string() }).optional(),
});
type PendingLogin = z.infer<typeof pendingLoginSchema>;

/** Where `kfleet login --oidc` waits for the session: a loopback listener (RFC 8252 §7.3). */
export interface CliTarget {
  callback: string;
  state: string;
}

const CLI_CALLBACK = /^http:\/\/(127\.0\.0\.1|\[::1\]):\d{1,5}\/[A-Za-z0-9/_-]*$/;
const CLI_STATE = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * A `kfleet login --oidc` target, checked: only a listener on the browser's machine's loopback
 * (an IP literal: `localhost` can be resolved elsewhere, RFC 8252 §8.3) may get a session this
 * way, so a link naming another host cannot hand a session to it.
 */
export function cliTarget(
  callback: string | undefined,
  state: string | undefined,
): CliTarget | undefined {
  if (callback === undefined && state === undefined) return undefined;
  if (!callback || !CLI_CALLBACK.test(callback))
    throw new OidcLoginError(
      'cli_callback: must be an http:// URL on 127.0.0.1 or [::1] with a port (kfleet login --oidc sets it)',
    );
  if (!state || !CLI_STATE.test(state))
    throw new OidcLoginError('cli_state: must be 16-128 URL-safe characters');
  return { callback, state };
}

/** The kfleet listener a started sign-in reports to, if `kfleet login --oidc` started it. */
export const cliTargetOf = (browserCookie: string | undefined): CliTarget | undefined =>
  pendingOf(browserCookie)?.cli;

function pendingOf(cookie: string | undefined): PendingLogin | null {
  if (!cookie) return null;
  try {
    const parsed = pendingLoginSchema.safeParse(
      JSON.parse(Buffer.from(cookie, 'base64url').toString('utf8')),
    );
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export interface StartedLogin {
  /** For the browser's HttpOnly cookie. */
  browserCookie: string;
  authorizationUrl: string;
}

export interface Session {
  secret: string;
  name: string;
  expiresAt: Date;
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');
/**
 * Sign-in with an OIDC issuer: authorization code with PKCE (S256), state, nonce and verifier kept
 * by the browser that started it, the ID token verified with `jose` against the issuer's published keys. A person
 * signed in gets a session: an API token whose expiry is the ID token's, so the session ends
 * when the provider's token does and everything that checks tokens (HTTP, sockets, rollouts)
 * treats it like any other token.
 */
@Injectable()
export class OidcLoginService {
  readonly settings: OidcSettings | null;
  private discovery: { document: Discovery; at: number } | null = null;
  private discoveryFailure: { error: OidcLoginError; at: number } | null = null;
  private jwks: { uri: string; getKey: JWTVerifyGetKey } | null = null;

  constructor(
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
  ) {
    this.settings = oidcSettings(config);
  }

  private get enabled(): OidcSettings {
    if (!this.settings) throw new OidcLoginError('OIDC sign-in is not configured on this fleet');
    return this.settings;
  }

  /**
   * A new sign-in: where to send the person, and what the browser keeps meanwhile (in an
   * HttpOnly cookie): the state, the nonce and the PKCE verifier. Nothing is stored on the fleet's
   * side, so starting sign-ins costs an unauthenticated caller no memory of the fleet's, and
   * sign-in works while Redis is away. The cookie holds nothing its browser does not see anyway
   * (state and nonce travel in the authorization URL); the verifier is what keeps a code stolen
   * on its way back (logs, Referer) useless to anyone else.
   */
  async start(cli?: CliTarget): Promise<StartedLogin> {
    const settings = this.enabled;
    const discovery = await this.discover();
    const pending: PendingLogin = {
      state: base64url(randomBytes(32)),
      nonce: base64url(randomBytes(32)),
      verifier: base64url(randomBytes(48)),
      startedAt: Date.now(),
      ...(cli ? { cli } : {}),
    };
    const url = new URL(discovery.authorization_endpoint);
    url.search = new URLSearchParams({
      ...Object.fromEntries(url.searchParams),
      response_type: 'code',
      client_id: settings.clientId,
      redirect_uri: settings.redirectUrl,
      scope: settings.scopes,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: base64url(createHash('sha256').update(pending.verifier).digest()),
      code_challenge_method: 'S256',
    }).toString();
    return {
      browserCookie: Buffer.from(JSON.stringify(pending)).toString('base64url'),
      authorizationUrl: url.toString(),
    };
  }

  /**
   * The provider sent the person back with `code` for `state`; `browserCookie` is what `start`
   * gave the browser that began this sign-in. A code delivered to another browser is refused
   * here; a code used twice by the issuer (RFC 6749 §4.1.2: one use), a code exchanged without
   * its verifier by PKCE.
   */
  async complete(input: {
    state: string | undefined;
    code: string | undefined;
    browserCookie: string | undefined;
  }): Promise<Session> {
    const settings = this.enabled;
    if (!input.state || !input.code)
      throw new OidcLoginError('the provider sent no code and state back; sign in again');
    const pending = pendingOf(input.browserCookie);
    if (!pending || pending.state !== input.state)
      throw new OidcLoginError(
        'this sign-in was not started by this browser (state does not match its cookie); sign in again',
      );
    if (Date.now() - pending.startedAt > LOGIN_TTL_SECONDS * 1000)
      throw new OidcLoginError('this sign-in is older than 10 minutes; sign in again');
    const discovery = await this.discover();
    const idToken = await this.exchange(settings, discovery, input.code, pending.verifier);
    const claims = await this.verifyIdToken(settings, discovery, idToken, pending.nonce);
    return this.openSession(settings, claims);
  }

  private async discover(): Promise<Discovery> {
    if (this.discovery && Date.now() - this.discovery.at < DISCOVERY_MAX_AGE_MS)
      return this.discovery.document;
    if (this.discoveryFailure && Date.now() - this.discoveryFailure.at < DISCOVERY_RETRY_MS)
      throw this.discoveryFailure.error;
    try {
      const document = await this.readDiscovery();
      this.discoveryFailure = null;
      return document;
    } catch (err) {
      if (err instanceof OidcLoginError) this.discoveryFailure = { error: err, at: Date.now() };
      throw err;
    }
  }

  private async readDiscovery(): Promise<Discovery> {
    const settings = this.enabled;
    const url = `${settings.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let body: unknown;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      body = await res.json();
    } catch (err) {
      throw new OidcLoginError(
        `the identity provider's discovery document (${url}) cannot be read: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const parsed = discoverySchema.safeParse(body);
    if (!parsed.success)
      throw new OidcLoginError(
        `the identity provider's discovery document is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    const document = parsed.data;
    // OIDC Discovery §4.3: the document must name exactly the issuer it was fetched for.
    if (document.issuer !== settings.issuer)
      throw new OidcLoginError(
        `the discovery document names issuer "${document.issuer}", not the configured OIDC_ISSUER_URL "${settings.issuer}"`,
      );
    if (!document.code_challenge_methods_supported?.includes('S256'))
      throw new OidcLoginError(
        'the identity provider does not offer PKCE with S256 (code_challenge_methods_supported); the fleet signs in only with PKCE',
      );
    this.discovery = { document, at: Date.now() };
    if (this.jwks?.uri !== document.jwks_uri) {
      // jose re-reads the key set when a token names a key it does not hold (key rotation), at
      // most once per cooldown, and at the latest when its cache ages out.
      this.jwks = {
        uri: document.jwks_uri,
        getKey: createRemoteJWKSet(new URL(document.jwks_uri), {
          cooldownDuration: settings.jwksCooldownMs,
          cacheMaxAge: 600_000,
          timeoutDuration: CALL_TIMEOUT_MS,
        }),
      };
    }
    return document;
  }

  private async exchange(
    settings: OidcSettings,
    discovery: Discovery,
    code: string,
    verifier: string,
  ): Promise<string> {
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: settings.redirectUrl,
      code_verifier: verifier,
      client_id: settings.clientId,
    });
    if (settings.clientSecret) {
      // RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
      const user = `${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
    }
    let res: Response;
    let body: unknown;
    try {
      res = await fetch(discovery.token_endpoint, {
        method: 'POST',
        headers,
        body: form,
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      body = await res.json().catch(() => undefined);
    } catch (err) {
      throw new OidcLoginError(
        `the identity provider's token endpoint cannot be reached: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (!res.ok) {
      const refusal = tokenErrorSchema.safeParse(body);
      throw new OidcLoginError(
        refusal.success
          ? `the identity provider refused the code: ${refusal.data.error}${refusal.data.error_description ? ` (${refusal.data.error_description})` : ''}`
          : `the identity provider's token endpoint answered HTTP ${res.status}`,
      );
    }
    const tokens = tokenResponseSchema.safeParse(body);
    if (!tokens.success)
      throw new OidcLoginError('the identity provider answered without an ID token (id_token)');
    return tokens.data.id_token;
  }

  private async verifyIdToken(
    settings: OidcSettings,
    discovery: Discovery,
    idToken: string,
    nonce: string,
  ): Promise<JWTPayload> {
    const offered = discovery.id_token_signing_alg_values_supported ?? ['RS256'];
    const algorithms = ASYMMETRIC_ALGORITHMS.filter((a) => offered.includes(a));
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.jwks!.getKey, {
        issuer: settings.issuer,
        audience: settings.clientId,
        algorithms,
        clockTolerance: settings.clockToleranceSeconds,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (err) {
      throw new OidcLoginError(`the ID token is refused: ${idTokenProblem(err)}`);
    }
    if (payload.nonce !== nonce)
      throw new OidcLoginError(
        'the ID token is refused: its nonce is not the one this sign-in sent (a replayed or injected token)',
      );
    // OIDC Core §3.1.3.7: with several audiences, the token must have been issued to us.
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== settings.clientId)
      throw new OidcLoginError(
        `the ID token is refused: it has several audiences and azp "${String(payload.azp)}" is not this client`,
      );
    return payload;
  }

  private async openSession(settings: OidcSettings, claims: JWTPayload): Promise<Session> {
    const username = stringClaim(claims[settings.usernameClaim]) ?? claims.sub!;
    const groups = groupsOf(claims[settings.groupsClaim]);
    const rule = roleForGroups(settings.groupRoles, groups);
    if (!rule)
      throw new OidcLoginError(
        `${username} is in no group that is given a role on this fleet (the "${settings.groupsClaim}" claim lists ${groups.length ? groups.map((g) => `"${g}"`).join(', ') : 'none'})`,
      );
    // The provider's expiry, within the fleet's own bound on a session.
    const expiresAt = new Date(
      Math.min(claims.exp! * 1000, Date.now() + settings.maxSessionSeconds * 1000),
    );
    if (expiresAt.getTime() <= Date.now())
      throw new OidcLoginError('the ID token is refused: it has already expired');
    const name = sessionName(username);
    // Claims are the provider's, not validated GraphQL input: PostgreSQL would refuse them later
    // with a generic error instead of telling the person why.
    for (const [claim, value] of [
      [settings.usernameClaim, username],
      ['sub', claims.sub ?? ''],
    ] as const) {
      const reason = unstorableTextReason(value);
      if (reason) throw new OidcLoginError(`the ID token's "${claim}" claim ${reason}`);
    }
    const secret = `kf_${randomBytes(24).toString('base64url')}`;
    await this.prisma.client.$transaction(async (tx: Prisma.TransactionClient) => {
      const session = await tx.apiToken.create({
        data: {
          name,
          tokenHash: hashSecret(secret),
          role: rule.role,
          labelSelector: rule.labelSelector,
          expiresAt,
          createdBy: `oidc (${settings.providerName})`.slice(0, 100),
        },
      });
      const principal: Principal = {
        tokenId: session.id,
        name,
        role: rule.role,
        scope: rule.labelSelector ? parseLabelSelector(rule.labelSelector) : null,
        labelSelector: rule.labelSelector,
        expiresAt,
      };
      await this.audit.record(tx, principal, 'oidcSignIn', null, null, {
        id: session.id,
        subject: claims.sub,
        group: rule.group,
        role: rule.role,
        labelSelector: rule.labelSelector,
        expiresAt: expiresAt.toISOString(),
      });
    });
    return { secret, name, expiresAt };
  }
}

const stringClaim = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

/** Providers send groups as a list, some as one string; anything else is no groups. */
function groupsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  return [];
}

/** jose's refusal, said in words a person signing in (or reading the log) can act on. */
function idTokenProblem(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired)
    return `it expired (exp ${String(err.payload.exp)}, now ${Math.floor(Date.now() / 1000)})`;
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'aud')
      return `its audience ${JSON.stringify(err.payload.aud)} is not this fleet's client (OIDC_CLIENT_ID)`;
    if (err.claim === 'iss')
      return `its issuer "${String(err.payload.iss)}" is not the configured OIDC_ISSUER_URL`;
    return `claim ${err.claim}: ${err.reason}`;
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed)
    return "its signature does not verify with the provider's published key";
  if (err instanceof joseErrors.JWKSNoMatchingKey)
    return 'it is signed with a key the provider does not publish (jwks_uri)';
  if (err instanceof joseErrors.JOSEAlgNotAllowed)
    return 'it is signed with an algorithm the fleet does not accept (asymmetric ones the provider advertises only)';
  if (err instanceof joseErrors.JOSEError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The session's token name: the prefix and the username, cut to the column's 100 characters by
 * code point, so a character outside the BMP is never split into an unpaired surrogate.
 */
export function sessionName(username: string): string {
  return Array.from(`${OIDC_SESSION_PREFIX}${username}`).slice(0, 100).join('');
}
