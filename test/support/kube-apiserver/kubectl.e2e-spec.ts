import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { KubeApiServerEmulator } from './index.js';

// The real kubectl (v1.32 on these machines) as the client: where it and the emulator disagree,
// the emulator is wrong.
interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('kubectl against the emulator', () => {
  const em = new KubeApiServerEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'emulator-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig');

  const kubectl = (args: string[], input?: string): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile(
        'kubectl',
        [`--kubeconfig=${kubeconfig}`, `--cache-dir=${join(dir, 'cache')}`, ...args],
        { timeout: 20_000, env: { PATH: process.env.PATH ?? '', HOME: dir } },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      );
      if (input !== undefined) child.stdin?.end(input);
    });

  beforeAll(async () => {
    await em.start();
    writeFileSync(kubeconfig, em.kubeconfigYaml());
  });
  afterAll(async () => {
    await em.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects over TLS, verifying the CA from the kubeconfig, and sends its token', async () => {
    const r = await kubectl(['get', 'namespace', 'kube-system', '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'kube-system' },
    });
  });
});
