import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { storeV1beta1 } from '../support/control-plane/capi-clusters.js';
import { RealControlPlane } from '../support/control-plane/control-plane.js';
import {
  isRequest,
  runScript,
  type DifferentialTarget,
  type RequestStep,
} from '../support/control-plane/differential.js';
import { ACCEPTED_DIFFERENCES } from './differential-accepted.js';
import { requestGrant } from './differential-coverage.js';
import { CREDENTIALS_REQUEST_CRD_PATH, fixtureCrdFiles } from '../support/fixtures.js';
import { KubeApiServerEmulator } from '../support/kube-apiserver/index.js';
import { upstreamBinary } from '../support/upstream-binaries.js';
import { DIFFERENTIAL_SCRIPTS } from './differential-scripts.js';

// The emulated kube-apiserver proven against the real one: every script of
// differential-scripts.ts runs on both, with the same CRDs and identities, and the normalised
// answers (status codes, reasons, messages, bodies) must be equal.

const accepted = (step: RequestStep): boolean => {
  const grant = requestGrant(step.method, step.path);
  return ACCEPTED_DIFFERENCES.some((d) => d.request === grant);
};

/** Where two answers differ, as `path: emulator ≠ real` lines (the first 25). */
function differingPaths(emulator: unknown, real: unknown, path = ''): string[] {
  if (isDeepStrictEqual(emulator, real)) return [];
  const bothObjects = emulator && real && typeof emulator === 'object' && typeof real === 'object';
  if (!bothObjects || Array.isArray(emulator) !== Array.isArray(real))
    return [`  ${path || '.'}: ${JSON.stringify(emulator)} ≠ ${JSON.stringify(real)}`];
  const keys = new Set([...Object.keys(emulator), ...Object.keys(real)]);
  return [...keys]
    .flatMap((k) =>
      differingPaths(
        (emulator as Record<string, unknown>)[k],
        (real as Record<string, unknown>)[k],
        `${path}.${k}`,
      ),
    )
    .slice(0, 25);
}

const KUBECTL_COMMANDS: string[][] = [
  ['explain', 'nodepools.spec.disruption'],
  ['explain', 'ec2nodeclasses.spec.kubelet'],
  ['explain', 'machinedeployments.spec.template.spec', '--api-version=cluster.x-k8s.io/v1beta1'],
  ['get', 'nodepools', '-l', 'watched=table'],
  ['get', 'configmaps', '-n', 'default', '-l', 'watched=table'],
  ['get', 'nodepools', 'tabled', '-o', 'jsonpath={.spec.template.spec.nodeClassRef}'],
  ['auth', 'can-i', 'create', 'nodepools'],
  ['auth', 'can-i', '--list', '--as=dave', '-n', 'default'],
  // Not `extra`: the credential's id differs by kind (a client certificate, a token).
  ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}'],
];

