import {
  CREDENTIALS_REQUEST,
  KARPENTER_CR,
  type KarpenterDesiredState,
  type LogLevel,
} from '@fleet/contracts';
import type { AwsStandaloneInfrastructure } from '@fleet/discovery';
import type {
  V1ConfigMap,
  V1Deployment,
  V1EnvVar,
  V1Namespace,
  V1PodDisruptionBudget,
  V1PolicyRule,
  V1ServiceAccount,
} from '@kubernetes/client-node';
import { renderFeatureGates } from '../feature-gates.js';
import { canonical } from '../canonical.js';
import { ownedLabels } from '../labels.js';
import { controlPlanePlacement } from '../openshift/operand-placement.js';
import { operandRbac } from '../rbac.js';
import type { KubeObject } from '../types.js';
import {
  CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
  CLUSTER_ROLE_NAME,
  BOUND_SA_TOKEN_AUDIENCE,
  BOUND_SA_TOKEN_DIR,
  BOUND_SA_TOKEN_FILE,
  BOUND_SA_TOKEN_VOLUME,
  CREDENTIALS_MOUNT_PATH,
  CREDENTIALS_REQUEST_NAME,
  CREDENTIALS_SECRET_NAME,
  EC2_NODE_CLASS,
  HEALTH_PROBE_PORT,
  KARPENTER_CR_NAME,
  METRICS_PORT,
  OPERAND_NAME,
  OPERAND_NAMESPACE,
  SERVICE_ACCOUNT_NAME,
  TRUSTED_CA_BUNDLE_CONFIGMAP,
  TRUSTED_CA_BUNDLE_DIR,
  TRUSTED_CA_BUNDLE_FILE,
  TRUSTED_CA_BUNDLE_KEY,
} from './constants.js';

export interface OperandOptions {
  image: string;
}

/** Selector of the operand's pods; also its PodDisruptionBudget's. */
export const OPERAND_SELECTOR = { 'app.kubernetes.io/name': OPERAND_NAME };

const operandLabels = (): Record<string, string> =>
  ownedLabels({ 'app.kubernetes.io/name': OPERAND_NAME, 'app.kubernetes.io/part-of': 'karpenter' });

export { renderFeatureGates } from '../feature-gates.js';

/** The operand's environment, exactly as karpenter-operator sets it on standalone OpenShift. */
export function operandEnv(
  infra: AwsStandaloneInfrastructure,
  desired: KarpenterDesiredState,
): V1EnvVar[] {
  return [
    {
      name: 'SYSTEM_NAMESPACE',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
    },
    { name: 'CLUSTER_NAME', value: infra.infraID },
    { name: 'CLUSTER_ENDPOINT', value: infra.apiServerInternalURI },
    // The fleet validates NodePools and NodeClasses against the CRDs before they are written.
    { name: 'DISABLE_WEBHOOK', value: 'true' },
    { name: 'HEALTH_PROBE_PORT', value: String(HEALTH_PROBE_PORT) },
    { name: 'FEATURE_GATES', value: renderFeatureGates(desired.featureGates) },
    { name: 'AWS_REGION', value: infra.region },
    ...credentialsEnv(infra, desired),
    // Spot interruption and instance health events (Karpenter's --interruption-queue).
    ...(desired.interruptionQueue
      ? [{ name: 'INTERRUPTION_QUEUE', value: desired.interruptionQueue }]
      : []),
    ...proxyEnv(infra),
  ];
}

/**
 * Manual/STS: CCO mints nothing, so the operand assumes the admin's role with its projected
 * service-account token, the AWS SDK's web-identity provider reading AWS_ROLE_ARN and
 * AWS_WEB_IDENTITY_TOKEN_FILE, through the regional STS endpoint (as CCO's STS Secrets say,
 * sts_regional_endpoints = regional). Otherwise the CredentialsRequest's Secret.
 */
export const usesWebIdentity = (infra: AwsStandaloneInfrastructure): boolean =>
  infra.cloudCredentials.mode === 'ManualSTS';

