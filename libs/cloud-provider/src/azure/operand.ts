import { CREDENTIALS_REQUEST, type KarpenterDesiredState } from '@fleet/contracts';
import type { AzureStandaloneInfrastructure } from '@fleet/discovery';
import type { V1Deployment, V1EnvVar, V1PolicyRule } from '@kubernetes/client-node';
import { canonical } from '../canonical.js';
import { renderFeatureGates } from '../feature-gates.js';
import { ownedLabels } from '../labels.js';
import { controlPlanePlacement } from '../openshift/operand-placement.js';
import { operandRbac } from '../rbac.js';
import type { KubeObject } from '../types.js';
import {
  AKS_NODE_CLASS,
  BOUND_SA_TOKEN_AUDIENCE,
  BOUND_SA_TOKEN_DIR,
  BOUND_SA_TOKEN_VOLUME,
  CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
  CLUSTER_ROLE_NAME,
  CREDENTIALS_REQUEST_NAME,
  CREDENTIALS_SECRET_NAME,
  HEALTH_PROBE_PORT,
  METRICS_PORT,
  OPERAND_NAME,
  OPERAND_NAMESPACE,
  SERVICE_ACCOUNT_NAME,
} from './constants.js';

export interface AzureOperandOptions {
  /** The OpenShift fork of karpenter-provider-azure (PROVISION_MODE=openshift). */
  image: string;
}

export const OPERAND_SELECTOR = { 'app.kubernetes.io/name': OPERAND_NAME };

const operandLabels = (): Record<string, string> =>
  ownedLabels({ 'app.kubernetes.io/name': OPERAND_NAME, 'app.kubernetes.io/part-of': 'karpenter' });

const asKube = (object: object): KubeObject => object as unknown as KubeObject;

/** A key of the operand's cloud-credentials Secret (CCO writes machine-api's key names). */
const fromCredentials = (name: string, key: string): V1EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: CREDENTIALS_SECRET_NAME, key } },
});

/**
 * The fork's settings (pkg/operator/options, pkg/auth/config.go) from discovery, and the
 * cloud-credentials Secret's keys under the names DefaultAzureCredential reads: a client secret
 * for a service principal, or the federated token file (workload identity, the cluster's
 * Manual mode) with the projected service-account token mounted where that key says.
 */
export function operandEnv(
  infra: AzureStandaloneInfrastructure,
  desired: KarpenterDesiredState,
): V1EnvVar[] {
  const federated = infra.credentials.authentication === 'FederatedToken';
  return [
    {
      name: 'SYSTEM_NAMESPACE',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
    },
    { name: 'PROVISION_MODE', value: 'openshift' },
    { name: 'CLUSTER_NAME', value: infra.infraID },
    { name: 'CLUSTER_ENDPOINT', value: infra.apiServerInternalURI },
    { name: 'VNET_SUBNET_ID', value: infra.vnetSubnetID },
    { name: 'AZURE_NODE_RESOURCE_GROUP', value: infra.resourceGroup },
    { name: 'ARM_RESOURCE_GROUP', value: infra.resourceGroup },
    { name: 'LOCATION', value: infra.worker.location },
    { name: 'ARM_CLOUD', value: infra.cloudName },
    // OVN-Kubernetes is the cluster's CNI: the provider configures none on the VM's NIC.
    { name: 'NETWORK_PLUGIN', value: 'none' },
    { name: 'NETWORK_PLUGIN_MODE', value: '' },
    ...(infra.worker.managedIdentityID
      ? [{ name: 'NODE_IDENTITIES', value: infra.worker.managedIdentityID }]
      : []),
    { name: 'DISABLE_WEBHOOK', value: 'true' },
    { name: 'HEALTH_PROBE_PORT', value: String(HEALTH_PROBE_PORT) },
    { name: 'METRICS_PORT', value: String(METRICS_PORT) },
    { name: 'FEATURE_GATES', value: renderFeatureGates(desired.featureGates) },
    { name: 'LOG_LEVEL', value: desired.logLevel },
    fromCredentials('AZURE_SUBSCRIPTION_ID', 'azure_subscription_id'),
    fromCredentials('AZURE_TENANT_ID', 'azure_tenant_id'),
    fromCredentials('AZURE_CLIENT_ID', 'azure_client_id'),
    federated
      ? fromCredentials('AZURE_FEDERATED_TOKEN_FILE', 'azure_federated_token_file')
      : fromCredentials('AZURE_CLIENT_SECRET', 'azure_client_secret'),
  ];
}

const AZURE_CLUSTER_RULES: readonly V1PolicyRule[] = [
  {
    apiGroups: [AKS_NODE_CLASS.group],
    resources: [AKS_NODE_CLASS.plural],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: [AKS_NODE_CLASS.group],
    resources: [AKS_NODE_CLASS.plural, `${AKS_NODE_CLASS.plural}/status`],
    verbs: ['patch', 'update'],
  },
];

