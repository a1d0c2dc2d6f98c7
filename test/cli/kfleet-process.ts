import { spawn } from 'node:child_process';
import { join } from 'node:path';

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
