import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { AccessToken, GetTokenOptions, TokenCredential } from '@azure/core-auth';
import type { ArmClientOptions } from '@fleet/discovery';
import { z } from 'zod';

/**
 * The sidecar's own Azure identity, from its environment under the names Azure's
 * DefaultAzureCredential reads (the same the operand gets): a service principal
 * (AZURE_CLIENT_SECRET) or workload identity (AZURE_FEDERATED_TOKEN_FILE, a projected
 * service-account token exchanged as a client assertion).
 */
const AzureEnv = z.object({
  AZURE_TENANT_ID: z.string().min(1).optional(),
  AZURE_CLIENT_ID: z.string().min(1).optional(),
  AZURE_CLIENT_SECRET: z.string().min(1).optional(),
  AZURE_FEDERATED_TOKEN_FILE: z.string().min(1).optional(),
  /** Microsoft Entra ID's endpoint; another cloud's, or an emulator's. */
  AZURE_AUTHORITY_HOST: z
    .url({ error: 'must be the URL of a Microsoft Entra ID authority' })
    .default('https://login.microsoftonline.com'),
  /** Azure Resource Manager's endpoint; the public cloud's unless said otherwise. */
  AZURE_ENDPOINT_URL_ARM: z
    .url({ error: 'must be the URL of an Azure Resource Manager endpoint' })
    .default('https://management.azure.com'),
  /**
   * A PEM bundle trusted for Entra ID and ARM besides the system's (a TLS-inspecting proxy, an
   * Azure Stack Hub's own CA, an emulator).
   */
  AZURE_CA_BUNDLE: z.string().min(1).optional(),
  /** Longest one token request may take (ARM calls have the SDK's own retry policy). */
  AZURE_REQUEST_TIMEOUT_SECONDS: z.coerce
    .number({ error: 'must be a number of seconds' })
    .positive('must be a positive number of seconds')
    .max(300, 'must be at most 300 seconds')
    .default(10),
});
type AzureEnv = z.infer<typeof AzureEnv>;

export function parseAzureEnv(env: Readonly<Record<string, string | undefined>>): AzureEnv {
  const parsed = AzureEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${issue?.path.join('.') ?? 'Azure environment'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** Why the sidecar cannot get an Azure token: a Degraded reason's message. */
export class AzureCredentialError extends Error {
  override readonly name = 'AzureCredentialError';
}

/**
 * OAuth 2.0 client credentials against Microsoft Entra ID (`/<tenant>/oauth2/v2.0/token`), with
 * a client secret or a federated token as the client assertion; the token is kept until five
 * minutes before it expires. What @azure/identity's ClientSecretCredential and
 * WorkloadIdentityCredential do, without MSAL's instance discovery.
 */
export class EntraClientCredential implements TokenCredential {
  private cached?: { scope: string; token: AccessToken };

  constructor(private readonly env: AzureEnv) {}

  async getToken(scopes: string | string[], _options?: GetTokenOptions): Promise<AccessToken> {
    const scope = Array.isArray(scopes) ? scopes.join(' ') : scopes;
    const now = Date.now();
    if (this.cached?.scope === scope && this.cached.token.expiresOnTimestamp - 300_000 > now)
      return this.cached.token;
    const { AZURE_TENANT_ID: tenant, AZURE_CLIENT_ID: client } = this.env;
    if (!tenant || !client)
      throw new AzureCredentialError(
        'AZURE_TENANT_ID and AZURE_CLIENT_ID are needed to authenticate to Azure',
      );
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client,
      scope,
    });
    if (this.env.AZURE_CLIENT_SECRET) {
      form.set('client_secret', this.env.AZURE_CLIENT_SECRET);
    } else if (this.env.AZURE_FEDERATED_TOKEN_FILE) {
      const assertion = (await readFile(this.env.AZURE_FEDERATED_TOKEN_FILE, 'utf8')).trim();
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      form.set('client_assertion', assertion);
    } else {
      throw new AzureCredentialError(
        'neither AZURE_CLIENT_SECRET nor AZURE_FEDERATED_TOKEN_FILE is set: no way to authenticate to Azure',
      );
    }
    const url = new URL(
      `${encodeURIComponent(tenant)}/oauth2/v2.0/token`,
      this.env.AZURE_AUTHORITY_HOST.replace(/\/?$/, '/'),
    );
    const res = await postForm(url, form, this.env);
    const body = res.body as {
      access_token?: string;
      expires_in?: number;
      error?: string;
      error_description?: string;
    };
    if (res.status !== 200 || !body.access_token) {
      throw new AzureCredentialError(
        `Microsoft Entra ID refused client ${client} of tenant ${tenant}: ${res.status} ${body.error ?? ''} ${body.error_description ?? ''}`.trim(),
      );
    }
    const token = {
      token: body.access_token,
      expiresOnTimestamp: now + (body.expires_in ?? 3600) * 1000,
    };
    this.cached = { scope, token };
    return token;
  }
}

/** The system's CAs plus AZURE_CA_BUNDLE's, or undefined for the system's alone. */
function trustedCAs(env: AzureEnv): string[] | undefined {
  if (!env.AZURE_CA_BUNDLE) return undefined;
  return [...rootCertificates, readFileSync(env.AZURE_CA_BUNDLE, 'utf8')];
}

/** A form POST over HTTPS with the deadline and trusted CAs of the environment. */
function postForm(
  url: URL,
  form: URLSearchParams,
  env: AzureEnv,
): Promise<{ status: number; body: unknown }> {
  const payload = form.toString();
  const ca = trustedCAs(env);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(payload),
        },
        timeout: env.AZURE_REQUEST_TIMEOUT_SECONDS * 1000,
        ...(ca ? { ca } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: unknown = {};
          try {
            body = JSON.parse(text);
          } catch {
            // Not JSON: reported by status alone.
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(
        new AzureCredentialError(
          `Microsoft Entra ID did not answer within ${env.AZURE_REQUEST_TIMEOUT_SECONDS} s`,
        ),
      ),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The ARM endpoint, scope and trusted CAs every `@azure/arm-*` client of the sidecar uses. */
export function armClientOptions(env: AzureEnv): ArmClientOptions {
  const endpoint = env.AZURE_ENDPOINT_URL_ARM.replace(/\/$/, '');
  const ca = trustedCAs(env);
  const scopes = [`${endpoint}/.default`];
  return {
    endpoint,
    credentialScopes: scopes,
    credentials: { scopes },
    ...(ca ? { tlsOptions: { ca: ca.join('\n') } } : {}),
  };
}