function rbac(): KubeObject[] {
  return operandRbac(
    {
      name: CLUSTER_ROLE_NAME,
      namespace: OPERAND_NAMESPACE,
      serviceAccount: SERVICE_ACCOUNT_NAME,
      labels: operandLabels(),
    },
    AZURE_CLUSTER_RULES,
  ).map(asKube);
}

/**
 * Asks the cloud-credential-operator for the operand's Secret: Contributor, as machine-api's own
 * request has it (the operand creates and deletes VMs, NICs and disks, and joins NICs to the
 * worker subnet). In Manual mode the administrator creates it (ccoctl), with
 * `azure_federated_token_file` for workload identity.
 */
export function credentialsRequest(): KubeObject {
  return {
    apiVersion: CREDENTIALS_REQUEST.apiVersion,
    kind: CREDENTIALS_REQUEST.kind,
    metadata: {
      name: CREDENTIALS_REQUEST_NAME,
      namespace: CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
      labels: operandLabels(),
    },
    spec: {
      secretRef: { name: CREDENTIALS_SECRET_NAME, namespace: OPERAND_NAMESPACE },
      serviceAccountNames: [SERVICE_ACCOUNT_NAME],
      providerSpec: {
        apiVersion: 'cloudcredential.openshift.io/v1',
        kind: 'AzureProviderSpec',
        roleBindings: [{ role: 'Contributor' }],
      },
    },
  };
}

function deployment(
  infra: AzureStandaloneInfrastructure,
  desired: KarpenterDesiredState,
  options: AzureOperandOptions,
): V1Deployment {
  const federated = infra.credentials.authentication === 'FederatedToken';
  const replicas = desired.paused ? 0 : infra.controlPlaneTopology === 'SingleReplica' ? 1 : 2;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: OPERAND_NAME, namespace: OPERAND_NAMESPACE, labels: operandLabels() },
    spec: {
      replicas,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { ...OPERAND_SELECTOR } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: {
        metadata: {
          labels: operandLabels(),
          annotations: {
            'target.workload.openshift.io/management': '{"effect": "PreferredDuringScheduling"}',
            'openshift.io/required-scc': 'restricted-v2',
          },
        },
        spec: {
          serviceAccountName: SERVICE_ACCOUNT_NAME,
          ...controlPlanePlacement(OPERAND_SELECTOR),
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: 'controller',
              image: options.image,
              imagePullPolicy: 'IfNotPresent',
              env: operandEnv(infra, desired),
              ports: [
                { name: 'http-metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
                { name: 'http', containerPort: HEALTH_PROBE_PORT, protocol: 'TCP' },
              ],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'http' },
                initialDelaySeconds: 30,
                timeoutSeconds: 30,
              },
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'http' },
                initialDelaySeconds: 5,
                timeoutSeconds: 30,
              },
              resources: { requests: { cpu: '100m', memory: '256Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              terminationMessagePolicy: 'FallbackToLogsOnError',
              ...(federated
                ? {
                    volumeMounts: [
                      {
                        name: BOUND_SA_TOKEN_VOLUME,
                        mountPath: BOUND_SA_TOKEN_DIR,
                        readOnly: true,
                      },
                    ],
                  }
                : {}),
            },
          ],
          ...(federated
            ? {
                volumes: [
                  {
                    name: BOUND_SA_TOKEN_VOLUME,
                    projected: {
                      sources: [
                        {
                          serviceAccountToken: {
                            audience: BOUND_SA_TOKEN_AUDIENCE,
                            expirationSeconds: 3600,
                            path: 'token',
                          },
                        },
                      ],
                    },
                  },
                ],
              }
            : {}),
        },
      },
    },
  };
}

/** Every operand object, in apply order: namespace and identity before what uses them. */
export function renderAzureOperand(
  infra: AzureStandaloneInfrastructure,
  desired: KarpenterDesiredState,
  options: AzureOperandOptions,
): KubeObject[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: OPERAND_NAMESPACE,
        labels: ownedLabels({
          'openshift.io/cluster-monitoring': 'true',
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/audit': 'restricted',
          'pod-security.kubernetes.io/warn': 'restricted',
        }),
        annotations: {
          'openshift.io/node-selector': '',
          'workload.openshift.io/allowed': 'management',
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: SERVICE_ACCOUNT_NAME,
        namespace: OPERAND_NAMESPACE,
        labels: operandLabels(),
      },
    },
    ...rbac(),
    credentialsRequest(),
    asKube(deployment(infra, desired, options)),
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: OPERAND_NAME, namespace: OPERAND_NAMESPACE, labels: operandLabels() },
      spec: { maxUnavailable: 1, selector: { matchLabels: { ...OPERAND_SELECTOR } } },
    },
  ].map((object) => canonical(object));
}