function credentialsEnv(
  infra: AwsStandaloneInfrastructure,
  desired: KarpenterDesiredState,
): V1EnvVar[] {
  if (!usesWebIdentity(infra))
    return [
      { name: 'AWS_SHARED_CREDENTIALS_FILE', value: `${CREDENTIALS_MOUNT_PATH}/credentials` },
      { name: 'AWS_SDK_LOAD_CONFIG', value: 'true' },
    ];
  return [
    // Absent only while the cluster is being disabled without one (checkCloud refuses to
    // enable Karpenter without it): the operand is then only kept until its NodeClaims are gone.
    ...(desired.webIdentityRoleArn
      ? [{ name: 'AWS_ROLE_ARN', value: desired.webIdentityRoleArn }]
      : []),
    { name: 'AWS_WEB_IDENTITY_TOKEN_FILE', value: BOUND_SA_TOKEN_FILE },
    { name: 'AWS_STS_REGIONAL_ENDPOINTS', value: 'regional' },
  ];
}

/**
 * The cluster-wide Proxy as Go's net/http (ProxyFromEnvironment, used by the AWS SDK) reads
 * it; values from Proxy.status, which the
 * Cluster Network Operator completes (status.noProxy adds the cluster's own networks and the
 * instance metadata service, so IMDS and the API server are never sent to the proxy).
 */
export function proxyEnv(infra: AwsStandaloneInfrastructure): V1EnvVar[] {
  const proxy = infra.proxy;
  if (!proxy) return [];
  const pairs: [string, string | undefined][] = [
    ['HTTP_PROXY', proxy.httpProxy],
    ['HTTPS_PROXY', proxy.httpsProxy],
    ['NO_PROXY', proxy.noProxy],
  ];
  return [
    ...pairs.flatMap(([name, value]) => (value ? [{ name, value }] : [])),
    // Karpenter's AWS SDK trusts the injected bundle (system CAs + the proxy's CA) instead of
    // the image's own, so a TLS-intercepting proxy is accepted.
    ...(proxy.trustedCA
      ? [{ name: 'AWS_CA_BUNDLE', value: `${TRUSTED_CA_BUNDLE_DIR}/${TRUSTED_CA_BUNDLE_FILE}` }]
      : []),
  ];
}

/**
 * Empty on purpose: the Cluster Network Operator injects ca-bundle.crt into it, and server-side
 * apply leaves the injected data alone because the fleet never sets it.
 */
function trustedCABundle(): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: TRUSTED_CA_BUNDLE_CONFIGMAP,
      namespace: OPERAND_NAMESPACE,
      labels: { ...operandLabels(), 'config.openshift.io/inject-trusted-cabundle': 'true' },
    },
  };
}

/** What Karpenter calls on its interruption queue (karpenter-provider-aws pkg/providers/sqs). */
export const KARPENTER_SQS_ACTIONS: readonly string[] = [
  'sqs:DeleteMessage',
  'sqs:GetQueueUrl',
  'sqs:ReceiveMessage',
];

export const logLevelArg = (level: LogLevel): string => `--log-level=${level}`;

/**
 * EC2, IAM, pricing and SSM actions of Karpenter's controller policy (karpenter-provider-aws
 * v1 CloudFormation), minus instance-profile management: the default NodeClass names the
 * cluster's existing worker instance profile, so Karpenter only reads and passes it.
 */
export const KARPENTER_AWS_ACTIONS: readonly string[] = [
  'ec2:CreateFleet',
  'ec2:CreateLaunchTemplate',
  'ec2:CreateTags',
  'ec2:DeleteLaunchTemplate',
  'ec2:DescribeAvailabilityZones',
  'ec2:DescribeCapacityReservations',
  'ec2:DescribeImages',
  'ec2:DescribeInstanceTypeOfferings',
  'ec2:DescribeInstanceTypes',
  'ec2:DescribeInstances',
  'ec2:DescribeLaunchTemplates',
  'ec2:DescribePlacementGroups',
  'ec2:DescribeSecurityGroups',
  'ec2:DescribeSpotPriceHistory',
  'ec2:DescribeSubnets',
  'ec2:RunInstances',
  'ec2:TerminateInstances',
  'iam:GetInstanceProfile',
  'iam:ListInstanceProfiles',
  'iam:PassRole',
  'pricing:GetProducts',
  'ssm:GetParameter',
];

