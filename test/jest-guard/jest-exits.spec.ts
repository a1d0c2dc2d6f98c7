// CI has 90 minutes; a Jest that waits forever on an open handle after a failure would burn them
// all. This runs the project's own Jest configuration on a test that fails and leaks a server, and
// requires a non-zero exit within a minute.
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('Jest with the project configuration', () => {
  it('exits non-zero within 60 s when a failing test leaves a handle open', async () => {
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [
        '--experimental-vm-modules',
        '--no-warnings=ExperimentalWarning',
        'node_modules/jest/bin/jest.js',
        '--selectProjects',
        'jest-guard',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, FLEET_JEST_GUARD: '1', NODE_OPTIONS: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const watchdog = setTimeout(() => child.kill('SIGKILL'), 90_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(watchdog);
    const seconds = (Date.now() - started) / 1000;

    expect(output).toContain('fails and leaves a handle open');
    expect(output).toContain('1 failed');
    expect({ code: code === 0 ? 0 : 'non-zero', inTime: seconds < 60 }).toEqual({
      code: 'non-zero',
      inTime: true,
    });
  }, 120_000);
});
