import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CREDENTIALS_REQUEST_NAME,
  CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
  KARPENTER_AWS_ACTIONS,
  OPERAND_NAME,
  OPERAND_NAMESPACE,
} from '@fleet/cloud-provider';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { GENERAL_NODEPOOL, startHarness, type Harness } from './harness.js';

const ISSUER = 'https://prod-east-oidc.s3.us-east-1.amazonaws.com';
const QUEUE = 'prod-east-spot';
const SQS_ACTIONS = ['sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];

type Env = { name: string; value?: string }[];
interface OperandDeployment extends KubeObject {
  spec: {
    template: {
      spec: {
        containers: { env: Env; volumeMounts: { name: string; mountPath: string }[] }[];
        volumes: { name: string; secret?: unknown; projected?: unknown }[];
      };
    };
  };
}

describe('standalone AWS: Cloud Credential Operator in Manual/STS mode', () => {
  let h: Harness;
  const deployment = () =>
    h.cluster.kube.get('apps/v1', 'Deployment', OPERAND_NAME, OPERAND_NAMESPACE) as
      OperandDeployment | undefined;
  const env = (): Record<string, string | undefined> =>
    Object.fromEntries(
      (deployment()?.spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
    );
  const credentialsRequest = () =>
    h.cluster.kube.get(
      'cloudcredential.openshift.io/v1',
      'CredentialsRequest',
      CREDENTIALS_REQUEST_NAME,
      CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
    );
  const degraded = (conditions: { type: string }[]) =>
    conditions.find((c) => c.type === 'Degraded');
  const iamCalls = () => h.cluster.ec2.requestLog.filter((r) => r.action.startsWith('iam:'));
  const enabled = (spec: Record<string, unknown> = {}) =>
    h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], interruptionQueue: QUEUE, ...spec });

  beforeAll(async () => {
    h = await startHarness();
    h.cluster.ec2.addQueue({ QueueName: QUEUE });
  });
  afterAll(async () => h?.stop());

  it('in CCO default mode the operand reads the Secret its CredentialsRequest asks for', async () => {
    const result = await h.runtime.apply(enabled());
    expect(degraded(result.conditions)).toMatchObject({ status: 'False' });
    expect(credentialsRequest()).toBeDefined();
    expect(env()).toMatchObject({ AWS_SHARED_CREDENTIALS_FILE: '/etc/provider/credentials' });
    expect(iamCalls()).toEqual([]);
  });

  describe('once the cluster is Manual with a service-account issuer (STS)', () => {
    beforeAll(() => {
      // As the installer leaves an STS cluster (ccoctl's manifests).
      h.cluster.kube.create({
        apiVersion: 'operator.openshift.io/v1',
        kind: 'CloudCredential',
        metadata: { name: 'cluster' },
        spec: { credentialsMode: 'Manual' },
      });
      h.cluster.kube.create({
        apiVersion: 'config.openshift.io/v1',
        kind: 'Authentication',
        metadata: { name: 'cluster' },
        spec: { serviceAccountIssuer: ISSUER },
      });
    });

    it('without a role in the desired state: Degraded, saying so, and nothing applied', async () => {
      const before = JSON.stringify(deployment()!.spec);
      const result = await h.runtime.apply(enabled());
      expect(degraded(result.conditions)).toMatchObject({
        status: 'True',
        reason: 'WebIdentityRoleMissing',
        message: `webIdentityRoleArn: the cluster's Cloud Credential Operator runs in Manual mode with service-account issuer ${ISSUER} (STS), so no CredentialsRequest is answered; set the IAM role Karpenter assumes with its service-account token`,
      });
      expect(JSON.stringify(deployment()!.spec)).toBe(before);
      expect(credentialsRequest()).toBeDefined();
      expect(iamCalls()).toEqual([]);
    });

    it('a role that does not exist: Degraded WebIdentityRoleNotFound', async () => {
      const role = h.cluster.ec2.roleArn('nobody');
      const result = await h.runtime.apply(enabled({ webIdentityRoleArn: role }));
      expect(degraded(result.conditions)).toMatchObject({
        status: 'True',
        reason: 'WebIdentityRoleNotFound',
        message: `webIdentityRoleArn: IAM role ${role} does not exist`,
      });
    });

    it('a role whose policy lacks actions: Degraded naming each missing one, nothing applied', async () => {
      h.cluster.ec2.putRole({
        RoleName: 'prod-east-karpenter',
        Policies: [
          {
            PolicyName: 'karpenter-partial',
            PolicyDocument: {
              Statement: [
                {
                  Effect: 'Allow',
                  Action: [
                    'ec2:Describe*',
                    'ec2:CreateLaunchTemplate',
                    'ec2:CreateTags',
                    'ec2:DeleteLaunchTemplate',
                    'ec2:TerminateInstances',
                    'iam:GetInstanceProfile',
                    'iam:ListInstanceProfiles',
                    'pricing:GetProducts',
                    'ssm:GetParameter',
                    'sqs:GetQueueUrl',
                  ],
                  Resource: '*',
                },
                // Guard rails someone added to the account's roles.
                { Effect: 'Deny', Action: 'ec2:TerminateInstances', Resource: '*' },
              ],
            },
          },
        ],
      });
      const role = h.cluster.ec2.roleArn('prod-east-karpenter');
      const queueArn = `arn:aws:sqs:us-east-1:${role.split(':')[4]}:${QUEUE}`;
      const before = JSON.stringify(deployment()!.spec);
      const result = await h.runtime.apply(enabled({ webIdentityRoleArn: role }));
      expect(degraded(result.conditions)).toMatchObject({
        status: 'True',
        reason: 'WebIdentityRolePolicyIncomplete',
        message:
          `webIdentityRoleArn: the policy of ${role} does not allow what Karpenter calls: ` +
          `not allowed: ec2:CreateFleet, ec2:RunInstances, iam:PassRole, ` +
          `sqs:DeleteMessage on ${queueArn}, sqs:ReceiveMessage on ${queueArn}; ` +
          `explicitly denied: ec2:TerminateInstances`,
      });
      expect(JSON.stringify(deployment()!.spec)).toBe(before);
      expect(env()).not.toHaveProperty('AWS_ROLE_ARN');
      // Exactly the actions of the CredentialsRequest, the queue's scoped to its ARN.
      const asked = iamCalls().slice(-2);
      expect(asked.map((c) => c.action)).toEqual([
        'iam:SimulatePrincipalPolicy',
        'iam:SimulatePrincipalPolicy',
      ]);
      const actionsOf = (params: Record<string, string>) =>
        Object.entries(params)
          .filter(([k]) => k.startsWith('ActionNames.member.'))
          .map(([, v]) => v);
      expect(actionsOf(asked[0]!.params)).toEqual([...KARPENTER_AWS_ACTIONS]);
      expect(actionsOf(asked[1]!.params)).toEqual(SQS_ACTIONS);
      expect(asked[1]!.params['ResourceArns.member.1']).toBe(queueArn);
    });

    it('a complete policy: the operand assumes the role with its projected token, and the CredentialsRequest is pruned', async () => {
      h.cluster.ec2.putRole({
        RoleName: 'prod-east-karpenter',
        Path: '/openshift/',
        Policies: [
          {
            PolicyName: 'karpenter',
            PolicyDocument: {
              Statement: [
                { Effect: 'Allow', Action: [...KARPENTER_AWS_ACTIONS], Resource: '*' },
                {
                  Effect: 'Allow',
                  Action: SQS_ACTIONS,
                  Resource: `arn:aws:sqs:us-east-1:*:${QUEUE}`,
                },
              ],
            },
          },
        ],
      });
      const role = h.cluster.ec2.roleArn('prod-east-karpenter');
      expect(role).toMatch(/:role\/openshift\/prod-east-karpenter$/);
      const result = await h.runtime.apply(enabled({ webIdentityRoleArn: role }));
      expect(degraded(result.conditions)).toMatchObject({ status: 'False' });
      expect(env()).toMatchObject({
        AWS_ROLE_ARN: role,
        AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/openshift/serviceaccount/token',
        AWS_STS_REGIONAL_ENDPOINTS: 'regional',
        INTERRUPTION_QUEUE: QUEUE,
      });
      expect(env()).not.toHaveProperty('AWS_SHARED_CREDENTIALS_FILE');
      const pod = deployment()!.spec.template.spec;
      expect(pod.volumes.map((v) => v.name)).toEqual(['bound-sa-token']);
      expect(pod.volumes[0]!.projected).toMatchObject({
        sources: [{ serviceAccountToken: { audience: 'openshift', path: 'token' } }],
      });
      expect(credentialsRequest()).toBeUndefined();
    });

    it('keeps a passing verdict for its role: later applies do not simulate again until the desired role changes', async () => {
      const role = h.cluster.ec2.roleArn('prod-east-karpenter');
      const simulations = () =>
        iamCalls().filter((c) => c.action === 'iam:SimulatePrincipalPolicy').length;
      let calls = simulations();
      for (let i = 0; i < 3; i++) {
        const result = await h.runtime.apply(enabled({ webIdentityRoleArn: role }));
        expect(degraded(result.conditions)).toMatchObject({ status: 'False' });
      }
      expect(simulations()).toBe(calls);

      // Another role: simulated, and its failing verdict is not kept.
      h.cluster.ec2.putRole({ RoleName: 'prod-east-other', Policies: [] });
      const other = h.cluster.ec2.roleArn('prod-east-other');
      for (let i = 0; i < 2; i++) {
        const result = await h.runtime.apply(enabled({ webIdentityRoleArn: other }));
        expect(degraded(result.conditions)).toMatchObject({
          reason: 'WebIdentityRolePolicyIncomplete',
        });
        expect(simulations()).toBe(calls + 2 * (i + 1));
      }
      calls = simulations();

      // Back to the first role: the change dropped its verdict, so it is simulated again, once.
      for (let i = 0; i < 2; i++) {
        const result = await h.runtime.apply(enabled({ webIdentityRoleArn: role }));
        expect(degraded(result.conditions)).toMatchObject({ status: 'False' });
      }
      expect(simulations()).toBe(calls + 2);
    });

    it('disabling Karpenter needs no role check', async () => {
      const calls = iamCalls().length;
      const result = await h.runtime.apply(h.order({ enabled: false }));
      expect(degraded(result.conditions)).toMatchObject({ status: 'False' });
      expect(iamCalls()).toHaveLength(calls);
    });
  });
});