/** One Allow statement of the permissions Karpenter needs, as a CredentialsRequest writes it. */
export interface KarpenterPolicyStatement {
  effect: 'Allow';
  action: string[];
  resource: string;
}

/**
 * Everything Karpenter calls, the one list both the CredentialsRequest (CCO's modes) and the
 * web-identity role check (Manual/STS) use. `account` fills the ARNs' account (`*`: any the
 * credentials reach, as the CredentialsRequest grants it).
 */
export function karpenterPolicyStatements(
  region: string,
  desired: Pick<KarpenterDesiredState, 'interruptionQueue'> | undefined,
  account = '*',
): KarpenterPolicyStatement[] {
  const queue = desired?.interruptionQueue;
  return [
    { effect: 'Allow', action: [...KARPENTER_AWS_ACTIONS], resource: '*' },
    // Only the named queue, in the cluster's region.
    ...(queue
      ? [
          {
            effect: 'Allow' as const,
            action: [...KARPENTER_SQS_ACTIONS],
            resource: `arn:aws:sqs:${region}:${account}:${queue}`,
          },
        ]
      : []),
  ];
}

function namespace(): V1Namespace {
  return {
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
        // The operand must run on control-plane nodes, never on nodes it may delete; an empty
        // project node selector keeps a cluster-wide default selector from overriding that.
        'openshift.io/node-selector': '',
        'workload.openshift.io/allowed': 'management',
      },
    },
  };
}

function serviceAccount(): V1ServiceAccount {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: SERVICE_ACCOUNT_NAME, namespace: OPERAND_NAMESPACE, labels: operandLabels() },
  };
}

/** Karpenter's AWS rules beside core's: its NodeClass kind . */
export const AWS_CLUSTER_RULES: readonly V1PolicyRule[] = [
  {
    apiGroups: [EC2_NODE_CLASS.group],
    resources: [EC2_NODE_CLASS.plural],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: [EC2_NODE_CLASS.group],
    resources: [EC2_NODE_CLASS.plural, `${EC2_NODE_CLASS.plural}/status`],
    verbs: ['patch', 'update'],
  },
];

/** client-node's types mark apiVersion/kind/metadata optional; these objects always set them. */
const asKube = (object: object): KubeObject => object as unknown as KubeObject;

function rbac(): KubeObject[] {
  return operandRbac(
    {
      name: CLUSTER_ROLE_NAME,
      namespace: OPERAND_NAMESPACE,
      serviceAccount: SERVICE_ACCOUNT_NAME,
      labels: operandLabels(),
    },
    AWS_CLUSTER_RULES,
  ).map(asKube);
}

/** Asks the cloud-credential-operator for the Secret the operand mounts at /etc/provider. */
export function credentialsRequest(
  infra?: AwsStandaloneInfrastructure,
  desired?: KarpenterDesiredState,
): KubeObject {
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
      // Lets CCO mint a role-based (STS) credential for this service account in manual mode.
      serviceAccountNames: [SERVICE_ACCOUNT_NAME],
      providerSpec: {
        apiVersion: 'cloudcredential.openshift.io/v1',
        kind: 'AWSProviderSpec',
        statementEntries: karpenterPolicyStatements(
          infra?.region ?? '*',
          infra ? desired : undefined,
        ),
      },
    },
  };
}

export function karpenterCR(desired: KarpenterDesiredState): KubeObject {
  return {
    apiVersion: KARPENTER_CR.apiVersion,
    kind: KARPENTER_CR.kind,
    metadata: { name: KARPENTER_CR_NAME, labels: ownedLabels() },
    spec: { logLevel: desired.logLevel },
  };
}

