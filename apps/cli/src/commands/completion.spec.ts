import { describe, expect, it } from '@jest/globals';
import { buildProgram, run, type Io } from '../program.js';
import { locate } from './completion.js';

const io = (out: { text: string }): Io => ({
  stdout: (t) => void (out.text += t),
  stderr: () => undefined,
  env: {},
  readFile: () => Promise.reject(Object.assign(new Error('absent'), { code: 'ENOENT' })),
  writeFile: () => Promise.reject(new Error('unexpected write')),
  now: () => new Date(),
  fetch: () => Promise.reject(new Error('no API here')),
});

const complete = async (...words: string[]) => {
  const out = { text: '' };
  const code = await run(['node', 'kfleet', '__complete', ...words], io(out));
  return { code, lines: out.text.split('\n').filter(Boolean) };
};

describe('completion', () => {
  it('completes commands, subcommands, flags and choices from the command tree', async () => {
    expect((await complete('clu')).lines).toEqual(['clusters']);
    expect((await complete('clusters', '')).lines).toEqual(
      expect.arrayContaining(['list', 'get', 'history', 'csr', 'rotate-credentials']),
    );
    expect((await complete('clusters', 'list', '--w')).lines).toEqual(['--watch']);
    expect((await complete('clusters', 'list', '-o', '')).lines).toEqual([
      'table',
      'wide',
      'json',
      'yaml',
      'name',
    ]);
    // Global flags complete too, and the hidden command never shows.
    expect((await complete('--con')).lines).toEqual(['--context']);
    expect((await complete('__')).lines).toEqual([]);
  });

  it('knows when a cluster name is typed, past flags and their values', () => {
    const program = buildProgram(io({ text: '' }));
    const where = locate(program, ['--api', 'http://x', 'clusters', 'get', '-o', 'json', 'ocp']);
    expect(where).toMatchObject({
      argument: 'cluster',
      current: 'ocp',
      globals: { api: 'http://x' },
    });
    expect(where.command.name()).toBe('get');
  });

  it('prints nothing, and succeeds, when the API cannot list clusters', async () => {
    expect(await complete('clusters', 'get', '')).toEqual({ code: 0, lines: [] });
  });
});
