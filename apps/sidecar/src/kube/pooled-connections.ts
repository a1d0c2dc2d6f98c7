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

/** Strings by value, Buffers by content: client-node reads a file-based credential anew each time. */
const same = (a: unknown, b: unknown) =>
  Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : a === b;

/**
 * Makes a KubeConfig's requests share one connection pool and one TLS context.
 *
 * client-node builds a new undici Agent for every request and watch (KubeConfig's private
 * createDispatcher), and each new connection a new TLS context from the kubeconfig's CA and
 * client certificate: every watch of the sidecar (one connection each, ~25) held its own OpenSSL
 * context (the pool took ~11 MB off the sidecar's RSS at rest: docs/PERFORMANCE.md § Sidecar
 * memory at rest), and every request paid a connection and a TLS handshake of its own.
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
  let current: { identity: readonly unknown[]; agent: Agent } | undefined;
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
      ca,
      cert,
      key,
      pfx,
      passphrase,
      connect.rejectUnauthorized,
      connect.servername,
    ];
    if (!current || !identity.every((part, i) => same(part, current?.identity[i]))) {
      const previous = current?.agent;
      const secureContext = createSecureContext({ ca, cert, key, pfx, passphrase });
      current = { identity, agent: new Agent({ connect: { ...connect, secureContext } }) };
      void previous?.close().catch(() => undefined);
    }
    return current.agent;
  };
  return kubeConfig;
}
