import { HOSTED_GUEST_KUBECONFIG_SECRET } from '@fleet/discovery';
import { stringify } from 'yaml';

export interface BootstrapInput {
  clusterUid: string;
  clusterName: string;
  reportToken: string;
  apiUrl: string;
  redisUrl: string;
  queuePrefix: string;
  image: string;
  /** HOSTED: the sidecar runs in the HCP namespace of the management cluster. */
  namespace: string;
  /**
   * HOSTED: the sidecar reaches the guest as its own guest service account, through the kubeconfig
   * its guest bootstrap writes in the HCP namespace (HyperShift's namespace: the manifest creates
   * no Namespace), as deploy/sidecar/hosted runs it.
   */
  hosted?: boolean;
  /**
   * CAPI: the Cluster the sidecar runs Karpenter for. With a separate management cluster, its
   * kubeconfig is read from Secret SIDECAR_MANAGEMENT_KUBECONFIG_SECRET, which the SRE creates.
   */
  clusterApi?: { name: string; namespace: string; separateManagementCluster: boolean };
}

/** The management cluster's kubeconfig (key `kubeconfig`), created by the SRE beside the sidecar. */
export const SIDECAR_MANAGEMENT_KUBECONFIG_SECRET = 'karpenter-fleet-management-kubeconfig';
const MANAGEMENT_KUBECONFIG_DIR = '/var/run/secrets/karpenter-fleet/management';
const GUEST_KUBECONFIG_DIR = '/etc/guest-kubeconfig';

/**
 * What an SRE applies to a cluster so its sidecar can start: the credentials as a Secret, a
 * ServiceAccount and the Deployment. RBAC for what the sidecar manages ships with deploy/.
 */
export function bootstrapManifest(input: BootstrapInput): string {
  const labels = {
    'app.kubernetes.io/name': 'karpenter-fleet-sidecar',
    'app.kubernetes.io/part-of': 'karpenter-fleet',
  };
  const separate = input.clusterApi?.separateManagementCluster === true;
  const hosted = input.hosted === true;
  const mounts: { volume: object; mount: object }[] = [];
  if (separate)
    mounts.push({
      volume: {
        name: 'management-kubeconfig',
        secret: { secretName: SIDECAR_MANAGEMENT_KUBECONFIG_SECRET },
      },
      mount: {
        name: 'management-kubeconfig',
        mountPath: MANAGEMENT_KUBECONFIG_DIR,
        readOnly: true,
      },
    });
  if (hosted)
    mounts.push({
      volume: {
        name: 'guest-kubeconfig',
        secret: {
          secretName: HOSTED_GUEST_KUBECONFIG_SECRET,
          // Written by the guest bootstrap Job (deploy/sidecar/hosted/guest-bootstrap.yaml), which
          // may run after the sidecar starts; until then the sidecar reports the guest unreachable.
          optional: true,
          items: [{ key: 'kubeconfig', path: 'kubeconfig' }],
        },
      },
      mount: { name: 'guest-kubeconfig', mountPath: GUEST_KUBECONFIG_DIR, readOnly: true },
    });
  const docs = [
    ...(hosted
      ? []
      : [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: input.namespace, labels } }]),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'karpenter-fleet-sidecar', namespace: input.namespace, labels },
      type: 'Opaque',
      stringData: {
        CLUSTER_ID: input.clusterUid,
        REPORT_TOKEN: input.reportToken,
        API_URL: input.apiUrl,
        REDIS_URL: input.redisUrl,
        QUEUE_PREFIX: input.queuePrefix,
        ...(input.clusterApi
          ? {
              CLUSTER_API_CLUSTER_NAME: input.clusterApi.name,
              CLUSTER_API_NAMESPACE: input.clusterApi.namespace,
              ...(input.clusterApi.separateManagementCluster
                ? { MANAGEMENT_KUBECONFIG: `${MANAGEMENT_KUBECONFIG_DIR}/kubeconfig` }
                : {}),
            }
          : {}),
      },
    },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'karpenter-fleet-sidecar', namespace: input.namespace, labels },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'karpenter-fleet-sidecar', namespace: input.namespace, labels },
      spec: {
        replicas: 1,
        strategy: { type: 'Recreate' },
        selector: { matchLabels: labels },
        template: {
          metadata: {
            labels: hosted
              ? // HyperShift's network policies admit control-plane components by this label.
                {
                  ...labels,
                  'hypershift.openshift.io/control-plane-component': 'karpenter-fleet-sidecar',
                }
              : labels,
            annotations: { 'karpenter-fleet/cluster': input.clusterName },
          },
          spec: {
            serviceAccountName: 'karpenter-fleet-sidecar',
            priorityClassName: 'system-cluster-critical',
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'sidecar',
                image: input.image,
                envFrom: [{ secretRef: { name: 'karpenter-fleet-sidecar' } }],
                resources: {
                  requests: { cpu: '50m', memory: '96Mi' },
                  limits: { memory: '256Mi' },
                },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  runAsNonRoot: true,
                  capabilities: { drop: ['ALL'] },
                },
                ...(hosted
                  ? {
                      env: [
                        {
                          name: 'WORKLOAD_KUBECONFIG',
                          value: `${GUEST_KUBECONFIG_DIR}/kubeconfig`,
                        },
                        // The HCP namespace: where discovery finds the HostedControlPlane.
                        {
                          name: 'SIDECAR_NAMESPACE',
                          valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
                        },
                        { name: 'HOSTED_MODE', value: 'AutoNode' },
                      ],
                    }
                  : {}),
                ...(mounts.length ? { volumeMounts: mounts.map((m) => m.mount) } : {}),
              },
            ],
            ...(mounts.length ? { volumes: mounts.map((m) => m.volume) } : {}),
          },
        },
      },
    },
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}
