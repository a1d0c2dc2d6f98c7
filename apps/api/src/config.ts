import { parseEnv, port, postgresUrl, redisUrl, logLevel } from '@fleet/contracts';
import { KARPENTER_CRD_DIRECTORY } from '@fleet/crd-schema';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { oidcEnvironmentSchema, oidcSettings } from './oidc/oidc-settings.js';

/**
 * The built console (scripts/build.mjs puts it in dist/apps/console), found from this module's own
 * location whether the API runs from dist/ (and the image) or from its sources (tests).
 */
const here = dirname(fileURLToPath(import.meta.url));
export const CONSOLE_DIRECTORY = /[/\\]dist[/\\]apps[/\\]api[/\\]src$/.test(here)
  ? join(here, '..', '..', 'console')
  : join(here, '..', '..', '..', 'dist', 'apps', 'console');

export const ApiConfigSchema = z.object({
  DATABASE_URL: postgresUrl,
  REDIS_URL: redisUrl,
  API_PORT: port(4000),
  API_HOST: z.string().default('127.0.0.1'),
  /** Prefix of every BullMQ key, so several fleets (or test suites) can share one Redis. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .default('bull'),
  LOG_LEVEL: logLevel,
  /** An admin token created at start-up if absent: how a new fleet gets its first token. */
  FLEET_BOOTSTRAP_TOKEN: z.string().min(20, 'must be at least 20 characters').optional(),
  /**
   * The bootstrap token expires this long after it is first created (a restart does not renew
   * it): long enough to create real admin tokens, not a standing credential in a Secret.
   */
  FLEET_BOOTSTRAP_TOKEN_TTL_HOURS: z.coerce.number().int().min(1).max(720).default(24),
  /** Production runs as production (see productionRuntimeProblem); read for production defaults. */
  NODE_ENV: z.string().optional(),
  /** GraphQL introspection; default off when NODE_ENV=production, on otherwise. */
  GRAPHQL_INTROSPECTION: z.enum(['true', 'false']).optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /**
   * The rate limiter's Redis commands give up after this long; then reads go on unlimited and
   * writes are refused with SERVICE_UNAVAILABLE (docs/SECURITY.md).
   */
  RATE_LIMIT_REDIS_TIMEOUT_MS: z.coerce.number().int().min(10).default(1_000),
  /**
   * Requests refused for want of a valid credential allowed per peer address and window; past
   * it, that address's unknown credentials are refused (429) without a database look-up.
   */
  UNAUTHENTICATED_PER_WINDOW: z.coerce.number().int().min(1).default(60),
  UNAUTHENTICATED_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /**
   * Status reports accepted per cluster and minute: a sidecar sends 2 at rest and bursts on
   * changes; this only stops a runaway or leaked report token from flooding the ingest queue.
   */
  REPORTS_PER_CLUSTER_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /**
   * How long a replica trusts a cluster's report credentials from memory. Rotations and
   * deregistrations drop them at once (`credentials-changed`, and all of them after a gap in the
   * subscription); this bounds only a publish that Redis refused (docs/SECURITY.md).
   */
  REPORT_CREDENTIALS_CACHE_SECONDS: z.coerce.number().int().min(1).max(3600).default(600),
  /**
   * How often a replica checks that its events subscription still delivers (a message to
   * itself); one missing for 2.5 intervals counts as a gap (caches kept by events are dropped).
   */
  EVENTS_CHECK_SECONDS: z.coerce.number().min(0.1).max(300).default(10),
  /** Reject queries nested deeper than this, or costing more (see graphql/query-limits.ts). */
  MAX_QUERY_DEPTH: z.coerce.number().int().min(2).default(10),
  MAX_QUERY_COST: z.coerce.number().int().min(1).default(50_000),
  /**
   * Field selections and aliases a document may hold, fragments counted where spread (issue 48:
   * 3,000 aliases of `viewer { name }` took 105 ms of the API's thread). The largest legitimate
   * documents: introspection 230 fields, the console's 93 (ResetClusterOverride), kfleet's 77; at
   * most 4 aliases (the console's NeedsAttention). docs/DESIGN.md § Size limits.
   */
  MAX_QUERY_FIELDS: z.coerce.number().int().min(1).default(1_000),
  MAX_QUERY_ALIASES: z.coerce.number().int().min(0).default(100),
  /**
   * `clusters { totalCount }` counts at most this many matches; past them it answers this number
   * with `totalCountIsExact: false` (issue 48: an exact count of 16,666 of 100,000 clusters cost
   * ~33 ms of PostgreSQL a list; 1,000 cost ~3). Unfiltered and single maintained-filter lists
   * are exact at any size (docs/DESIGN.md § API, Pagination).
   */
  TOTAL_COUNT_LIMIT: z.coerce.number().int().min(1).default(1_000),
  /** A cluster with no report for this long is stale (3 heartbeats of the default 30 s). */
  STALE_AFTER_SECONDS: z.coerce.number().int().min(1).default(90),
  /** The API URL sidecars report to, written into bootstrap manifests. */
  FLEET_PUBLIC_URL: z.url().default('http://127.0.0.1:4000'),
  /** The Redis URL sidecars take orders from, written into bootstrap manifests. */
  FLEET_PUBLIC_REDIS_URL: z.url().optional(),
  SIDECAR_IMAGE: z.string().default('quay.io/karpenter-fleet/sidecar:0.1.0'),
  /** The upstream Karpenter CRDs NodePools and NodeClass overrides are checked against. */
  KARPENTER_CRD_DIR: z.string().default(KARPENTER_CRD_DIRECTORY),
  /** After a rotation the previous sidecar credentials keep working this long. */
  CREDENTIAL_GRACE_SECONDS: z.coerce.number().int().min(0).default(3600),
  /** The built web console served at /; without an index.html there, / is not served. */
  CONSOLE_DIR: z.string().default(CONSOLE_DIRECTORY),
  /** Sign-in with an OIDC issuer (README, "Signing in with an identity provider"). */
  ...oidcEnvironmentSchema,
});
export type ApiConfig = z.infer<typeof ApiConfigSchema>;

export const API_CONFIG = Symbol('API_CONFIG');
export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const config = parseEnv(ApiConfigSchema, env);
  // The OIDC settings span several variables and a file: checked now so a bad one stops the start.
  oidcSettings(config);
  return config;
}

/**
 * The deployed entry point (main.ts) runs only with NODE_ENV=production, which libraries read
 * to drop development behaviour (Apollo's stack traces in errors, Express' verbose error pages).
 * Anything else is refused at start unless FLEET_ALLOW_NON_PRODUCTION=true says, on purpose,
 * that this is a development run. Tests boot the application module in process and are not
 * concerned.
 */
export function productionRuntimeProblem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_ENV === 'production' || env.FLEET_ALLOW_NON_PRODUCTION === 'true') return undefined;
  return `NODE_ENV: must be "production" (is ${env.NODE_ENV === undefined ? 'unset' : `"${env.NODE_ENV}"`}); set FLEET_ALLOW_NON_PRODUCTION=true to run a development API`;
}
