import {
  Observable,
  ServerConfiguration,
  createConfiguration,
  type Configuration,
  type KubeConfig,
  type ObservableMiddleware,
} from '@kubernetes/client-node';

/** Longest an API-server request (not a watch) may take, response body included. */
export const API_SERVER_TIMEOUT_MS = 30_000;

/**
 * Gives every request its own deadline: without one, an API server that accepts a request and
 * never answers holds the caller forever (client-node sets no timeout). A timed-out request
 * rejects with the signal's TimeoutError.
 */
function deadline(timeoutMs: number): ObservableMiddleware {
  return {
    pre: (request) => {
      request.setSignal(AbortSignal.timeout(timeoutMs));
      return new Observable(Promise.resolve(request));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
}

/**
 * What `kubeConfig.makeApiClient` builds its clients on, plus the deadline: every generated API
 * client of the fleet's processes is made on one of these (`new CoreV1Api(config)`).
 */
export function apiConfigurationWithDeadline(
  kubeConfig: KubeConfig,
  timeoutMs = API_SERVER_TIMEOUT_MS,
): Configuration {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig: no current cluster');
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kubeConfig },
    middleware: [deadline(timeoutMs)],
  });
}
