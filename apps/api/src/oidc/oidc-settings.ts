import { LabelSelectorError, parseLabelSelector } from '@fleet/contracts';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { Role } from '../auth/principal.js';

/** One rule of OIDC_GROUP_ROLES: members of `group` get `role`, limited to `labelSelector`. */
export interface GroupRole {
  group: string;
  role: Role;
  labelSelector: string | null;
}

/** Everything the API needs to sign people in with an OIDC issuer. */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  /** Absent: a public client, protected by PKCE alone. */
  clientSecret: string | null;
  providerName: string;
  redirectUrl: string;
  scopes: string;
  usernameClaim: string;
  groupsClaim: string;
  /** In order: the first rule whose group the person is in decides role and scope. */
  groupRoles: GroupRole[];
  jwksCooldownMs: number;
  clockToleranceSeconds: number;
  /** A session ends with its ID token, and at the latest this long after sign-in. */
  maxSessionSeconds: number;
}

/** The environment variables read here (they are part of ApiConfigSchema). */
export interface OidcEnvironment {
  FLEET_PUBLIC_URL: string;
  OIDC_ISSUER_URL?: string | undefined;
  OIDC_CLIENT_ID?: string | undefined;
  OIDC_CLIENT_SECRET?: string | undefined;
  OIDC_PROVIDER_NAME?: string | undefined;
  OIDC_REDIRECT_URL?: string | undefined;
  OIDC_SCOPES: string;
  OIDC_USERNAME_CLAIM: string;
  OIDC_GROUPS_CLAIM: string;
  OIDC_GROUP_ROLES?: string | undefined;
  OIDC_GROUP_ROLES_FILE?: string | undefined;
  OIDC_JWKS_COOLDOWN_SECONDS: number;
  OIDC_CLOCK_TOLERANCE_SECONDS: number;
  OIDC_MAX_SESSION_HOURS: number;
}

/** The OIDC variables of the API's environment schema (config.ts). */
export const oidcEnvironmentSchema = {
  /** The issuer exactly as its discovery document names it; unset: no OIDC sign-in. */
  OIDC_ISSUER_URL: z.url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_PROVIDER_NAME: z.string().min(1).max(60).optional(),
  OIDC_REDIRECT_URL: z.url().optional(),
  OIDC_SCOPES: z
    .string()
    .regex(/(^|\s)openid(\s|$)/, 'must include "openid"')
    .default('openid profile email'),
  OIDC_USERNAME_CLAIM: z.string().min(1).default('preferred_username'),
  OIDC_GROUPS_CLAIM: z.string().min(1).default('groups'),
  OIDC_GROUP_ROLES: z.string().optional(),
  OIDC_GROUP_ROLES_FILE: z.string().min(1).optional(),
  OIDC_JWKS_COOLDOWN_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  OIDC_CLOCK_TOLERANCE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  /** Providers whose ID tokens live for days do not make days-long sessions. */
  OIDC_MAX_SESSION_HOURS: z.coerce.number().int().min(1).max(720).default(12),
};

const groupRoleSchema = z
  .object({
    group: z.string().trim().min(1, 'must name a group'),
    role: z.enum(['VIEWER', 'OPERATOR', 'ADMIN']),
    labelSelector: z.string().nullish(),
  })
  .strict()
  .superRefine((rule, ctx) => {
    if (rule.labelSelector == null) return;
    if (rule.labelSelector.trim() === '') {
      ctx.addIssue({
        code: 'custom',
        path: ['labelSelector'],
        message: 'must not be blank; omit it for a role over every cluster',
      });
      return;
    }
    try {
      parseLabelSelector(rule.labelSelector);
    } catch (err) {
      if (!(err instanceof LabelSelectorError)) throw err;
      ctx.addIssue({ code: 'custom', path: ['labelSelector'], message: err.message });
    }
  });
const groupRolesSchema = z.array(groupRoleSchema).min(1, 'must map at least one group to a role');

const isLoopback = (url: URL) => ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);

