import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

import { CertificateAuthority } from '../kube-apiserver/certificates.js';

/**
 * An Azure Resource Manager emulator for the reads the fleet makes (subnets, user-assigned
 * identities, marketplace images, VMs with their instance view, NICs), speaking ARM's REST
 * protocol over HTTPS so that the real `@azure/arm-*` clients talk to it: bearer tokens,
 * `api-version` required, ARM's error bodies (`{error: {code, message}}`) and case-insensitive
 * names, as ARM has them. It is also the Microsoft Entra ID of its tenant: the OAuth 2.0 client
 * credentials grant at `/<tenant>/oauth2/v2.0/token` (AZURE_AUTHORITY_HOST), for the world's
 * service principals, with a client secret or a federated token as the client assertion.
 */

export interface ArmSubnet {
  resourceGroup: string;
  virtualNetwork: string;
  name: string;
  addressPrefix: string;
  /** The name of the NAT gateway attached to it, in its resource group. */
  natGateway?: string;
  /** The name of the route table associated with it, in its resource group. */
  routeTable?: string;
  /**
   * ARM's `defaultOutboundAccess`: false makes it a private subnet (no implicit egress for VMs in
   * no backend pool and without a public IP); absent, ARM omits it and Azure's default outbound
   * access applies (subnets of virtual networks created before its retirement).
   */
  defaultOutboundAccess?: boolean;
}

/** A route table: user-defined routes, e.g. 0.0.0.0/0 to a firewall (VirtualAppliance). */
export interface ArmRouteTable {
  resourceGroup: string;
  name: string;
  routes: {
    name: string;
    addressPrefix: string;
    nextHopType: 'VirtualAppliance' | 'VirtualNetworkGateway' | 'Internet' | 'VnetLocal' | 'None';
    nextHopIpAddress?: string;
  }[];
}

export interface ArmUserAssignedIdentity {
  resourceGroup: string;
  name: string;
  location: string;
  clientId: string;
  principalId: string;
}

export interface ArmMarketplaceImage {
  location: string;
  publisher: string;
  offer: string;
  sku: string;
  version: string;
  /** A purchase plan: the image cannot be deployed without accepting it. */
  plan?: { name: string; product: string; publisher: string };
  /** What ARM reports as `properties.architecture`; RHCOS's x64 when not said. */
  architecture?: 'x64' | 'Arm64';
  /** What ARM reports as `properties.hyperVGeneration`; V2 when not said. */
  hyperVGeneration?: 'V1' | 'V2';
}

/**
 * A VM size as the Resource SKUs API lists it (`resourceType: virtualMachines`), with the two
 * capabilities that decide which images it can boot.
 */
export interface ArmVmSize {
  name: string;
  locations: string[];
  /** The `HyperVGenerations` capability, e.g. `V1,V2`. */
  hyperVGenerations: ('V1' | 'V2')[];
  /** The `CpuArchitectureType` capability. */
  architecture: 'x64' | 'Arm64';
  vCPUs: number;
  memoryGB: number;
}

/** A VM as `virtualMachines.get` (with `$expand=instanceView`) returns it. */
export interface ArmVirtualMachine {
  resourceGroup: string;
  name: string;
  location: string;
  computerName: string;
  /** The instance view's power state: running, starting, stopped, deallocated, … */
  powerState: string;
  /** Names of its NICs, in the VM's resource group. */
  networkInterfaces: string[];
  tags?: Record<string, string>;
  /**
   * ARM's provisioningState; `Creating` while Compute builds it, when the instance view has no
   * PowerState status yet (Succeeded when not said).
   */
  provisioningState?: 'Creating' | 'Updating' | 'Succeeded' | 'Failed' | 'Deleting';
}

export interface ArmNetworkInterface {
  resourceGroup: string;
  name: string;
  privateIPAddresses: string[];
}

/**
 * Who may get a token from the emulator's Entra ID: with a client secret, or (workload identity)
 * a client assertion JWT matching its federated identity credential.
 */
export interface ArmServicePrincipal {
  clientId: string;
  /** Its object id in the tenant, as ARM's AuthorizationFailed names it; derived when not said. */
  objectId?: string;
  clientSecret?: string;
  /** Entra ID's federated identity credential: the assertion's iss, sub and one of aud. */
  federatedCredential?: { issuer: string; subject: string; audiences: string[] };
}

/**
 * An Azure role assignment: the principal may read (Reader) or read and write (Contributor,
 * Owner) every resource under `scope` (a subscription, resource group or resource ID).
 */
export interface ArmRoleAssignment {
  clientId: string;
  scope: string;
  role: 'Reader' | 'Contributor' | 'Owner';
}

