import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CertificateAuthority } from './certificates.js';
import { pooledConnections } from '../../../apps/sidecar/src/kube/pooled-connections.js';

// What the pool is for, seen from the API server: TLS handshakes. client-node alone opens a new
// connection (and builds a new TLS context) for every request; through the pool, requests with the
// same credentials reuse the pool's few (undici may open a second one while the first is still being
// released after a response), and rotated credentials (a new client certificate in the file the
// kubeconfig names) are used from the next request on.
describe('pooledConnections', () => {
  const ca = new CertificateAuthority('pooled-connections-test-ca');
  const serving = ca.issueServing(['127.0.0.1']);
  const dir = mkdtempSync(join(tmpdir(), 'pooled-connections-'));
  const caFile = join(dir, 'ca.crt');
  const certFile = join(dir, 'client.crt');
  const keyFile = join(dir, 'client.key');
  let server: Server;
  let handshakes = 0;
  const clientCertificates: string[] = [];

  function writeClientCertificate(commonName: string) {
    const client = ca.issueClient(commonName);
    writeFileSync(certFile, client.certPem);
    writeFileSync(keyFile, client.keyPem);
  }

  function kubeConfig(): KubeConfig {
    const { port } = server.address() as AddressInfo;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caFile }],
      users: [{ name: 'u', certFile, keyFile }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  }

  async function listNamespaces(kc: KubeConfig, times: number) {
    const api = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < times; i++) await api.listNamespace();
  }

  beforeAll(async () => {
    writeFileSync(caFile, ca.certPem);
    writeClientCertificate('first');
    server = createServer(
      { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true },
      (req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', items: [] }));
      },
    );
    server.on('secureConnection', (socket) => {
      handshakes++;
      const peer = socket.getPeerCertificate();
      clientCertificates.push(String(peer.subject?.CN ?? ''));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('without it, client-node opens a connection per request (the cost it removes)', async () => {
    handshakes = 0;
    await listNamespaces(kubeConfig(), 8);
    expect(handshakes).toBe(8);
  });

  it("requests with the same credentials share the pool's connections", async () => {
    handshakes = 0;
    clientCertificates.length = 0;
    await listNamespaces(pooledConnections(kubeConfig()), 8);
    expect(handshakes).toBeGreaterThan(0);
    expect(handshakes).toBeLessThanOrEqual(2);
    expect(new Set(clientCertificates)).toEqual(new Set(['first']));
  });

  it('a rotated client certificate is presented from the next request on', async () => {
    const kc = pooledConnections(kubeConfig());
    await listNamespaces(kc, 2);
    handshakes = 0;
    clientCertificates.length = 0;
    writeClientCertificate('rotated');
    await listNamespaces(kc, 8);
    expect(handshakes).toBeGreaterThan(0);
    expect(handshakes).toBeLessThanOrEqual(2);
    expect(new Set(clientCertificates)).toEqual(new Set(['rotated']));
  });
});