/**
 * Two replicas with leader election, one on single-node control planes; zero while the fleet
 * has Karpenter paused, which stops provisioning and disruption but keeps every node.
 */
function replicas(infra: AwsStandaloneInfrastructure, desired: KarpenterDesiredState): number {
  if (desired.paused) return 0;
  return infra.controlPlaneTopology === 'SingleReplica' ? 1 : 2;
}

export function deployment(
  infra: AwsStandaloneInfrastructure,
  desired: KarpenterDesiredState,
  options: OperandOptions,
): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: OPERAND_NAME, namespace: OPERAND_NAMESPACE, labels: operandLabels() },
    spec: {
      replicas: replicas(infra, desired),
      revisionHistoryLimit: 10,
      selector: { matchLabels: { ...OPERAND_SELECTOR } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: {
        metadata: {
          labels: operandLabels(),
          annotations: {
            'target.workload.openshift.io/management': '{"effect": "PreferredDuringScheduling"}',
            // Pins the SCC OpenShift admits the pod under: without it a more privileged SCC the
            // service account can use (granted by someone else) could be chosen instead.
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
              args: [logLevelArg(desired.logLevel)],
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
              // Requests only, as OpenShift's own control-plane components do: a memory limit
              // would OOM-kill the autoscaler exactly when a large scale-up makes it busiest.
              resources: { requests: { cpu: '100m', memory: '256Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              terminationMessagePolicy: 'FallbackToLogsOnError',
              volumeMounts: [
                ...(usesWebIdentity(infra)
                  ? []
                  : [
                      {
                        name: CREDENTIALS_SECRET_NAME,
                        mountPath: CREDENTIALS_MOUNT_PATH,
                        readOnly: true,
                      },
                    ]),
                { name: BOUND_SA_TOKEN_VOLUME, mountPath: BOUND_SA_TOKEN_DIR, readOnly: true },
                ...(infra.proxy?.trustedCA
                  ? [
                      {
                        name: TRUSTED_CA_BUNDLE_CONFIGMAP,
                        mountPath: TRUSTED_CA_BUNDLE_DIR,
                        readOnly: true,
                      },
                    ]
                  : []),
              ],
            },
          ],
          volumes: [
            ...(usesWebIdentity(infra)
              ? []
              : [
                  {
                    name: CREDENTIALS_SECRET_NAME,
                    secret: { secretName: CREDENTIALS_SECRET_NAME },
                  },
                ]),
            // What the web-identity provider exchanges for the role's credentials on STS clusters.
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
            ...(infra.proxy?.trustedCA
              ? [
                  {
                    name: TRUSTED_CA_BUNDLE_CONFIGMAP,
                    configMap: {
                      name: TRUSTED_CA_BUNDLE_CONFIGMAP,
                      items: [{ key: TRUSTED_CA_BUNDLE_KEY, path: TRUSTED_CA_BUNDLE_FILE }],
                    },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}

function podDisruptionBudget(): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: OPERAND_NAME, namespace: OPERAND_NAMESPACE, labels: operandLabels() },
    spec: { maxUnavailable: 1, selector: { matchLabels: { ...OPERAND_SELECTOR } } },
  };
}

/** Every operand object, in apply order: namespace and identity before what uses them. */
export function renderAwsOperand(
  infra: AwsStandaloneInfrastructure,
  desired: KarpenterDesiredState,
  options: OperandOptions,
): KubeObject[] {
  return [
    asKube(namespace()),
    asKube(serviceAccount()),
    ...rbac(),
    // Manual mode: CCO answers no CredentialsRequest; on STS the role replaces it (and a
    // request written before the cluster moved to STS is pruned as no longer rendered).
    ...(usesWebIdentity(infra) ? [] : [credentialsRequest(infra, desired)]),
    ...(infra.proxy?.trustedCA ? [asKube(trustedCABundle())] : []),
    karpenterCR(desired),
    asKube(deployment(infra, desired, options)),
    asKube(podDisruptionBudget()),
  ].map((object) => canonical(object));
}
