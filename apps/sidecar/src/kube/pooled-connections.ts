import { createHash } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import type { AgentOptions } from 'node:https';
import { Agent, type Dispatcher } from 'undici';

type CreateDispatcher = (
  cluster: Cluster | null,
  agentOptions: AgentOptions,
) => Dispatcher | undefined;

type Credential = string | Buffer | undefined;

const isCredential = (part: unknown): part is Credential =>
  part === undefined || typeof part === 'string' || Buffer.isBuffer(part);

const digest = (part: Credential) =>
  part === undefined ? '' : createHash('sha256').update(part).digest('base64');

/**
 * Makes a KubeConfig's requests share one connection pool and one TLS context.
 *
 * client-node builds a new undici Agent for every request and watch (KubeConfig's private
 * createDispatcher), and each new connection a new TLS context from the kubeconfig's CA and
 * client certificate: every watch of the sidecar (one connection each, ~25) held its own OpenSSL
 * context, ~10 MB of native memory at rest in all (heaptrack, docs/PERFORMANCE.md § sidecar
 * memory), and every request paid a connection and a TLS handshake of its own.
 *
 * Here requests with the same TLS identity (the CA, client certificate and key client-node read
 * for this request, so a rotated file gives a new identity) go through one Agent whose
 * connections are kept alive and share one secure context. When the identity changes, the old
 * Agent is closed gracefully: what runs on it (a watch) finishes there, new requests use the new
 * one. Proxies and plain HTTP keep client-node's own dispatchers.
 */
export function pooledConnections(kubeConfig: KubeConfig): KubeConfig {
  const target = kubeConfig as unknown as { createDispatcher: CreateDispatcher };
  const own = target.createDispatcher.bind(kubeConfig);
  let current: { identity: string; agent: Agent } | undefined;
  target.createDispatcher = (cluster, agentOptions) => {
    const options = kubeConfig.createDispatcherOptions(cluster, agentOptions);
    if (options.type !== 'agent') return own(cluster, agentOptions);
    const { ca, cert, key, pfx, passphrase, ...connect } = options.connect;
    // A kubeconfig gives PEM text or bytes; any other form keeps client-node's own dispatcher.
    if (
      !isCredential(ca) ||
      !isCredential(cert) ||
      !isCredential(key) ||
      !isCredential(pfx) ||
      !isCredential(passphrase)
    )
      return own(cluster, agentOptions);
    const identity = [
      cluster?.server,
      digest(ca),
      digest(cert),
      digest(key),
      digest(pfx),
      digest(passphrase),
      connect.rejectUnauthorized,
      connect.servername,
    ].join('\n');
    if (current?.identity !== identity) {
      const previous = current?.agent;
      const secureContext = createSecureContext({ ca, cert, key, pfx, passphrase });
      current = { identity, agent: new Agent({ connect: { ...connect, secureContext } }) };
      void previous?.close().catch(() => undefined);
    }
    return current.agent;
  };
  return kubeConfig;
}
