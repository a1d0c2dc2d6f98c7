import { z } from 'zod';

import type { DiscoveryFailure } from '../types.js';
import { describeIssues } from '../zod-issues.js';

export const PROXY_NAME = 'cluster';

/**
 * What the cluster-wide Proxy asks of every component that leaves the cluster: the proxy URLs
 * and no-proxy list from its *status* (the Cluster Network Operator's validated and completed
 * view: status.noProxy adds the cluster's own networks, the API server and the instance
 * metadata service to the admin's spec.noProxy), and whether the admin added a trusted CA.
 */
export interface ClusterProxy {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
  /**
   * spec.trustedCA.name (a ConfigMap in openshift-config): when set, the proxy's TLS is signed by
   * that CA, which OpenShift injects, with the system CAs, into ConfigMaps labelled
   * config.openshift.io/inject-trusted-cabundle=true.
   */
  trustedCA?: string;
}

const nonEmpty = z
  .string()
  .optional()
  .transform((v) => (v ? v : undefined));

const ProxyObject = z.object({
  spec: z.object({ trustedCA: z.object({ name: nonEmpty }).optional() }).optional(),
  status: z.object({ httpProxy: nonEmpty, httpsProxy: nonEmpty, noProxy: nonEmpty }).optional(),
});

/**
 * Reads Proxy/cluster (config.openshift.io/v1). Absent, or present with nothing set, is a
 * cluster without a proxy (every cluster has the object; most leave it empty).
 */
export function parseClusterProxy(
  object: unknown,
): { ok: true; value: ClusterProxy | undefined } | DiscoveryFailure {
  if (object === undefined || object === null) return { ok: true, value: undefined };
  const parsed = ProxyObject.safeParse(object);
  if (!parsed.success) {
    return {
      ok: false,
      reason: 'InvalidProxy',
      message: `Proxy ${PROXY_NAME}: ${describeIssues(parsed.error, '')}`,
    };
  }
  const { spec, status } = parsed.data;
  const value: ClusterProxy = {
    ...(status?.httpProxy ? { httpProxy: status.httpProxy } : {}),
    ...(status?.httpsProxy ? { httpsProxy: status.httpsProxy } : {}),
    ...(status?.noProxy ? { noProxy: status.noProxy } : {}),
    ...(spec?.trustedCA?.name ? { trustedCA: spec.trustedCA.name } : {}),
  };
  return { ok: true, value: Object.keys(value).length > 0 ? value : undefined };
}