describe('the emulated kube-apiserver answers as the real one does', () => {
  let emulator: KubeApiServerEmulator;
  let real: RealControlPlane;
  let targets: { emulator: DifferentialTarget; real: DifferentialTarget };
  let adminToken: string;

  beforeAll(async () => {
    // One AKSNodeClass CRD, OpenShift's fork (a second file of the same name would be refused by
    // the real server and replace the first in the emulator).
    const crdFiles = [
      ...fixtureCrdFiles().filter((f) => !f.endsWith('/karpenter.azure.com_aksnodeclasses.yaml')),
      CREDENTIALS_REQUEST_CRD_PATH,
    ];
    emulator = new KubeApiServerEmulator();
    await emulator.start();
    emulator.loadCrdFiles(crdFiles);
    // Only the controllers whose work the scripts compare: a namespace's deletion, the garbage
    // collector's cascading deletion and the signing of approved CSRs.
    real = await RealControlPlane.start({
      name: 'differential',
      controllers: [
        'namespace-controller',
        'garbage-collector-controller',
        'certificatesigningrequest-signing-controller',
      ],
    });
    // Cluster API stored as v1beta1, as in the real Cluster API suites (capi-clusters.ts).
    await real.installCrds(crdFiles, (crd) =>
      (crd.spec as { group?: string }).group === 'cluster.x-k8s.io' ? storeV1beta1(crd) : crd,
    );
    adminToken = emulator.addUser('kubernetes-admin', ['system:masters', 'system:authenticated']);
    const emulatorTokens = new Map<string, string>([['admin', adminToken]]);
    const realClients = new Map([['admin', real.admin]]);
    targets = {
      emulator: {
        url: emulator.url,
        caPem: emulator.caPem,
        compact: () => Promise.resolve(emulator.compact()),
        credentials: (identity) => {
          if (!emulatorTokens.has(identity))
            emulatorTokens.set(identity, emulator.addUser(identity, ['system:authenticated']));
          return { token: emulatorTokens.get(identity)! };
        },
      },
      real: {
        url: real.url,
        caPem: real.ca.certPem,
        // etcd compacted, and the API server restarted so that its watch cache forgets too
        // (until then it serves old revisions itself).
        compact: async () => {
          await real.compactEtcd();
          await real.restartApiServer();
        },
        credentials: (identity) => {
          if (!realClients.has(identity)) realClients.set(identity, real.ca.issueClient(identity));
          return realClients.get(identity)!;
        },
      },
    };
  }, 180_000);
  afterAll(async () => {
    await emulator?.stop();
    await real?.stop();
  });

  it.each(DIFFERENTIAL_SCRIPTS.map((s) => [s.name, s] as const))('%s', async (_, script) => {
    // What the emulator authorized, to hold each step's `authorizes` claim to account.
    const decided = new Set<string>();
    const stopRecording = emulator.authorizer.onDecision(({ attributes: a, allowed }) => {
      if (allowed && a.resourceRequest)
        decided.add(
          `${a.verb} ${a.apiGroup ?? ''}/${a.resource ?? ''}${a.subresource ? `/${a.subresource}` : ''}`,
        );
    });
    const [onEmulator, onReal] = await Promise.all([
      runScript(targets.emulator, script),
      runScript(targets.real, script),
    ]).finally(stopRecording);
    const dump = process.env.FLEET_DIFFERENTIAL_DUMP;
    if (dump)
      writeFileSync(
        `${dump}/${script.name.replace(/[^a-zA-Z0-9]+/g, '-').slice(0, 80)}.json`,
        JSON.stringify({ emulator: onEmulator, real: onReal }, null, 2),
      );
    const requests = script.steps.map((step) => (isRequest(step) ? step : undefined));
    const unclaimed = requests
      .flatMap((step) => step?.authorizes ?? [])
      .filter((grant) => !decided.has(grant));
    expect(unclaimed).toEqual([]);
    const unexpected = requests.flatMap((step, i) =>
      step?.expect !== undefined && onReal[i]!.status !== step.expect
        ? [{ step: i, expected: step.expect, answer: onReal[i] }]
        : [],
    );
    expect(unexpected).toEqual([]);
    // Only the steps that differ, each with its request: a failure reads as what to fix.
    const differences = requests.flatMap((step, i) =>
      isDeepStrictEqual(onEmulator[i], onReal[i]) || (step && accepted(step))
        ? []
        : [
            `${i}: ${step ? `${step.method} ${step.path}` : 'compact'}`,
            ...differingPaths(onEmulator[i], onReal[i]),
          ],
    );
    expect(differences).toEqual([]);
  });

  // After the scripts, whose objects they read: kubectl's own requests (OpenAPI v3 for explain,
  // Table for get, protobuf access reviews) and what it makes of the answers.
  it.each(KUBECTL_COMMANDS.map((args) => [args.join(' '), args] as const))(
    'kubectl %s',
    async (_, args) => {
      const [onEmulator, onReal] = await Promise.all([
        kubectl(emulator.kubeconfigYaml('default', adminToken), args),
        kubectl(real.kubeconfigYaml(), args),
      ]);
      expect(onEmulator).toEqual(onReal);
    },
  );
});

/** kubectl's exit code and output, with what differs by nature (ages) masked. */
async function kubectl(
  kubeconfigYaml: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'differential-kubectl-'));
  try {
    writeFileSync(join(dir, 'kubeconfig'), kubeconfigYaml);
    return await new Promise((resolve) =>
      execFile(
        upstreamBinary('kubectl'),
        [`--kubeconfig=${join(dir, 'kubeconfig')}`, `--cache-dir=${join(dir, 'cache')}`, ...args],
        { timeout: 20_000, env: { PATH: process.env.PATH ?? '', HOME: dir } },
        (err, stdout, stderr) =>
          resolve({
            code: err ? Number((err as { code?: number }).code ?? 1) : 0,
            stdout: stdout.replace(/\b\d+(?:s|m\d*s?|h\d*m?|d\d*h?)\b/g, '<age>'),
            stderr,
          }),
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