/**
 * The OIDC settings from the environment, or null when OIDC_ISSUER_URL is unset. Every problem is
 * reported naming its variable (and the rule's index and field for the group rules) as parseEnv
 * does, so a bad configuration stops the API at start, not at the first sign-in.
 */
export function oidcSettings(env: OidcEnvironment): OidcSettings | null {
  const problems: string[] = [];
  const problem = (field: string, message: string) => problems.push(`  ${field}: ${message}`);
  if (!env.OIDC_ISSUER_URL) {
    const stray = (
      ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_GROUP_ROLES', 'OIDC_GROUP_ROLES_FILE'] as const
    ).filter((k) => env[k] !== undefined);
    if (stray.length)
      throw new Error(
        `invalid configuration:\n  OIDC_ISSUER_URL: required when ${stray.join(', ')} ${stray.length > 1 ? 'are' : 'is'} set`,
      );
    return null;
  }
  const issuer = new URL(env.OIDC_ISSUER_URL);
  // The issuer's keys and tokens travel over this connection: plain HTTP only on this machine.
  if (issuer.protocol !== 'https:' && !isLoopback(issuer))
    problem('OIDC_ISSUER_URL', 'must be an https:// URL (http:// only for a loopback address)');
  if (!env.OIDC_CLIENT_ID) problem('OIDC_CLIENT_ID', 'required when OIDC_ISSUER_URL is set');
  const redirectUrl =
    env.OIDC_REDIRECT_URL ?? `${env.FLEET_PUBLIC_URL.replace(/\/+$/, '')}/auth/oidc/callback`;

  let groupRoles: GroupRole[] = [];
  const sources = [env.OIDC_GROUP_ROLES, env.OIDC_GROUP_ROLES_FILE].filter((s) => s !== undefined);
  if (sources.length !== 1) {
    problem(
      'OIDC_GROUP_ROLES',
      sources.length
        ? 'set either OIDC_GROUP_ROLES or OIDC_GROUP_ROLES_FILE, not both'
        : 'required when OIDC_ISSUER_URL is set (or OIDC_GROUP_ROLES_FILE): who gets which role',
    );
  } else {
    const field = env.OIDC_GROUP_ROLES !== undefined ? 'OIDC_GROUP_ROLES' : 'OIDC_GROUP_ROLES_FILE';
    let raw: unknown;
    try {
      raw =
        env.OIDC_GROUP_ROLES !== undefined
          ? JSON.parse(env.OIDC_GROUP_ROLES)
          : parseYaml(readFileSync(env.OIDC_GROUP_ROLES_FILE!, 'utf8'));
    } catch (err) {
      problem(field, `cannot be read: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (raw !== undefined) {
      const parsed = groupRolesSchema.safeParse(raw);
      if (parsed.success) {
        groupRoles = parsed.data.map((r) => ({
          group: r.group,
          role: r.role,
          labelSelector: r.labelSelector ?? null,
        }));
      } else {
        for (const issue of parsed.error.issues) {
          const path = issue.path
            .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
            .join('');
          problem(`${field}${path}`, issue.message);
        }
      }
    }
  }
  if (problems.length) throw new Error(`invalid configuration:\n${problems.join('\n')}`);
  return {
    issuer: env.OIDC_ISSUER_URL,
    clientId: env.OIDC_CLIENT_ID!,
    clientSecret: env.OIDC_CLIENT_SECRET ?? null,
    providerName: env.OIDC_PROVIDER_NAME ?? issuer.hostname,
    redirectUrl,
    scopes: env.OIDC_SCOPES,
    usernameClaim: env.OIDC_USERNAME_CLAIM,
    groupsClaim: env.OIDC_GROUPS_CLAIM,
    groupRoles,
    jwksCooldownMs: env.OIDC_JWKS_COOLDOWN_SECONDS * 1000,
    clockToleranceSeconds: env.OIDC_CLOCK_TOLERANCE_SECONDS,
    maxSessionSeconds: env.OIDC_MAX_SESSION_HOURS * 3600,
  };
}

/** The first rule whose group the person is in, or undefined. */
export const roleForGroups = (rules: GroupRole[], groups: string[]): GroupRole | undefined =>
  rules.find((rule) => groups.includes(rule.group));
