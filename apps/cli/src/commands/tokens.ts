import type { Command } from 'commander';
import { parseDuration, parseEnumOption } from '../args.js';
import * as gql from '../documents.js';
import { age, print, table, type OutputFormat } from '../format.js';
import { ROLES, type Token, type CommandContext } from './context.js';

/** `kfleet tokens`: create, list, revoke. */
export function addTokensCommands(
  program: Command,
  { io, connect, readOutput }: CommandContext,
): void {
  const tokens = program.command('tokens').description('API tokens (ADMIN)');

  tokens
    .command('create')
    .description('create a token; its secret is printed once, on stdout')
    .argument('<name>', 'token name')
    .requiredOption('--role <role>', 'viewer, operator or admin')
    .option('--selector <selector>', 'limit the token to clusters matching this label selector')
    .option('--expires-in <duration>', 'e.g. 30d, 12h')
    .action(
      async (
        name: string,
        opts: { role: string; selector?: string; expiresIn?: string },
        cmd: Command,
      ) => {
        const input: Record<string, unknown> = {
          name,
          role: parseEnumOption(opts.role, '--role', ROLES),
        };
        if (opts.selector) input.labelSelector = opts.selector;
        if (opts.expiresIn)
          input.expiresAt = new Date(
            io.now().getTime() + parseDuration(opts.expiresIn),
          ).toISOString();
        const { createApiToken: t } = await connect(cmd)<{
          createApiToken: { secret: string; token: Token };
        }>(gql.CREATE_TOKEN, { input });
        io.stderr(
          `token/${t.token.name} created (id ${t.token.id}, role ${t.token.role}` +
            `${t.token.expiresAt ? `, expires ${t.token.expiresAt}` : ''})\n` +
            'WARNING: the secret below is shown this once; only its hash is stored.\n',
        );
        io.stdout(`${t.secret}\n`);
      },
    );

  tokens
    .command('list')
    .alias('ls')
    .description('every token (secrets are never shown)')
    .addOption(readOutput())
    .action(async (opts: { output: OutputFormat }, cmd: Command) => {
      const { apiTokens } = await connect(cmd)<{ apiTokens: Token[] }>(gql.LIST_TOKENS);
      const now = io.now();
      const state = (t: Token) =>
        t.revokedAt
          ? 'Revoked'
          : t.expiresAt && new Date(t.expiresAt) <= now
            ? 'Expired'
            : 'Active';
      const cells = (t: Token) => [
        t.id,
        t.name,
        t.role,
        t.labelSelector || '<all>',
        state(t),
        t.expiresAt ?? '<never>',
        t.lastUsedAt ? `${age(t.lastUsedAt, now)} ago` : '<never>',
        age(t.createdAt, now),
      ];
      const headers = ['ID', 'NAME', 'ROLE', 'SELECTOR', 'STATE', 'EXPIRES', 'LAST-USED', 'AGE'];
      io.stdout(
        print(opts.output, apiTokens, {
          table: (items) => table(headers, items.map(cells)),
          wide: (items) =>
            table(
              [...headers, 'CREATED', 'REVOKED'],
              items.map((t) => [...cells(t), t.createdAt, t.revokedAt ?? '']),
            ),
          name: (t) => `token/${t.name}`,
        }),
      );
    });

  tokens
    .command('revoke')
    .description('revoke a token at once')
    .argument('<id>', 'token ID (from tokens list)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { revokeApiToken: t } = await connect(cmd)<{ revokeApiToken: Token }>(
        gql.REVOKE_TOKEN,
        {
          id,
        },
      );
      io.stdout(`token/${t.name} revoked\n`);
    });
}
