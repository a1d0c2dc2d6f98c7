import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface RunningProcess {
  child: ChildProcess;
  /** Everything the process printed, for failure messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs a built entry point (dist/...) as a real process, as a deployment would. */
export function startProcess(
  entry: string,
  env: Record<string, string>,
  name = entry,
): RunningProcess {
  const child = spawn(process.execPath, [join(process.cwd(), entry)], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => `--- ${name} ---\n${output}`,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls until `check` returns a value (not undefined) or throws the last failure at the deadline. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 20_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A TCP port free right now on 127.0.0.1, for a child process that must listen on a known port. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
