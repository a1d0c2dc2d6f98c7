import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiServersFor } from './api-servers.js';

const dir = mkdtempSync(join(tmpdir(), 'api-servers-'));
const kubeconfig = (name: string, server: string) => {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server } }],
      users: [{ name, user: { token: name } }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      'current-context': name,
    }),
  );
  return path;
};
const own = kubeconfig('own', 'https://own.example:6443');
const workload = kubeconfig('workload', 'https://workload.example:6443');
const management = kubeconfig('management', 'https://management.example:6443');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('apiServersFor', () => {
  it('gives a standalone driver one API server for both targets', () => {
    const servers = apiServersFor(['workload'], { KUBECONFIG: own });
    expect(servers.single).toBe(true);
    expect(servers.client('management')).toBe(servers.client('workload'));
    expect(servers.kubeConfig('workload').getCurrentCluster()?.server).toBe(
      'https://own.example:6443',
    );
  });

  it('gives a two-cluster topology its own server as management and the workload kubeconfig', () => {
    const servers = apiServersFor(['management', 'workload'], {
      KUBECONFIG: own,
      WORKLOAD_KUBECONFIG: workload,
    });
    expect(servers.single).toBe(false);
    expect(servers.kubeConfig('management').getCurrentCluster()?.server).toBe(
      'https://own.example:6443',
    );
    expect(servers.kubeConfig('workload').getCurrentCluster()?.server).toBe(
      'https://workload.example:6443',
    );
  });

  it('refuses a two-cluster topology without the workload kubeconfig, naming the variable', () => {
    expect(() => apiServersFor(['management', 'workload'], { KUBECONFIG: own })).toThrow(
      /^WORKLOAD_KUBECONFIG: required/,
    );
  });

  it('Cluster API: the sidecar on the workload cluster, the management cluster from MANAGEMENT_KUBECONFIG', () => {
    const servers = apiServersFor(
      ['management', 'workload'],
      { KUBECONFIG: own, MANAGEMENT_KUBECONFIG: management },
      'workload',
    );
    expect(servers.single).toBe(false);
    expect(servers.kubeConfig('workload').getCurrentCluster()?.server).toBe(
      'https://own.example:6443',
    );
    expect(servers.kubeConfig('management').getCurrentCluster()?.server).toBe(
      'https://management.example:6443',
    );
  });

  it("Cluster API without MANAGEMENT_KUBECONFIG: OpenShift's own Cluster API, one server", () => {
    const servers = apiServersFor(['management', 'workload'], { KUBECONFIG: own }, 'workload');
    expect(servers.single).toBe(true);
  });
});
