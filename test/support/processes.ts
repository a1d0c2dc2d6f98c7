import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningProcess {
  child: ChildProcess;
  /** Everything the process printed, for failure messages. */
  output(): string;
  /** Resolves when the process has exited, with its exit code or signal. */
  exited: Promise<ProcessExit>;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs a built entry point (dist/...) as a real process, as a deployment would. */
export function startProcess(
  entry: string,
  env: Record<string, string>,
  name = entry,
): RunningProcess {
  return spawnProcess({
    command: process.execPath,
    args: [join(process.cwd(), entry)],
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    name,
  });
}

export interface ProcessSpec {
  command: string;
  args: string[];
  /** The whole environment: nothing is inherited. */
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as this user and group (the caller must be root), as a container runtime would. */
  uid?: number;
  gid?: number;
  name: string;
}

export function spawnProcess({
  command,
  args,
  env,
  cwd,
  uid,
  gid,
  name,
}: ProcessSpec): RunningProcess {
  const child = spawn(command, args, {
    env,
    cwd,
    ...(uid === undefined ? {} : { uid }),
    ...(gid === undefined ? {} : { gid }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<ProcessExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => `--- ${name} ---\n${output}`,
    exited,
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
