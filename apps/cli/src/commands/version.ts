import type { Command } from 'commander';
// The release alone, not the @fleet/contracts barrel: that loads ioredis and zod, which kfleet's
// start-up would pay on every command (docs/PERFORMANCE.md, kfleet start-up).
import { FLEET_RELEASE } from '@fleet/contracts/release';
import { CliError } from '../errors.js';
import { print, table, type OutputFormat } from '../format.js';
import type { CommandContext } from './context.js';

export interface Versions {
  client: { version: string };
  server?: { version: string; contractVersion: number; url: string };
}

/** `kfleet version`: the client's release and, unless --client, the API's (`GET /version`). */
export function addVersionCommand(
  program: Command,
  { io, connection, readOutput }: CommandContext,
): void {
  program
    .command('version')
    .description("the client's version and the API server's")
    .option('--client', 'only the client: no request')
    .addOption(readOutput())
    .action(async (opts: { client?: boolean; output: OutputFormat }, cmd: Command) => {
      const versions: Versions = { client: { version: FLEET_RELEASE } };
      let failure: CliError | undefined;
      if (!opts.client) {
        const { apiUrl } = await connection(cmd);
        const url = `${apiUrl.replace(/\/+$/, '')}/version`;
        try {
          const res = await (io.fetch ?? fetch)(url);
          if (!res.ok) throw new Error(`HTTP ${res.status}`);
          const body = (await res.json()) as { version: string; contractVersion: number };
          versions.server = { ...body, url: apiUrl };
        } catch (err) {
          const cause = (err as { cause?: { code?: string } }).cause?.code;
          failure = new CliError(
            `cannot read the server version at ${url}: ${cause ?? (err as Error).message}`,
          );
        }
      }
      io.stdout(
        print(opts.output, versions, {
          table: ([v]) =>
            table(
              ['COMPONENT', 'VERSION', 'CONTRACT', 'URL'],
              [
                ['client', v!.client.version, '', ''],
                ...(v!.server
                  ? [
                      [
                        'server',
                        v!.server.version,
                        String(v!.server.contractVersion),
                        v!.server.url,
                      ],
                    ]
                  : []),
              ],
            ),
          name: (v) => `version/${v.client.version}`,
        }),
      );
      // The client's version is printed either way; an unreachable server still fails the command.
      if (failure) throw failure;
    });
}
