import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIDECAR_REDIS_COMMANDS, sidecarAclRules } from './sidecar-credentials.js';

/** Every command BullMQ's Lua scripts call by name (`rcall("…")`, `redis.call('…')`). */
function bullmqScriptCommands(): string[] {
  const dir = join('node_modules', 'bullmq', 'dist', 'esm', 'scripts');
  const commands = new Set<string>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.js'))) {
    const source = readFileSync(join(dir, file), 'utf8');
    for (const match of source.matchAll(/(?:rcall|redis\.p?call)\(\s*["']([A-Za-z]+)["']/g)) {
      commands.add(match[1]!.toLowerCase());
    }
  }
  return [...commands].sort();
}

describe("the sidecar's Redis commands", () => {
  it("are exactly the commands of the installed BullMQ's scripts, plus its connection's", () => {
    // paginate's HSCAN/SSCAN (Queue getters, never the worker) go through a variable and stay out.
    expect([...SIDECAR_REDIS_COMMANDS.scripts].sort()).toEqual(bullmqScriptCommands());
  });

  it('grant nothing but those commands on the own queue', () => {
    const rules = sidecarAclRules('fleet', 'c1', ['ab']);
    expect(rules.filter((rule) => rule.startsWith('+') || rule.startsWith('-'))).toEqual(
      [...SIDECAR_REDIS_COMMANDS.connection, ...SIDECAR_REDIS_COMMANDS.scripts].map((c) => `+${c}`),
    );
    expect(rules.filter((rule) => /^[~&%]/.test(rule))).toEqual([
      '~fleet:{sidecar.c1}:*',
      '&fleet:{sidecar.c1}:*',
    ]);
  });
});
