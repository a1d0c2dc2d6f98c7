import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** Who the emulated issuer signs in next (it has no login form: the test decides). */
export interface OidcUser {
  sub: string;
  preferred_username?: string;
  groups?: string[];
}

/**
 * How the next ID token is spoiled, for the refusal tests. Each applies to one token (the next
 * one issued) and is then forgotten.
 */
export interface IdTokenFault {
  /** Seconds from now to `exp` (negative: already expired). Default: `idTokenLifetimeSeconds`. */
  expiresInSeconds?: number;
  audience?: string;
  issuer?: string;
  nonce?: string;
  /** Signed with a key the issuer does not publish, under the published key's `kid`. */
  signWithUnpublishedKey?: boolean;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string | undefined;
  user: OidcUser;
  used: boolean;
  expiresAt: number;
}

export interface OidcIssuerOptions {
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
  /** Default 300. */
  idTokenLifetimeSeconds?: number;
  /** Whether discovery advertises PKCE (S256); an issuer without it must be refused. */
  advertisePkce?: boolean;
}

/**
 * An OIDC issuer as the fleet meets one (Keycloak, or the provider an OpenShift cluster signs in
 * with): discovery, JWKS, an authorization endpoint that requires PKCE S256 and answers with a
 * code, and a token endpoint that checks the client, the redirect URI and the code verifier and
 * honours each code once (RFC 6749 §4.1.2, RFC 7636 §4.6). Keys rotate on demand. What a real
 * issuer refuses, this one refuses too.
 */
export class OidcIssuer {
  url = '';
  /** Every request's method and path, in order (what the API asked the issuer). */
  readonly requests: string[] = [];
  user: OidcUser = { sub: 'nobody' };
  private readonly server: Server;
  private keys: SigningKey[] = [];
  private readonly codes = new Map<string, IssuedCode>();
  private nextFault: IdTokenFault | null = null;