export interface ArmWorld {
  subscriptionID: string;
  /** The Entra ID tenant the emulator issues tokens for. */
  tenantID: string;
  /** The tenant the subscription trusts, when another than `tenantID` (a misconfiguration). */
  subscriptionTenantID?: string;
  servicePrincipals?: ArmServicePrincipal[];
  /**
   * Role assignments. Without any (undefined), every principal of the tenant may read everything,
   * as most tests need; with a list, ARM answers 403 AuthorizationFailed outside them.
   */
  roleAssignments?: ArmRoleAssignment[];
  virtualMachines?: ArmVirtualMachine[];
  networkInterfaces?: ArmNetworkInterface[];
  resourceGroups: string[];
  virtualNetworks: { resourceGroup: string; name: string }[];
  subnets: ArmSubnet[];
  routeTables?: ArmRouteTable[];
  userAssignedIdentities: ArmUserAssignedIdentity[];
  images: ArmMarketplaceImage[];
  /** The Resource SKUs of type virtualMachines. */
  vmSizes?: ArmVmSize[];
}

export interface ArmRequestRecord {
  method: string;
  path: string;
  apiVersion: string | null;
  status: number;
}

class ArmError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The api-versions ARM serves per resource type, as far as the emulator answers them: those of
 * the SDKs the fleet uses (@azure/arm-compute 24.1: 2026-03-01, Resource SKUs 2021-07-01;
 * @azure/arm-network 36: 2025-05-01; @azure/arm-msi 2.2: 2024-11-30), those of the fork's Go SDK
 * modules at 8e5b2e51 (armcompute/v7 2025-04-01, armnetwork 2022-01-01, armnetwork/v6 2024-05-01,
 * armmsi 2024-11-30), and earlier stable ones. Any other: 400, as ARM answers an unknown version.
 */
const API_VERSIONS: Record<string, readonly string[]> = {
  'Microsoft.Compute/virtualMachines': [
    '2023-03-01',
    '2023-07-01',
    '2023-09-01',
    '2024-03-01',
    '2024-07-01',
    '2024-11-01',
    '2025-04-01',
    '2026-03-01',
  ],
  'Microsoft.Compute/locations/publishers/artifacttypes/offers/skus/versions': [
    '2023-03-01',
    '2023-07-01',
    '2023-09-01',
    '2024-03-01',
    '2024-07-01',
    '2024-11-01',
    '2025-04-01',
    '2026-03-01',
  ],
  'Microsoft.Compute/skus': ['2017-09-01', '2019-04-01', '2021-07-01'],
  'Microsoft.Network/virtualNetworks/subnets': [
    '2022-01-01',
    '2023-04-01',
    '2023-09-01',
    '2024-01-01',
    '2024-05-01',
    '2025-01-01',
    '2025-05-01',
  ],
  'Microsoft.Network/networkInterfaces': [
    '2022-01-01',
    '2023-04-01',
    '2023-09-01',
    '2024-01-01',
    '2024-05-01',
    '2025-01-01',
    '2025-05-01',
  ],
  'Microsoft.Network/routeTables': [
    '2022-01-01',
    '2023-04-01',
    '2023-09-01',
    '2024-01-01',
    '2024-05-01',
    '2025-01-01',
    '2025-05-01',
  ],
  'Microsoft.ManagedIdentity/userAssignedIdentities': ['2018-11-30', '2023-01-31', '2024-11-30'],
};

/** The resource type a request path addresses (API_VERSIONS' keys), or undefined. */
function resourceTypeOf(parts: string[]): string | undefined {
  const at = (i: number) => (parts[i] ?? '').toLowerCase();
  if (at(2) === 'providers' && at(3) === 'microsoft.compute') {
    if (at(4) === 'skus' && parts.length === 5) return 'Microsoft.Compute/skus';
    if (at(4) === 'locations' && at(6) === 'publishers')
      return 'Microsoft.Compute/locations/publishers/artifacttypes/offers/skus/versions';
  }
  if (at(2) !== 'resourcegroups' || at(4) !== 'providers') return undefined;
  const type = `${at(5)}/${at(6)}`;
  if (type === 'microsoft.compute/virtualmachines') return 'Microsoft.Compute/virtualMachines';
  if (type === 'microsoft.network/networkinterfaces') return 'Microsoft.Network/networkInterfaces';
  if (type === 'microsoft.network/routetables') return 'Microsoft.Network/routeTables';
  if (type === 'microsoft.managedidentity/userassignedidentities')
    return 'Microsoft.ManagedIdentity/userAssignedIdentities';
  if (type === 'microsoft.network/virtualnetworks' && at(8) === 'subnets')
    return 'Microsoft.Network/virtualNetworks/subnets';
  return undefined;
}

/** The claims the emulator puts in (and reads from) its access tokens, as Entra ID's v1 tokens. */
interface AccessTokenClaims {
  aud: string;
  iss: string;
  tid: string;
  appid: string;
  oid: string;
  iat: number;
  exp: number;
}

/** OpenID Connect scopes MSAL sends beside a resource's `/.default`. */
const OIDC_SCOPES = new Set(['openid', 'offline_access', 'profile']);

/** The principal credential() stands for: an implicit Owner of the subscription. */
const TEST_PRINCIPAL = 'arm-emulator-test-principal';

const decodePart = (part: string): unknown => {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
};

