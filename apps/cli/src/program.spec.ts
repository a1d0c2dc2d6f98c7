import { describe, expect, it } from '@jest/globals';
import { exitCodeFor, formatError, CliError } from './errors.js';
import { commandPath, everyCommand } from './examples.js';
import { buildProgram, run, type Io } from './program.js';

/** The full --help text, examples (added as help text after) included. */
function helpOf(cmd: import('commander').Command): string {
  let text = '';
  cmd.configureOutput({ writeOut: (s) => void (text += s), writeErr: (s) => void (text += s) });
  cmd.outputHelp();
  return text;
}

/** Runs the CLI in process; any network use fails the test (these cases must not need the API). */
async function kfleet(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
    readFile: (path) => Promise.reject(new Error(`ENOENT: no such file, open '${path}'`)),
    writeFile: () => Promise.reject(new Error('unexpected write')),
    now: () => new Date('2026-01-10T00:00:00Z'),
    fetch: () => Promise.reject(new Error('these cases must fail before any request')),
  };
  const code = await run(['node', 'kfleet', ...args], io);
  return { code, stdout, stderr };
}

describe('argument parsing (exit 2 before any request)', () => {
  it.each([
    [['clusters', 'nope'], /unknown command 'nope'/],
    [['clusters', 'list', '-o', 'xml'], /argument 'xml' is invalid/],
    [['clusters', 'list', '--platform', 'GCP'], /--platform GCP: expected one of AWS, AZURE, CAPI/],
    [['clusters', 'list', '--enabled', '--disabled'], /exclude each other/],
    [['clusters', 'register', 'x', '--region', 'us-east-1'], /required option '--platform/],
    [
      ['clusters', 'register', 'x', '--platform', 'AWS', '--region', 'r', '--label', 'env'],
      /expected key=value/,
    ],
    [['clusters', 'label', 'x', 'a=1', 'a-'], /both set and removed/],
    [['karpenter', 'enable', 'x', '--cas', 'off'], /--cas off: expected disable, keep or migrate/],
    [['karpenter', 'disable', 'x', '--log-level', 'trace'], /expected debug, info or error/],
    [['karpenter', 'enable', 'x', '--feature-gate', 'Drift'], /expected Name=true/],
    [['karpenter', 'enable', 'x', '--expected-generation', 'two'], /expected an integer/],
    [['nodepools', 'apply', 'x'], /required option '-f, --filename/],
    [['nodepools', 'apply', 'x', '-f', 'missing.yaml'], /cannot read missing\.yaml/],
    [['tokens', 'create', 't', '--role', 'root'], /expected one of VIEWER, OPERATOR, ADMIN/],
    [
      ['tokens', 'create', 't', '--role', 'viewer', '--expires-in', 'soon'],
      /expected a positive duration/,
    ],
    [['rollouts', 'start', '-l', 'env=prod'], /give a change/],
    [['rollouts', 'start', '--enable'], /give -l\/--selector \(with a change\) or --plan/],
    [['rollouts', 'start', '--plan', 'p', '-l', 'env=prod'], /--plan and --selector exclude/],
    [['rollouts', 'start', '--plan', 'p', '--enable'], /--plan carries its own change/],
    [['rollouts', 'start', '-l', '', '--enable', '--waves', '1,x'], /"x" is not N or N%/],
    [['rollouts', 'start', '-l', '', '--enable', '--timeout', '5m'], /--timeout goes with --wait/],
    [['rollouts', 'watch', 'x', '--timeout', 'soon'], /--timeout soon: expected a positive/],
    [['karpenter', 'enable', 'x', '--timeout', '1m'], /--timeout goes with --wait/],
    [['clusters', 'list', '-o', 'xml'], /Allowed choices are table, wide, json, yaml, name/],
    [['clusters', 'list', '--condition', 'Degraded=Maybe'], /--condition Degraded=Maybe: expected/],
    [['clusters', 'list', '--sort-by', 'age'], /--sort-by age: expected name, created/],
    [['clusters', 'history', 'x', '--since', '1h', '--step', '2h'], /--step 2h is longer/],
    [['clusters', 'history', 'x', '--since', 'yesterday'], /--since yesterday: expected/],
    [['clusters', 'csr', 'x', '--limit', '0'], /--limit 0: expected an integer of at least 1/],
    [['clusters', 'deregister', 'x'], /cannot be undone; repeat with --yes/],
    [['nodeclass', 'set', 'x'], /give -f <file>, --tag key=value or --clear/],
    [['nodeclass', 'set', 'x', '--tag', 'novalue'], /--tag novalue: expected key=value/],
    [['dead-letters', 'redrive'], /give one dead letter ID or --all/],
    [['dead-letters', 'redrive', 'x', '--all'], /give one dead letter ID or --all/],
    [['completion', 'fish'], /fish: expected bash or zsh/],
    [['clusters', 'reset', 'x'], /give a field, or --all \(not both\)/],
    [['clusters', 'reset', 'x', 'logLevel', '--all'], /give a field, or --all \(not both\)/],
    [['apply'], /required option '-f, --filename/],
    [['apply', '-f', 'missing.yaml'], /cannot read missing\.yaml/],
    [['login', 'not a url', '--token', 't'], /not a url: expected an http\(s\) URL/],
    [['login', 'ftp://fleet', '--token', 't'], /expected an http\(s\) URL/],
  ])('kfleet %j', async (args, message) => {
    const res = await kfleet(...args);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it('--version prints the client version and exits 0', async () => {
    const res = await kfleet('--version');
    expect(res).toMatchObject({ code: 0, stdout: '0.1.0\n' });
  });

  it('every command has --help examples', () => {
    const io = { stdout: () => undefined, stderr: () => undefined, env: {} } as unknown as Io;
    const without = everyCommand(buildProgram(io)).filter(
      (c) => !/\nExamples:\n {2}\S/.test(helpOf(c)),
    );
    expect(without.map(commandPath)).toEqual([]);
  });

  it('help exits 0', async () => {
    const res = await kfleet('clusters', '--help');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/register \[options\] <name>/);
  });

  it('a transport failure is exit 1 and names the URL', async () => {
    const res = await kfleet('--api', 'http://fleet.invalid:4000', 'summary');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^error: cannot reach the fleet API at http:\/\/fleet\.invalid:4000\/graphql/,
    );
  });
});

describe('errors', () => {
  it('maps API codes to exit codes', () => {
    expect(exitCodeFor('BAD_USER_INPUT')).toBe(2);
    expect(exitCodeFor('NOT_FOUND')).toBe(3);
    expect(exitCodeFor('UNAUTHENTICATED')).toBe(4);
    expect(exitCodeFor('FORBIDDEN')).toBe(4);
    expect(exitCodeFor('CONFLICT')).toBe(1);
    expect(exitCodeFor('APPROVAL_NEEDED')).toBe(7);
    expect(exitCodeFor(undefined)).toBe(1);
  });

  it('prints the message with code and field', () => {
    expect(
      formatError(
        new CliError('input.spec.weight: too big', 'BAD_USER_INPUT', 'input.spec.weight'),
      ),
    ).toBe('error: input.spec.weight: too big (code: BAD_USER_INPUT, field: input.spec.weight)');
    expect(formatError(new CliError('nope'))).toBe('error: nope');
  });
});
