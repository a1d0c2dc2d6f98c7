import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { CliError } from './errors.js';

/**
 * The per-user file `kfleet login` writes, shaped like a kubeconfig cut to what a fleet needs: a
 * context is one API server and the token used there. It holds bearer secrets, so it is written
 * with mode 0600 (main.ts) and read as untrusted input (a hand edit gets a clear error).
 */
const contextSchema = z.object({
  name: z.string().min(1),
  server: z.string().url(),
  token: z.string().min(1),
  /** The token's name when it was stored, to tell contexts apart without showing secrets. */
  user: z.string().optional(),
});

const configSchema = z.object({
  apiVersion: z.literal('kfleet/v1').default('kfleet/v1'),
  kind: z.literal('Config').default('Config'),
  'current-context': z.string().optional(),
  contexts: z.array(contextSchema).default([]),
});

export type KfleetContext = z.infer<typeof contextSchema>;
export type KfleetConfig = z.infer<typeof configSchema>;

/** `KFLEET_CONFIG`, else `$XDG_CONFIG_HOME/kfleet/config`, else `~/.config/kfleet/config`. */
export function configPath(env: Record<string, string | undefined>): string | undefined {
  if (env.KFLEET_CONFIG) return env.KFLEET_CONFIG;
  const base = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, '.config') : undefined);
  return base ? join(base, 'kfleet', 'config') : undefined;
}

export function parseConfig(text: string, path: string): KfleetConfig {
  let raw: unknown;
  try {
    raw = text.trim() ? parse(text) : {};
  } catch (err) {
    throw new CliError(`${path}: invalid YAML: ${(err as Error).message}`, 'USAGE');
  }
  const parsed = configSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.');
    throw new CliError(`${path}: ${field || 'config'}: ${issue.message}`, 'USAGE', field);
  }
  const names = parsed.data.contexts.map((c) => c.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new CliError(`${path}: context ${dup} is defined twice`, 'USAGE', 'contexts');
  return parsed.data;
}

export const serializeConfig = (config: KfleetConfig): string => stringify(config);

/** The context name `login` picks when none is given: the server's host and port. */
export function contextNameFor(server: string): string {
  return new URL(server).host;
}

/** Adds or replaces a context by name and makes it current. */
export function upsertContext(config: KfleetConfig, context: KfleetContext): KfleetConfig {
  const contexts = config.contexts.filter((c) => c.name !== context.name);
  contexts.push(context);
  contexts.sort((a, b) => a.name.localeCompare(b.name));
  return { ...config, contexts, 'current-context': context.name };
}

export function findContext(config: KfleetConfig, name: string): KfleetContext {
  const found = config.contexts.find((c) => c.name === name);
  if (!found) {
    const known = config.contexts.map((c) => c.name).join(', ') || 'none; run kfleet login';
    throw new CliError(`context ${name} not found (known: ${known})`, 'NOT_FOUND', '--context');
  }
  return found;
}

export interface ConnectionSources {
  flags: { api?: string; token?: string; context?: string };
  env: Record<string, string | undefined>;
  config: KfleetConfig;
}

export interface Connection {
  apiUrl: string;
  token?: string;
  /** The context the connection came from, if any. */
  context?: string;
}

const sameServer = (a: string, b: string): boolean =>
  a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/**
 * Where to connect and with which token. Flags beat the environment, which beats the config's
 * current context; `--context` (or `KFLEET_CONTEXT`) names a context explicitly and then beats
 * the environment. A context's token is only ever sent to that context's own server: overriding
 * the server with --api or KFLEET_API_URL drops it, so a secret never leaks to another host.
 */
export function resolveConnection(
  { flags, env, config }: ConnectionSources,
  defaultUrl: string,
): Connection {
  const named = flags.context ?? env.KFLEET_CONTEXT;
  const context = named
    ? findContext(config, named)
    : config['current-context']
      ? config.contexts.find((c) => c.name === config['current-context'])
      : undefined;
  const apiUrl =
    flags.api ?? (named ? context?.server : undefined) ?? env.KFLEET_API_URL ?? context?.server;
  const url = apiUrl ?? defaultUrl;
  const contextToken = context && sameServer(context.server, url) ? context.token : undefined;
  const token =
    flags.token ?? (named ? contextToken : undefined) ?? env.KFLEET_TOKEN ?? contextToken;
  return {
    apiUrl: url,
    ...(token ? { token } : {}),
    ...(context && sameServer(context.server, url) ? { context: context.name } : {}),
  };
}
