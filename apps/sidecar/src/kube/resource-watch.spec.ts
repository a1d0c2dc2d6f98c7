import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeApiServerEmulator, eventually } from '@fleet/testing';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { ClusterClient } from './cluster-client.js';
import { pino } from 'pino';
import { CONFIG_MAP } from '@fleet/contracts';
import { ResourceWatch } from './resource-watch.js';

describe('ResourceWatch at rest', () => {
  const em = new KubeApiServerEmulator();
  let kc: KubeConfig;

  beforeAll(async () => {
    await em.start();
    kc = new KubeConfig();
    kc.loadFromString(em.kubeconfigYaml());
  });
  afterAll(() => em.stop());

  it('resumes a quiet watch that client-node gave up on with a new watch, never a list, and still sees what changes next', async () => {
    const watch = new Watch(kc);
    // client-node aborts a watch after 30 s without an event or bookmark; shortened here so the
    // test need not wait that long (the emulator bookmarks once a minute).
    (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = 300;
    const configMaps = new ResourceWatch(
      new ClusterClient(kc),
      watch,
      CONFIG_MAP,
      pino({ level: 'silent' }),
      { namespace: 'default' },
    );
    const path = '/api/v1/namespaces/default/configmaps';
    const requests = (verb: string) => em.requestCount((e) => e.path === path && e.verb === verb);
    configMaps.start();
    try {
      await configMaps.whenSynced();
      // Several inactivity timeouts go by.
      await eventually(() => (requests('watch') >= 4 ? true : undefined), {
        timeoutMs: 10_000,
        what: 'the quiet watch resumed several times',
      }).catch((err: Error) => {
        throw new Error(
          `${err.message}: ${JSON.stringify(em.requests.slice(-10).map((e) => [e.path, e.verb, e.query]))}`,
        );
      });
      expect(requests('list')).toBe(1);
      em.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'late', namespace: 'default' },
      });
      await eventually(() => configMaps.get('late', 'default'), {
        timeoutMs: 5_000,
        what: 'the ConfigMap created after the resumes',
      });
      expect(requests('list')).toBe(1);
    } finally {
      configMaps.stop();
    }
  });

  it('stopped at any moment of its start (list, watch request in flight), it leaves no watch open and delivers nothing after', async () => {
    const configMaps = new ResourceWatch(
      new ClusterClient(kc),
      new Watch(kc),
      CONFIG_MAP,
      pino({ level: 'silent' }),
      { namespace: 'default' },
    );
    const open = () =>
      Object.entries(em.watchCount())
        .filter(([k]) => k.endsWith('configmaps'))
        .reduce((n, [, v]) => n + v, 0);
    const noWatchOpen = (what: string) =>
      eventually(() => (open() === 0 ? true : undefined), {
        timeoutMs: 5_000,
        what,
      }).catch((err: Error) => {
        throw new Error(`${err.message}: ${JSON.stringify(em.watchCount())}`);
      });
    // The first test's watch, stopped, is gone from the server before this one counts.
    await noWatchOpen('no ConfigMap watch open');
    let events = 0;
    configMaps.on(() => events++);
    for (let delay = 0; delay < 30; delay += 2) {
      configMaps.start();
      await new Promise((r) => setTimeout(r, delay));
      configMaps.stop();
      await noWatchOpen(`no watch left open after a stop ${delay} ms into a start`);
    }
    const before = events;
    em.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'after', namespace: 'default' },
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(events).toBe(before);
  });
});