  private constructor(private readonly options: OidcIssuerOptions) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'server_error', error_description: String(err) }));
      });
    });
  }

  static async start(options: OidcIssuerOptions): Promise<OidcIssuer> {
    const issuer = new OidcIssuer(options);
    await issuer.rotateKeys({ keepPrevious: false });
    await new Promise<void>((resolve) => issuer.server.listen(0, '127.0.0.1', resolve));
    issuer.url = `http://127.0.0.1:${(issuer.server.address() as AddressInfo).port}/realms/fleet`;
    return issuer;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A new signing key, published first; the previous one stays published unless told not to. */
  async rotateKeys({ keepPrevious = true } = {}): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const kid = `key-${randomBytes(6).toString('hex')}`;
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
    this.keys = [{ kid, privateKey, publicJwk }, ...(keepPrevious ? this.keys : [])];
    return kid;
  }

  /** The next ID token is spoiled this way. */
  spoilNextIdToken(fault: IdTokenFault): void {
    this.nextFault = fault;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://issuer');
    this.requests.push(`${req.method} ${url.pathname}`);
    const path = url.pathname.replace(/^\/realms\/fleet/, '');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      return json(200, {
        issuer: this.url,
        authorization_endpoint: `${this.url}/protocol/openid-connect/auth`,
        token_endpoint: `${this.url}/protocol/openid-connect/token`,
        jwks_uri: `${this.url}/protocol/openid-connect/certs`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        ...(this.options.advertisePkce === false
          ? {}
          : { code_challenge_methods_supported: ['plain', 'S256'] }),
      });
    }
    if (req.method === 'GET' && path === '/protocol/openid-connect/certs') {
      return json(200, { keys: this.keys.map((k) => k.publicJwk) });
    }
    if (req.method === 'GET' && path === '/protocol/openid-connect/auth') {
      return this.authorize(url.searchParams, res, json);
    }
    if (req.method === 'POST' && path === '/protocol/openid-connect/token') {
      return this.token(req, json);
    }
    json(404, { error: 'not_found' });
  }

  private authorize(
    params: URLSearchParams,
    res: ServerResponse,
    json: (status: number, body: unknown) => void,
  ): void {
    // Errors before the redirect URI is known valid are shown, never redirected (RFC 6749 §4.1.2.1).
    if (params.get('client_id') !== this.options.clientId)
      return json(400, { error: 'invalid_client' });
    if (params.get('redirect_uri') !== this.options.redirectUri)
      return json(400, { error: 'invalid_request', error_description: 'redirect_uri' });
    const back = new URL(this.options.redirectUri);
    const state = params.get('state');
    if (state) back.searchParams.set('state', state);
    const refuse = (error: string, description: string) => {
      back.searchParams.set('error', error);
      back.searchParams.set('error_description', description);
      res.writeHead(302, { location: back.toString() });
      res.end();
    };
    if (params.get('response_type') !== 'code')
      return refuse('unsupported_response_type', 'only code');
    if (!(params.get('scope') ?? '').split(' ').includes('openid'))
      return refuse('invalid_scope', 'openid is required');
    const challenge = params.get('code_challenge');
    if (!challenge || params.get('code_challenge_method') !== 'S256')
      return refuse('invalid_request', 'PKCE with code_challenge_method S256 is required');
    const code = randomBytes(24).toString('base64url');
    this.codes.set(code, {
      clientId: this.options.clientId,
      redirectUri: this.options.redirectUri,
      challenge,
      nonce: params.get('nonce') ?? undefined,
      user: this.user,
      used: false,
      expiresAt: Date.now() + 60_000,
    });
    back.searchParams.set('code', code);
    res.writeHead(302, { location: back.toString() });
    res.end();
  }

  private async token(
    req: IncomingMessage,
    json: (status: number, body: unknown) => void,
  ): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    if (!this.clientAuthenticated(req, form)) return json(401, { error: 'invalid_client' });
    if (form.get('grant_type') !== 'authorization_code')
      return json(400, { error: 'unsupported_grant_type' });
    const issued = this.codes.get(form.get('code') ?? '');
    if (!issued || issued.expiresAt < Date.now())
      return json(400, { error: 'invalid_grant', error_description: 'unknown or expired code' });
    if (issued.used)
      return json(400, { error: 'invalid_grant', error_description: 'code already used' });
    issued.used = true;
    if (form.get('redirect_uri') !== issued.redirectUri)
      return json(400, { error: 'invalid_grant', error_description: 'redirect_uri mismatch' });
    const verifier = form.get('code_verifier');
    if (!verifier)
      return json(400, { error: 'invalid_grant', error_description: 'code_verifier missing' });
    if (createHash('sha256').update(verifier).digest('base64url') !== issued.challenge)
      return json(400, {
        error: 'invalid_grant',
        error_description: 'code_verifier does not match the code_challenge',
      });
    json(200, {
      access_token: randomBytes(24).toString('base64url'),
      token_type: 'Bearer',
      expires_in: this.options.idTokenLifetimeSeconds ?? 300,
      id_token: await this.idToken(issued),
    });
  }

  private clientAuthenticated(req: IncomingMessage, form: URLSearchParams): boolean {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    if (basic) {
      const [user, pass] = Buffer.from(basic, 'base64').toString('utf8').split(':');
      id = decodeURIComponent(user ?? '');
      secret = decodeURIComponent(pass ?? '');
    }
    if (id !== this.options.clientId) return false;
    return this.options.clientSecret === undefined || secret === this.options.clientSecret;
  }

  private async idToken(issued: IssuedCode): Promise<string> {
    const fault = this.nextFault ?? {};
    this.nextFault = null;
    const now = Math.floor(Date.now() / 1000);
    const published = this.keys[0]!;
    const key = fault.signWithUnpublishedKey
      ? (await generateKeyPair('RS256')).privateKey
      : published.privateKey;
    const { sub, ...claims } = issued.user;
    return new SignJWT({ ...claims, nonce: fault.nonce ?? issued.nonce })
      .setProtectedHeader({ alg: 'RS256', kid: published.kid, typ: 'JWT' })
      .setIssuer(fault.issuer ?? this.url)
      .setAudience(fault.audience ?? issued.clientId)
      .setSubject(sub)
      .setIssuedAt(now)
      .setExpirationTime(
        now + (fault.expiresInSeconds ?? this.options.idTokenLifetimeSeconds ?? 300),
      )
      .sign(key);
  }
}