export class ArmEmulator {
  private readonly ca = new CertificateAuthority('arm-emulator-ca');
  /**
   * Also valid for Entra ID's public host, so that a process whose HTTPS proxy sends
   * login.microsoftonline.com here (MSAL's instance discovery for an authority it does not know,
   * as the fork's DefaultAzureCredential does for this emulator) is served too.
   */
  private readonly serving = this.ca.issueServing([
    '127.0.0.1',
    'localhost',
    'login.microsoftonline.com',
  ]);
  /** Signs the access tokens this Entra ID issues (HS256), so ARM can tell its own from forgeries. */
  private readonly signingKey = randomBytes(32);
  /** How many of the next ARM requests get 429, and the Retry-After they carry. */
  private throttled = { remaining: 0, retryAfterSeconds: 0 };
  private server?: Server;
  private readonly sockets = new Set<Duplex>();
  private baseUrl?: string;
  private currentExpand: string | null = null;
  private currentFilter: string | null = null;
  readonly requests: ArmRequestRecord[] = [];
  /** Every token request to the emulator's Entra ID, with its answer's status. */
  readonly tokenRequests: { clientId: string; status: number }[] = [];

  constructor(private world: ArmWorld) {}

  /** Replaces what ARM holds and forgets the requests seen so far. */
  seed(world: ArmWorld): void {
    this.world = structuredClone(world);
    this.requests.length = 0;
    this.tokenRequests.length = 0;
  }

  async start(): Promise<void> {
    const server = createServer(
      { cert: this.serving.certPem, key: this.serving.keyPem },
      (req, res) => this.onRequest(req, res),
    );
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }

  get url(): string {
    if (!this.baseUrl) throw new Error('ArmEmulator not started');
    return this.baseUrl;
  }

  get caPem(): string {
    return this.ca.certPem;
  }

  /**
   * A TokenCredential (what `@azure/identity` credentials are) holding a token this emulator
   * accepts: for ARM's audience, from the world's tenant, of a test principal that is Owner of
   * the subscription whatever the role assignments.
   */
  credential(): { getToken(): Promise<{ token: string; expiresOnTimestamp: number }> } {
    return {
      getToken: () => {
        const token = this.issueToken(TEST_PRINCIPAL, TEST_PRINCIPAL, this.url);
        return Promise.resolve({ token, expiresOnTimestamp: Date.now() + 3_600_000 });
      },
    };
  }

  /** The next `requests` ARM requests are answered 429 with `Retry-After: retryAfterSeconds`. */
  throttle(requests: number, retryAfterSeconds: number): void {
    this.throttled = { remaining: requests, retryAfterSeconds };
  }

  private sign(data: string): string {
    return createHmac('sha256', this.signingKey).update(data).digest('base64url');
  }

  /** An access token as Entra ID issues one: a JWT for `audience`, signed by this emulator. */
  private issueToken(appid: string, oid: string, audience: string): string {
    const now = Math.floor(Date.now() / 1000);
    const claims: AccessTokenClaims = {
      aud: audience,
      iss: `https://sts.windows.net/${this.world.tenantID}/`,
      tid: this.world.tenantID,
      appid,
      oid,
      iat: now,
      exp: now + 3600,
    };
    const head = `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${head}.${this.sign(head)}`;
  }

  /** The bearer token's claims, or the 401 ARM answers for it (checked in ARM's order). */
  private authenticate(authorization: string | undefined): AccessTokenClaims {
    const bearer = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    if (!bearer) {
      throw new ArmError(
        401,
        'AuthenticationFailed',
        "Authentication failed. The 'Authorization' header is missing.",
      );
    }
    const [header, payload, signature] = bearer.split('.');
    const expected = header && payload ? Buffer.from(this.sign(`${header}.${payload}`)) : undefined;
    const given = Buffer.from(signature ?? '');
    if (!expected || expected.length !== given.length || !timingSafeEqual(expected, given)) {
      throw new ArmError(401, 'InvalidAuthenticationToken', 'The access token is invalid.');
    }
    const claims = decodePart(payload!) as AccessTokenClaims;
    if (claims.exp * 1000 < Date.now()) {
      throw new ArmError(
        401,
        'ExpiredAuthenticationToken',
        'The access token expiry UTC time is earlier than current UTC time.',
      );
    }
    const audiences = [this.url, `${this.url}/`];
    if (!audiences.includes(claims.aud)) {
      throw new ArmError(
        401,
        'InvalidAuthenticationTokenAudience',
        `The access token has been obtained for wrong audience or resource '${claims.aud}'. It should exactly match with one of the allowed audiences '${audiences.join("','")}'.`,
      );
    }
    const tenant = this.world.subscriptionTenantID ?? this.world.tenantID;
    if (!same(claims.tid, tenant)) {
      throw new ArmError(
        401,
        'InvalidAuthenticationTokenTenant',
        `The access token is from the wrong issuer '${claims.iss}'. It must match the tenant 'https://sts.windows.net/${tenant}/' associated with this subscription. Please use the authority (URL) 'https://login.windows.net/${tenant}' to get the token.`,
      );
    }
    return claims;
  }

