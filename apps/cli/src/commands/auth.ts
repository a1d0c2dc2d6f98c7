import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as gql from '../documents.js';
import { CliError, usageError } from '../errors.js';
import { print, table } from '../format.js';
import { graphqlRequest } from '../client.js';
import { loadConfig, saveConfig, type CommandContext, type GlobalOptions } from './context.js';

export interface ViewerInfo {
  name: string;
  role: string;
  scoped: boolean;
  labelSelector: string | null;
  expiresAt: string | null;
}

/** How long `login --oidc` waits for the person to sign in. */
const OIDC_LOGIN_TIMEOUT_MS = 5 * 60_000;

/** `kfleet login`, `whoami` and `config` (contexts), kubeconfig style. */
export function addAuthCommands(
  program: Command,
  { io, connect, connection, readOutput }: CommandContext,
): void {
  program
    .command('login')
    .description(
      'verify a token against a fleet API and store both as a context (the current one) in the config file',
    )
    .argument('<url>', 'the fleet API base URL, e.g. https://fleet.example.com')
    .option(
      '--oidc',
      "sign in with the fleet's identity provider in a browser instead of a token (the API must have OIDC configured); the session ends with the provider's token",
    )
    .action(async (url: string, opts: { oidc?: boolean }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      let server: string;
      try {
        server = new URL(url).toString().replace(/\/+$/, '');
      } catch {
        throw usageError(`${url}: expected an http(s) URL`, '<url>');
      }
      if (!/^https?:$/.test(new URL(server).protocol))
        throw usageError(`${url}: expected an http(s) URL`, '<url>');
      if (opts.oidc && globals.token)
        throw usageError('--oidc signs in without a token: pass one or the other', '--oidc');
      const token = opts.oidc ? await oidcSession(server) : await loginToken(globals.token);
      const request = graphqlRequest({
        apiUrl: server,
        token,
        ...(io.fetch ? { fetch: io.fetch } : {}),
      });
      // Verified before anything is written: a typo never becomes the current context.
      const { viewer } = await request<{ viewer: ViewerInfo }>(gql.VIEWER);
      const { path, config } = await loadConfig(io);
      const { contextNameFor, upsertContext } = await import('../config.js');
      // --context names the context written (default: the server's host:port).
      const name = globals.context ?? contextNameFor(server);
      await saveConfig(io, path, upsertContext(config, { name, server, token, user: viewer.name }));
      io.stdout(
        `Logged in to ${server} as ${viewer.name} (${viewer.role}${viewer.labelSelector ? `, clusters ${viewer.labelSelector}` : ''}).\n` +
          `Context "${name}" is now current (${path}).\n`,
      );
    });

  /**
   * `login --oidc`: a listener on the loopback (RFC 8252 §7.3) the API sends the session to once
   * the person has signed in with the provider in a browser. The listener takes only an answer
   * carrying the state it chose, and gives up after OIDC_LOGIN_TIMEOUT_MS.
   */
  function oidcSession(server: string): Promise<string> {
    const state = randomBytes(24).toString('base64url');
    return new Promise<string>((resolve, reject) => {
      const listener = createServer((req, res) => {
        const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
        if (query.get('cli_state') !== state) {
          res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
          res.end('This is not the sign-in kfleet is waiting for.\n');
          return;
        }
        const session = query.get('session');
        const refusal = query.get('error') ?? 'the API sent no session';
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
        res.end(
          session
            ? 'Signed in: kfleet has your session. You can close this tab.\n'
            : `Sign-in refused: ${refusal}\n`,
        );
        finish(() =>
          session
            ? resolve(session)
            : reject(new CliError(`sign-in refused: ${refusal}`, 'UNAUTHENTICATED')),
        );
      });
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(
              new CliError(
                `no sign-in within ${OIDC_LOGIN_TIMEOUT_MS / 60_000} minutes; run kfleet login --oidc again`,
                'TIMEOUT',
              ),
            ),
          ),
        OIDC_LOGIN_TIMEOUT_MS,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listener.close();
        listener.closeAllConnections();
        settle();
      };
      listener.once('error', (err) => finish(() => reject(err)));
      listener.listen(0, '127.0.0.1', () => {
        const { port } = listener.address() as AddressInfo;
        const login = new URL(`${server}/auth/oidc/login`);
        login.searchParams.set('cli_callback', `http://127.0.0.1:${port}/callback`);
        login.searchParams.set('cli_state', state);
        io.stderr(`Open this URL in a browser to sign in:\n\n  ${login.toString()}\n\n`);
      });
    });
  }

  /** --token, else the whole of stdin (a pipe, or pasted then Ctrl-D on a terminal). */
  async function loginToken(flag: string | undefined): Promise<string> {
    if (flag) return flag;
    if (io.tty?.stdin) io.stderr('Paste the API token, then press Ctrl-D:\n');
    const text = (await io.readFile('-')).trim();
    if (!text) throw usageError('no token: pass --token or pipe it on stdin', '--token');
    if (/\s/.test(text)) throw usageError('the token on stdin has whitespace inside', '--token');
    return text;
  }

  program
    .command('whoami')
    .description("the token in use: its name, role, cluster scope and expiry, and where it's used")
    .addOption(readOutput())
    .action(async (opts: { output: 'table' }, cmd: Command) => {
      const [{ viewer }, conn] = await Promise.all([
        connect(cmd)<{ viewer: ViewerInfo }>(gql.VIEWER),
        connection(cmd),
      ]);
      io.stdout(
        print(opts.output, viewer, {
          table: (items) =>
            table(
              ['NAME', 'ROLE', 'SCOPE', 'EXPIRES', 'SERVER', 'CONTEXT'],
              items.map((v) => [
                v.name,
                v.role,
                v.labelSelector ?? '<all clusters>',
                v.expiresAt ?? '<never>',
                conn.apiUrl,
                conn.context ?? '<none>',
              ]),
            ),
          name: (v) => `token/${v.name}`,
        }),
      );
    });

  const config = program
    .command('config')
    .description('contexts in the config file (KFLEET_CONFIG, default ~/.config/kfleet/config)');

  config
    .command('get-contexts')
    .description('every stored context; * marks the current one (tokens are never shown)')
    .addOption(readOutput())
    .action(async (opts: { output: 'table' }) => {
      const { config: file } = await loadConfig(io);
      // Scripts get the contexts without their secrets.
      const rows = file.contexts.map((c) => ({
        name: c.name,
        server: c.server,
        user: c.user ?? null,
        current: c.name === file['current-context'],
      }));
      io.stdout(
        print(opts.output, rows, {
          table: (items) =>
            table(
              ['CURRENT', 'NAME', 'SERVER', 'USER'],
              items.map((c) => [c.current ? '*' : '', c.name, c.server, c.user ?? '']),
            ),
          name: (c) => `context/${c.name}`,
        }),
      );
    });

  config
    .command('use-context')
    .description('make a stored context the current one')
    .argument('<name>', 'context name (see config get-contexts)')
    .action(async (name: string) => {
      const { path, config: file } = await loadConfig(io);
      (await import('../config.js')).findContext(file, name);
      await saveConfig(io, path, { ...file, 'current-context': name });
      io.stdout(`Switched to context "${name}".\n`);
    });

  config
    .command('current-context')
    .description('the current context name')
    .action(async () => {
      const { config: file } = await loadConfig(io);
      const current = file['current-context'];
      if (!current) throw new CliError('no current context; run kfleet login', 'NOT_FOUND');
      io.stdout(`${current}\n`);
    });

  config
    .command('delete-context')
    .description('forget a context and its token')
    .argument('<name>', 'context name')
    .action(async (name: string) => {
      const { path, config: file } = await loadConfig(io);
      (await import('../config.js')).findContext(file, name);
      const next = { ...file, contexts: file.contexts.filter((c) => c.name !== name) };
      if (next['current-context'] === name) delete next['current-context'];
      await saveConfig(io, path, next);
      io.stdout(`Deleted context "${name}".\n`);
    });
}
