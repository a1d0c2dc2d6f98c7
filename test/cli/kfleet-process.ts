import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { run } from '../../apps/cli/src/program.js';

/** The built CLI the kfleet suites run as a real process (`npm test` builds first). */
export const KFLEET = join(process.cwd(), 'dist', 'apps', 'cli', 'src', 'main.js');

export interface KfleetRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs kfleet with exactly `env` (nothing inherited, so no KFLEET_* of the machine leaks in) and
 * `input` on its stdin, which is then closed as a pipe from a script would be.
 */
export function runKfleet(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<KfleetRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [KFLEET, ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/**
 * Runs kfleet's own entry (`run`, what main.ts calls) inside the test process, with the same
 * I/O main.ts wires (files with the owner-only mode, `-` for stdin). For matrices of reads whose
 * subject is the output, not the process: a process start costs about 0.6 s of CPU here, and
 * 75 of them took minutes on a loaded 2-core machine. Exit codes, stdin pipes, file modes and
 * shell completion stay tested through real processes.
 */
export async function runKfleetInProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  input = '',
): Promise<KfleetRun> {
  let stdout = '';
  let stderr = '';
  const code = await run(['node', 'kfleet', ...args], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: { ...env },
    readFile: (path) => (path === '-' ? Promise.resolve(input) : readFile(path, 'utf8')),
    writeFile: async (path, data) => {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await writeFile(path, data, { mode: 0o600 });
      await chmod(path, 0o600);
    },
    now: () => new Date(),
    tty: { stdout: false, stdin: false },
  });
  return { code, stdout, stderr };
}

/** NodePool `general` as an SRE writes it for kfleet: on-demand capacity, a CPU limit. */
export const generalNodePoolYaml = (cpuLimit: number) => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
      requirements:
        - { key: karpenter.sh/capacity-type, operator: In, values: [on-demand] }
  limits:
    cpu: "${cpuLimit}"
`;