  /** 403 unless a role assignment over the path lets the token's principal do `action`. */
  private authorize(claims: AccessTokenClaims, path: string, action: string): void {
    const assignments = this.world.roleAssignments;
    if (assignments === undefined || claims.appid === TEST_PRINCIPAL) return;
    const write = !action.endsWith('/read');
    const allowed = assignments.some(
      (a) =>
        a.clientId === claims.appid &&
        (path.toLowerCase() === a.scope.toLowerCase() ||
          // Subscription-level reads (marketplace images, SKUs) need the subscription's scope.
          path.toLowerCase().startsWith(`${a.scope.toLowerCase()}/`)) &&
        (!write || a.role !== 'Reader'),
    );
    if (allowed) return;
    throw new ArmError(
      403,
      'AuthorizationFailed',
      `The client '${claims.appid}' with object id '${claims.oid}' does not have authorization to perform action '${action}' over scope '${path}' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
    );
  }

  /** A federated assertion as Entra ID checks it: a JWT with the credential's iss, sub and aud. */
  private assertionMatches(principal: ArmServicePrincipal, assertion: string | null): boolean {
    const credential = principal.federatedCredential;
    if (!credential || !assertion) return false;
    const parts = assertion.split('.');
    if (parts.length !== 3) return false;
    const claims = decodePart(parts[1]!) as
      { iss?: unknown; sub?: unknown; aud?: unknown; exp?: unknown } | undefined;
    if (!claims) return false;
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    return (
      claims.iss === credential.issuer &&
      claims.sub === credential.subject &&
      audiences.some((a) => typeof a === 'string' && credential.audiences.includes(a)) &&
      typeof claims.exp === 'number' &&
      claims.exp * 1000 > Date.now()
    );
  }

  /** Options every `@azure/arm-*` client takes to reach this emulator and trust its CA. */
  clientOptions(): {
    endpoint: string;
    credentialScopes: string[];
    credentials: { scopes: string[] };
    tlsOptions: { ca: string };
  } {
    const scopes = [`${this.url}/.default`];
    return {
      endpoint: this.url,
      credentialScopes: scopes,
      credentials: { scopes },
      tlsOptions: { ca: this.caPem },
    };
  }

  /** Adds a VM (and its NICs) as Karpenter's create would leave it. */
  addVirtualMachine(vm: ArmVirtualMachine, nics: ArmNetworkInterface[] = []): void {
    (this.world.virtualMachines ??= []).push(structuredClone(vm));
    (this.world.networkInterfaces ??= []).push(...structuredClone(nics));
  }

  /**
   * Entra ID's metadata, as MSAL reads it before a token request for an authority it does not
   * trust by name: instance discovery (`/common/discovery/instance`, answered for this host) and
   * the tenant's OpenID configuration, whose issuer is on the authority's own host.
   */
  private onDiscovery(url: URL, res: ServerResponse): boolean {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
      return true;
    };
    const host = new URL(this.url).host;
    if (url.pathname === '/common/discovery/instance') {
      const tenant = /\/\/[^/]+\/([^/]+)\//.exec(
        url.searchParams.get('authorization_endpoint') ?? '',
      )?.[1];
      return json(200, {
        'api-version': '1.1',
        tenant_discovery_endpoint: `${this.url}/${tenant ?? this.world.tenantID}/v2.0/.well-known/openid-configuration`,
        metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
      });
    }
    const config = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(url.pathname);
    if (!config) return false;
    const tenant = decodeURIComponent(config[1]!);
    if (!same(tenant, this.world.tenantID)) {
      return json(400, {
        error: 'invalid_tenant',
        error_description: `AADSTS90002: Tenant '${tenant}' not found.`,
      });
    }
    return json(200, {
      issuer: `${this.url}/${tenant}/v2.0`,
      token_endpoint: `${this.url}/${tenant}/oauth2/v2.0/token`,
      authorization_endpoint: `${this.url}/${tenant}/oauth2/v2.0/authorize`,
      jwks_uri: `${this.url}/${tenant}/discovery/v2.0/keys`,
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      tenant_region_scope: 'NA',
    });
  }

  /**
   * Azure Resource Graph's `POST /providers/Microsoft.ResourceGraph/resources`, for the one query
   * shape the fork sends (pkg/providers/instance/azureresourcegraphlist.go at 8e5b2e51):
   * `Resources | where type == "<t>" | where resourceGroup == "<rg>" | where tags has_cs "<k>"
   * | where not(tags has_cs "<k2>")`, answered from the world's VMs and NICs as objectArray; any
   * other query 400 BadRequest, as the emulator cannot run KQL.
   */
  private onResourceGraph(req: IncomingMessage, res: ServerResponse, url: URL): void {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const apiVersion = url.searchParams.get('api-version');
      let status = 200;
      let body: unknown;
      try {
        const claims = this.authenticate(req.headers.authorization);
        const versions = ['2021-03-01', '2022-10-01', '2024-04-01'];
        if (!apiVersion || !versions.includes(apiVersion)) {
          throw new ArmError(
            400,
            apiVersion ? 'NoRegisteredProviderFound' : 'MissingApiVersionParameter',
            `The api-version '${apiVersion ?? ''}' is not supported for type 'resources'. The supported api-versions are '${versions.join(', ')}'.`,
          );
        }
        const request = JSON.parse(raw || '{}') as { subscriptions?: string[]; query?: string };
        for (const sub of request.subscriptions ?? []) {
          this.authorize(claims, `/subscriptions/${sub}`, 'Microsoft.ResourceGraph/resources/read');
        }
        const match =
          /^Resources \| where type == "([^"]+)" \| where resourceGroup == "([^"]+)" \| where tags has_cs "([^"]+)"(?: \| where not\(tags has_cs "([^"]+)"\))?$/.exec(
            (request.query ?? '').trim(),
          );
        if (!match) {
          throw new ArmError(
            400,
            'BadRequest',
            `Query is invalid or not served here: ${request.query ?? ''}`,
          );
        }
        const [, type, group, has, hasNot] = match as unknown as [
          string,
          string,
          string,
          string,
          string?,
        ];
        const tagged = (tags: Record<string, string> | undefined) =>
          Object.keys(tags ?? {}).some((k) => k.includes(has)) &&
          !(hasNot && Object.keys(tags ?? {}).some((k) => k.includes(hasNot)));
        const sub = `/subscriptions/${this.world.subscriptionID}`;
        const data =
          type === 'microsoft.compute/virtualmachines'
            ? (this.world.virtualMachines ?? [])
                .filter((v) => same(v.resourceGroup, group) && tagged(v.tags))
                .map((v) => ({
                  id: `${sub}/resourceGroups/${v.resourceGroup}/providers/Microsoft.Compute/virtualMachines/${v.name}`,
                  name: v.name,
                  type,
                  location: v.location,
                  resourceGroup: v.resourceGroup.toLowerCase(),
                  tags: v.tags ?? {},
                  properties: { provisioningState: v.provisioningState ?? 'Succeeded' },
                }))
            : [];
        body = {
          totalRecords: data.length,
          count: data.length,
          resultTruncated: 'false',
          data,
          facets: [],
        };
      } catch (err) {
        if (!(err instanceof ArmError)) throw err;
        status = err.status;
        body = { error: { code: err.code, message: err.message } };
      }
      this.requests.push({ method: 'POST', path: url.pathname, apiVersion, status });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    });
  }

  /** The Entra ID token endpoint: `POST /<tenant>/oauth2/v2.0/token`, form-encoded. */
  private onTokenRequest(req: IncomingMessage, res: ServerResponse, tenant: string): void {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const form = new URLSearchParams(raw);
      const client = (this.world.servicePrincipals ?? []).find(
        (p) => p.clientId === form.get('client_id'),
      );
      const secretOk =
        client?.clientSecret !== undefined && form.get('client_secret') === client.clientSecret;
      const assertionOk =
        client !== undefined &&
        form.get('client_assertion_type') ===
          'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' &&
        this.assertionMatches(client, form.get('client_assertion'));
      // The v2.0 endpoint's scope is `<resource>/.default` (MSAL adds the OpenID Connect scopes
      // openid, offline_access, profile, which Entra ID ignores here): the token's audience is the
      // resource.
      const scopes = (form.get('scope') ?? '').split(' ').filter(Boolean);
      const resources = scopes.filter((x) => !OIDC_SCOPES.has(x));
      const scope = resources.length === 1 ? resources[0]! : resources.join(' ');
      let status = 200;
      let body: Record<string, unknown>;
      if (!same(tenant, this.world.tenantID)) {
        status = 400;
        body = {
          error: 'invalid_request',
          error_description: `AADSTS90002: Tenant '${tenant}' not found.`,
        };
      } else if (form.get('grant_type') !== 'client_credentials') {
        status = 400;
        body = { error: 'unsupported_grant_type', error_description: 'AADSTS70003' };
      } else if (!client || !(secretOk || assertionOk)) {
        status = 401;
        body = {
          error: 'invalid_client',
          error_description: form.get('client_assertion')
            ? `AADSTS700213: No matching federated identity record found for presented assertion of client '${form.get('client_id') ?? ''}'.`
            : `AADSTS7000215: Invalid client secret provided for '${form.get('client_id') ?? ''}'.`,
        };
      } else if (!scope.endsWith('/.default')) {
        status = 400;
        body = {
          error: 'invalid_scope',
          error_description: `AADSTS1002012: The provided value for scope ${scope} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
        };
      } else {
        const oid =
          client.objectId ??
          `00000000-0000-4000-8000-${client.clientId
            .replace(/[^0-9a-f]/gi, '')
            .padEnd(12, '0')
            .slice(0, 12)}`;
        body = {
          token_type: 'Bearer',
          expires_in: 3599,
          access_token: this.issueToken(client.clientId, oid, scope.slice(0, -'/.default'.length)),
        };
      }
      this.tokenRequests.push({ clientId: form.get('client_id') ?? '', status });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    });
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://arm.invalid');
    const tokenPath = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    if (req.method === 'POST' && tokenPath) {
      this.onTokenRequest(req, res, decodeURIComponent(tokenPath[1]!));
      return;
    }
    if (req.method === 'GET' && this.onDiscovery(url, res)) return;
    if (
      req.method === 'POST' &&
      same(url.pathname, '/providers/Microsoft.ResourceGraph/resources')
    ) {
      this.onResourceGraph(req, res, url);
      return;
    }
    const apiVersion = url.searchParams.get('api-version');
    const path = decodeURIComponent(url.pathname);
    let status = 200;
    let body: unknown;
    let retryAfter: number | undefined;
    try {
      const claims = this.authenticate(req.headers.authorization);
      if (this.throttled.remaining > 0) {
        this.throttled.remaining--;
        retryAfter = this.throttled.retryAfterSeconds;
        throw new ArmError(
          429,
          'SubscriptionRequestsThrottled',
          `Number of 'read' requests for subscription '${this.world.subscriptionID}' actor '${claims.oid}' exceeded. Please try again after '${retryAfter}' seconds after additional tokens are available.`,
        );
      }
      if (!apiVersion) {
        throw new ArmError(
          400,
          'MissingApiVersionParameter',
          'The api-version query parameter (?api-version=) is required for all requests.',
        );
      }
      if (req.method !== 'GET') {
        throw new ArmError(405, 'MethodNotAllowed', `The ${req.method} method is not served here.`);
      }
      const parts = path.split('/').filter(Boolean);
      const type = resourceTypeOf(parts);
      const versions = type ? API_VERSIONS[type] : undefined;
      if (type && versions && !versions.includes(apiVersion)) {
        throw new ArmError(
          400,
          'NoRegisteredProviderFound',
          `No registered resource provider found for location 'eastus' and API version '${apiVersion}' for type '${type.split('/').slice(1).join('/')}'. The supported api-versions are '${versions.join(', ')}'.`,
        );
      }
      if (type) this.authorize(claims, path, `${type}/read`);
      this.currentExpand = url.searchParams.get('$expand');
      this.currentFilter = url.searchParams.get('$filter');
      body = this.route(path);
    } catch (err) {
      if (!(err instanceof ArmError)) throw err;
      status = err.status;
      body = { error: { code: err.code, message: err.message } };
    }
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, apiVersion, status });
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-ms-request-id': randomBytes(8).toString('hex'),
      ...(status === 401
        ? { 'www-authenticate': 'Bearer authorization_uri="https://login.invalid"' }
        : {}),
      ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
    });
    res.end(text);
  }

  /**
   * The Resource SKUs list: ARM supports only a location filter (`location eq 'eastus'`) and
   * refuses any other with 400 InvalidFilter.
   */
  private resourceSkus(): unknown[] {
    const filter = this.currentFilter;
    let location: string | undefined;
    if (filter !== null) {
      const match = /^\s*location\s+eq\s+'([^']*)'\s*$/i.exec(filter);
      if (!match) {
        throw new ArmError(
          400,
          'InvalidFilter',
          `The filter '${filter}' is not supported: only 'location eq' is.`,
        );
      }
      location = match[1];
    }
    return (this.world.vmSizes ?? [])
      .filter((s) => location === undefined || s.locations.some((l) => same(l, location)))
      .map((s) => ({
        resourceType: 'virtualMachines',
        name: s.name,
        tier: 'Standard',
        size: s.name.replace(/^Standard_/, ''),
        family: `standard${s.name.replace(/^Standard_[A-Z]+\d*/, '')}Family`,
        locations: location === undefined ? s.locations : [location],
        locationInfo: (location === undefined ? s.locations : [location]).map((l) => ({
          location: l,
          zones: ['1', '2', '3'],
          zoneDetails: [],
        })),
        capabilities: [
          { name: 'vCPUs', value: String(s.vCPUs) },
          { name: 'MemoryGB', value: String(s.memoryGB) },
          { name: 'HyperVGenerations', value: s.hyperVGenerations.join(',') },
          { name: 'CpuArchitectureType', value: s.architecture },
        ],
        restrictions: [],
      }));
  }

  private route(path: string): unknown {
    const parts = path.split('/').filter(Boolean);
    const at = (i: number) => parts[i] ?? '';
    if (!same(at(0), 'subscriptions')) throw notFoundPath(path);
    if (!same(at(1), this.world.subscriptionID)) {
      throw new ArmError(
        404,
        'SubscriptionNotFound',
        `The subscription '${at(1)}' could not be found.`,
      );
    }
    const sub = `/subscriptions/${this.world.subscriptionID}`;
    // /subscriptions/{s}/providers/Microsoft.Compute/locations/{l}/publishers/{p}/artifacttypes/vmimage/offers/{o}/skus/{k}/versions[/{v}]
    if (
      same(at(2), 'providers') &&
      same(at(3), 'Microsoft.Compute') &&
      same(at(4), 'locations') &&
      same(at(6), 'publishers') &&
      same(at(8), 'artifacttypes') &&
      same(at(9), 'vmimage') &&
      same(at(10), 'offers') &&
      same(at(12), 'skus') &&
      same(at(14), 'versions')
    ) {
      const [location, publisher, offer, sku] = [at(5), at(7), at(11), at(13)];
      const images = this.world.images.filter(
        (i) =>
          same(i.location, location) &&
          same(i.publisher, publisher) &&
          same(i.offer, offer) &&
          same(i.sku, sku),
      );
      const idOf = (i: ArmMarketplaceImage) =>
        `${sub}/Providers/Microsoft.Compute/Locations/${i.location}/Publishers/${i.publisher}/ArtifactTypes/VMImage/Offers/${i.offer}/Skus/${i.sku}/Versions/${i.version}`;
      if (parts.length === 15) {
        return images.map((i) => ({ location: i.location, name: i.version, id: idOf(i) }));
      }
      const image = images.find((i) => same(i.version, at(15)));
      if (parts.length !== 16 || !image) {
        throw new ArmError(404, 'NotFound', 'Artifact: VMImage was not found.');
      }
      return {
        location: image.location,
        name: image.version,
        id: idOf(image),
        properties: {
          ...(image.plan ? { plan: image.plan } : {}),
          osDiskImage: { operatingSystem: 'Linux' },
          hyperVGeneration: image.hyperVGeneration ?? 'V2',
          architecture: image.architecture ?? 'x64',
        },
      };
    }
    // /subscriptions/{s}/providers/Microsoft.Compute/skus[?$filter=location eq '{l}']
    if (
      parts.length === 5 &&
      same(at(2), 'providers') &&
      same(at(3), 'Microsoft.Compute') &&
      same(at(4), 'skus')
    ) {
      return { value: this.resourceSkus() };
    }
    if (!same(at(2), 'resourceGroups')) throw notFoundPath(path);
    const resourceGroup = at(3);
    if (!this.world.resourceGroups.some((g) => same(g, resourceGroup))) {
      throw new ArmError(
        404,
        'ResourceGroupNotFound',
        `Resource group '${resourceGroup}' could not be found.`,
      );
    }
    const rgPath = `${sub}/resourceGroups/${resourceGroup}`;
    // .../providers/Microsoft.Network/virtualNetworks/{vnet}/subnets/{subnet}
    if (
      parts.length === 10 &&
      same(at(4), 'providers') &&
      same(at(5), 'Microsoft.Network') &&
      same(at(6), 'virtualNetworks') &&
      same(at(8), 'subnets')
    ) {
      const [vnet, name] = [at(7), at(9)];
      if (
        !this.world.virtualNetworks.some(
          (v) => same(v.resourceGroup, resourceGroup) && same(v.name, vnet),
        )
      ) {
        throw new ArmError(
          404,
          'ResourceNotFound',
          `The Resource 'Microsoft.Network/virtualNetworks/${vnet}' under resource group '${resourceGroup}' was not found.`,
        );
      }
      const subnet = this.world.subnets.find(
        (s) =>
          same(s.resourceGroup, resourceGroup) &&
          same(s.virtualNetwork, vnet) &&
          same(s.name, name),
      );
      if (!subnet) {
        throw new ArmError(
          404,
          'NotFound',
          `Resource ${rgPath}/providers/Microsoft.Network/virtualNetworks/${vnet}/subnets/${name} not found.`,
        );
      }
      return {
        name: subnet.name,
        id: `${rgPath}/providers/Microsoft.Network/virtualNetworks/${subnet.virtualNetwork}/subnets/${subnet.name}`,
        etag: 'W/"00000000-0000-0000-0000-000000000001"',
        type: 'Microsoft.Network/virtualNetworks/subnets',
        properties: {
          provisioningState: 'Succeeded',
          addressPrefix: subnet.addressPrefix,
          ...(subnet.natGateway
            ? {
                natGateway: {
                  id: `${rgPath}/providers/Microsoft.Network/natGateways/${subnet.natGateway}`,
                },
              }
            : {}),
          ...(subnet.defaultOutboundAccess !== undefined
            ? { defaultOutboundAccess: subnet.defaultOutboundAccess }
            : {}),
          ...(subnet.routeTable
            ? {
                routeTable: {
                  id: `${rgPath}/providers/Microsoft.Network/routeTables/${subnet.routeTable}`,
                },
              }
            : {}),
        },
      };
    }
    // .../providers/Microsoft.Network/routeTables/{name}
    if (
      parts.length === 8 &&
      same(at(4), 'providers') &&
      same(at(5), 'Microsoft.Network') &&
      same(at(6), 'routeTables')
    ) {
      const table = (this.world.routeTables ?? []).find(
        (t) => same(t.resourceGroup, resourceGroup) && same(t.name, at(7)),
      );
      if (!table) {
        throw new ArmError(
          404,
          'ResourceNotFound',
          `The Resource 'Microsoft.Network/routeTables/${at(7)}' under resource group '${resourceGroup}' was not found.`,
        );
      }
      const id = `${rgPath}/providers/Microsoft.Network/routeTables/${table.name}`;
      return {
        id,
        name: table.name,
        type: 'Microsoft.Network/routeTables',
        properties: {
          provisioningState: 'Succeeded',
          routes: table.routes.map((r) => ({
            id: `${id}/routes/${r.name}`,
            name: r.name,
            properties: {
              provisioningState: 'Succeeded',
              addressPrefix: r.addressPrefix,
              nextHopType: r.nextHopType,
              ...(r.nextHopIpAddress ? { nextHopIpAddress: r.nextHopIpAddress } : {}),
            },
          })),
        },
      };
    }
    // .../providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}
    if (
      parts.length === 8 &&
      same(at(4), 'providers') &&
      same(at(5), 'Microsoft.ManagedIdentity') &&
      same(at(6), 'userAssignedIdentities')
    ) {
      const identity = this.world.userAssignedIdentities.find(
        (i) => same(i.resourceGroup, resourceGroup) && same(i.name, at(7)),
      );
      if (!identity) {
        throw new ArmError(
          404,
          'ResourceNotFound',
          `The Resource 'Microsoft.ManagedIdentity/userAssignedIdentities/${at(7)}' under resource group '${resourceGroup}' was not found.`,
        );
      }
      return {
        id: `${rgPath}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${identity.name}`,
        name: identity.name,
        type: 'Microsoft.ManagedIdentity/userAssignedIdentities',
        location: identity.location,
        tags: {},
        properties: {
          tenantId: this.world.tenantID,
          principalId: identity.principalId,
          clientId: identity.clientId,
        },
      };
    }
    // .../providers/Microsoft.Compute/virtualMachines/{name}
    if (
      parts.length === 8 &&
      same(at(4), 'providers') &&
      same(at(5), 'Microsoft.Compute') &&
      same(at(6), 'virtualMachines')
    ) {
      const vm = (this.world.virtualMachines ?? []).find(
        (v) => same(v.resourceGroup, resourceGroup) && same(v.name, at(7)),
      );
      if (!vm) {
        throw new ArmError(
          404,
          'ResourceNotFound',
          `The Resource 'Microsoft.Compute/virtualMachines/${at(7)}' under resource group '${resourceGroup}' was not found.`,
        );
      }
      const expand = this.currentExpand === 'instanceView';
      const provisioningState = vm.provisioningState ?? 'Succeeded';
      // While Compute builds the VM its instance view has no PowerState status yet.
      const statuses = [
        { code: `ProvisioningState/${provisioningState.toLowerCase()}`, level: 'Info' },
        ...(provisioningState === 'Creating'
          ? []
          : [{ code: `PowerState/${vm.powerState}`, level: 'Info' }]),
      ];
      return {
        id: `${rgPath}/providers/Microsoft.Compute/virtualMachines/${vm.name}`,
        name: vm.name,
        type: 'Microsoft.Compute/virtualMachines',
        location: vm.location,
        tags: vm.tags ?? {},
        properties: {
          provisioningState,
          osProfile: { computerName: vm.computerName, adminUsername: 'core' },
          networkProfile: {
            networkInterfaces: vm.networkInterfaces.map((nic, i) => ({
              id: `${rgPath}/providers/Microsoft.Network/networkInterfaces/${nic}`,
              properties: { primary: i === 0 },
            })),
          },
          ...(expand
            ? {
                instanceView: { computerName: vm.computerName, statuses },
              }
            : {}),
        },
      };
    }
    // .../providers/Microsoft.Network/networkInterfaces/{name}
    if (
      parts.length === 8 &&
      same(at(4), 'providers') &&
      same(at(5), 'Microsoft.Network') &&
      same(at(6), 'networkInterfaces')
    ) {
      const nic = (this.world.networkInterfaces ?? []).find(
        (n) => same(n.resourceGroup, resourceGroup) && same(n.name, at(7)),
      );
      if (!nic) {
        throw new ArmError(
          404,
          'ResourceNotFound',
          `The Resource 'Microsoft.Network/networkInterfaces/${at(7)}' under resource group '${resourceGroup}' was not found.`,
        );
      }
      const id = `${rgPath}/providers/Microsoft.Network/networkInterfaces/${nic.name}`;
      return {
        id,
        name: nic.name,
        type: 'Microsoft.Network/networkInterfaces',
        properties: {
          provisioningState: 'Succeeded',
          ipConfigurations: nic.privateIPAddresses.map((ip, i) => ({
            id: `${id}/ipConfigurations/ipconfig${i + 1}`,
            name: `ipconfig${i + 1}`,
            properties: {
              privateIPAddress: ip,
              privateIPAllocationMethod: 'Dynamic',
              primary: i === 0,
            },
          })),
        },
      };
    }
    throw notFoundPath(path);
  }
}

function notFoundPath(path: string): ArmError {
  return new ArmError(404, 'InvalidResourceType', `No resource type is served at '${path}'.`);
}
