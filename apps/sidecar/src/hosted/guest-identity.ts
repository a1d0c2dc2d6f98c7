import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { NODECLAIM, NODEPOOL } from '@fleet/contracts';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  OPENSHIFT_EC2_NODE_CLASS,
} from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { ClusterClient } from '../kube/cluster-client.js';

/**
 * The hosted sidecar's own identity in the guest. HyperShift's `hcco-kubeconfig` is
 * `system:hosted-cluster-config`, admin-equivalent in the guest; the sidecar needs only the
 * fleet's Karpenter objects there. A one-shot bootstrap (deploy/sidecar/hosted/guest-bootstrap.yaml)
 * uses HyperShift's kubeconfig once to create this service account, its ClusterRole and a token,
 * and hands the sidecar a kubeconfig for it; the sidecar's pod never mounts the admin one.
 */
export const GUEST_NAMESPACE = 'karpenter-fleet';
export const GUEST_SERVICE_ACCOUNT = 'karpenter-fleet-sidecar';
const GUEST_TOKEN_SECRET = 'karpenter-fleet-sidecar-token';
/** The management Secret (HCP namespace, key `kubeconfig`) the sidecar's pod mounts. */
export const GUEST_KUBECONFIG_SECRET = 'karpenter-fleet-guest-kubeconfig';

const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
const group = (apiVersion: string) => apiVersion.split('/')[0] ?? '';

/**
 * What the sidecar does in the guest, and no more: keep its NodePools and OpenshiftEC2NodeClass
 * (watch, server-side apply, prune), read NodeClaims to wait out a disable, and read every
 * NodePool to tell a guest admin's own pools from the fleet's.
 */
export function guestSidecarRbac(): (KubernetesObject & Record<string, unknown>)[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GUEST_NAMESPACE, labels } },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: GUEST_SERVICE_ACCOUNT, namespace: GUEST_NAMESPACE, labels },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: GUEST_SERVICE_ACCOUNT, labels },
      rules: [
        {
          apiGroups: [group(NODEPOOL.apiVersion)],
          resources: [NODEPOOL.plural],
          verbs: ['list', 'watch', 'create', 'patch', 'delete'],
        },
        {
          apiGroups: [group(OPENSHIFT_EC2_NODE_CLASS.apiVersion)],
          resources: [OPENSHIFT_EC2_NODE_CLASS.plural],
          verbs: ['list', 'watch', 'create', 'patch', 'delete'],
        },
        {
          apiGroups: [group(NODECLAIM.apiVersion)],
          resources: [NODECLAIM.plural],
          verbs: ['list'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: GUEST_SERVICE_ACCOUNT, labels },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: GUEST_SERVICE_ACCOUNT,
      },
      subjects: [
        { kind: 'ServiceAccount', name: GUEST_SERVICE_ACCOUNT, namespace: GUEST_NAMESPACE },
      ],
    },
    // A token that does not expire: the sidecar has no guest credential to request bound ones
    // with, and nothing in the HCP namespace could renew one without holding the admin kubeconfig.
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: {
        name: GUEST_TOKEN_SECRET,
        namespace: GUEST_NAMESPACE,
        labels,
        annotations: { 'kubernetes.io/service-account.name': GUEST_SERVICE_ACCOUNT },
      },
    },
  ];
}

export interface GuestBootstrapOptions {
  /** HyperShift's guest client (hcco-kubeconfig), used for this bootstrap only. */
  guestAdmin: ClusterClient;
  /** The bootstrap's management client: may update the one Secret `GUEST_KUBECONFIG_SECRET`. */
  management: ClusterClient;
  hcpNamespace: string;
  log: Logger;
  /** How long the guest's token controller may take to fill the token (default 60 s). */
  timeoutMs?: number;
}

/**
 * Creates (or re-asserts) the guest identity and writes its kubeconfig into the HCP namespace.
 * Idempotent: a re-run after a lost Secret or an edited role puts both back.
 */
export async function bootstrapGuestIdentity(options: GuestBootstrapOptions): Promise<void> {
  const { guestAdmin, management, hcpNamespace, log } = options;
  for (const object of guestSidecarRbac()) await guestAdmin.apply(object);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let data: Record<string, string> | undefined;
  for (;;) {
    const secret = await guestAdmin.read<KubernetesObject & { data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'Secret',
      name: GUEST_TOKEN_SECRET,
      namespace: GUEST_NAMESPACE,
    });
    if (secret?.data?.token) {
      data = secret.data;
      break;
    }
    if (Date.now() > deadline)
      throw new Error(
        `the guest's token controller did not fill Secret ${GUEST_NAMESPACE}/${GUEST_TOKEN_SECRET}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const token = Buffer.from(data.token ?? '', 'base64').toString();
  // The server and CA HyperShift's own kubeconfig uses: the address that works from the HCP namespace.
  const kubeconfig = guestKubeconfig(guestAdmin.connection(), token);
  await management.mergePatch({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: GUEST_KUBECONFIG_SECRET, namespace: hcpNamespace },
    stringData: { kubeconfig },
  } as KubernetesObject);
  log.info(
    { secret: `${hcpNamespace}/${GUEST_KUBECONFIG_SECRET}`, guestNamespace: GUEST_NAMESPACE },
    "guest identity bootstrapped: the sidecar's kubeconfig is written",
  );
}

function guestKubeconfig(cluster: ReturnType<ClusterClient['connection']>, token: string): string {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      {
        name: 'guest',
        server: cluster.server,
        ...(cluster.certificateAuthorityData ? { caData: cluster.certificateAuthorityData } : {}),
        ...(cluster.insecureSkipTLSVerify ? { skipTLSVerify: true } : {}),
      },
    ],
    users: [{ name: GUEST_SERVICE_ACCOUNT, token }],
    contexts: [{ name: 'guest', cluster: 'guest', user: GUEST_SERVICE_ACCOUNT }],
    currentContext: 'guest',
  });
  return config.exportConfig();
}
