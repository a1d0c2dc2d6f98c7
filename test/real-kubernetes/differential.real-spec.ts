import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { RealControlPlane } from '../support/control-plane/control-plane.js';
import { runScript, type DifferentialTarget } from '../support/control-plane/differential.js';
import { fixtureCrdFiles } from '../support/fixtures.js';
import { KubeApiServerEmulator } from '../support/kube-apiserver/index.js';
import { DIFFERENTIAL_SCRIPTS } from './differential-scripts.js';

// The emulated kube-apiserver proven against the real one: every script of
// differential-scripts.ts runs on both, with the same CRDs and identities, and the normalised
// answers (status codes, reasons, messages, bodies) must be equal.

describe('the emulated kube-apiserver answers as the real one does', () => {
  let emulator: KubeApiServerEmulator;
  let real: RealControlPlane;
  let targets: { emulator: DifferentialTarget; real: DifferentialTarget };

  beforeAll(async () => {
    emulator = new KubeApiServerEmulator();
    await emulator.start();
    emulator.loadCrdFiles(fixtureCrdFiles());
    real = await RealControlPlane.start({ name: 'differential', controllers: false });
    await real.installCrds(fixtureCrdFiles());
    const admin = real.admin;
    targets = {
      emulator: {
        url: emulator.url,
        caPem: emulator.caPem,
        credentials: {
          admin: {
            token: emulator.addUser('kubernetes-admin', ['system:masters', 'system:authenticated']),
          },
          bob: { token: emulator.addUser('bob', ['system:authenticated']) },
        },
      },
      real: {
        url: real.url,
        caPem: real.ca.certPem,
        credentials: { admin, bob: real.ca.issueClient('bob') },
      },
    };
  }, 180_000);
  afterAll(async () => {
    await emulator?.stop();
    await real?.stop();
  });

  it.each(DIFFERENTIAL_SCRIPTS.map((s) => [s.name, s] as const))('%s', async (_, script) => {
    const [onEmulator, onReal] = await Promise.all([
      runScript(targets.emulator, script),
      runScript(targets.real, script),
    ]);
    expect(onEmulator).toEqual(onReal);
  });
});
