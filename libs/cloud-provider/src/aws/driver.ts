import { EC2Client } from '@aws-sdk/client-ec2';
import {
  IAMClient,
  NoSuchEntityException,
  paginateSimulatePrincipalPolicy,
} from '@aws-sdk/client-iam';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { KarpenterDesiredState } from '@fleet/contracts';
import { discoverAwsStandalone, type AwsStandaloneInfrastructure } from '@fleet/discovery';
import type { ClusterDriver, DriverContext, DriverRegistration } from '../driver.js';
import { awsClientConfig, ec2CallDeadlineMs, roleCheckCacheMs } from './credentials.js';
import { describeInstancesLookup } from './describe-instances.js';
import { karpenterPolicyStatements, usesWebIdentity } from './operand.js';
import { AwsStandaloneCloudProvider } from './provider.js';
import { AWS_STANDALONE } from './registration.js';
import { RoleCheckCache } from './role-check-cache.js';

/**
 * Standalone OpenShift on AWS: discovery through the Infrastructure, the worker MachineSet and
 * EC2; CSR approval checked with DescribeInstances; one EC2 client per region, built from
 * aws/credentials.ts.
 */
class AwsStandaloneDriver implements ClusterDriver<AwsStandaloneInfrastructure> {
  readonly platform = 'AWS';
  readonly topology = 'STANDALONE';
  readonly provider = new AwsStandaloneCloudProvider();
  readonly statusSurfaces = ['ClusterOperator'] as const;
  private readonly clients = new Map<string, EC2Client>();
  private readonly sqsClients = new Map<string, SQSClient>();
  private iamClient: IAMClient | undefined;
  private readonly roleChecks: RoleCheckCache;

  constructor(private readonly context: DriverContext) {
    this.roleChecks = new RoleCheckCache(roleCheckCacheMs(context.env));
  }

  private ec2(region: string): EC2Client {
    let client = this.clients.get(region);
    if (!client) {
      client = new EC2Client(awsClientConfig(this.context.env, region));
      this.clients.set(region, client);
    }
    return client;
  }

  discover() {
    return discoverAwsStandalone({
      reader: this.context.reader('workload'),
      ec2: (region) => this.ec2(region),
    });
  }

  private sqs(region: string): SQSClient {
    let client = this.sqsClients.get(region);
    if (!client) {
      client = new SQSClient(awsClientConfig(this.context.env, region, 'SQS'));
      this.sqsClients.set(region, client);
    }
    return client;
  }

  /** IAM is global: one client, signed for the cluster's region's partition. */
  private iam(region: string): IAMClient {
    this.iamClient ??= new IAMClient(awsClientConfig(this.context.env, region, 'IAM'));
    return this.iamClient;
  }

  async checkCloud(infra: AwsStandaloneInfrastructure, desired: KarpenterDesiredState) {
    return (
      (await this.checkWebIdentityRole(infra, desired)) ??
      (await this.checkInterruptionQueue(infra, desired))
    );
  }

  /**
   * Manual/STS: nobody mints credentials, so Karpenter runs as the admin's role, and a role that
   * lacks an action fails only when Karpenter first needs it (a launch, a Spot interruption).
   * SimulatePrincipalPolicy evaluates the role's identity policies (inline, attached, boundary)
   * for exactly the statements the CredentialsRequest would have asked for; whether the role
   * trusts the cluster's OIDC issuer is not something IAM can simulate.
   */
  private async checkWebIdentityRole(
    infra: AwsStandaloneInfrastructure,
    desired: KarpenterDesiredState,
  ): Promise<{ reason: string; message: string } | undefined> {
    if (!desired.enabled || !usesWebIdentity(infra)) return undefined;
    const role = desired.webIdentityRoleArn;
    if (!role) {
      this.roleChecks.forget();
      return {
        reason: 'WebIdentityRoleMissing',
        message:
          `webIdentityRoleArn: the cluster's Cloud Credential Operator runs in Manual mode with ` +
          `service-account issuer ${infra.cloudCredentials.serviceAccountIssuer ?? '(unknown)'} ` +
          `(STS), so no CredentialsRequest is answered; set the IAM role Karpenter assumes ` +
          `with its service-account token`,
      };
    }
    const account = /^arn:[^:]+:iam::(\d{12}):/.exec(role)?.[1] ?? '*';
    const statements = karpenterPolicyStatements(infra.region, desired, account);
    const asked = JSON.stringify(statements);
    if (this.roleChecks.passed(role, asked)) return undefined;
    const missing: string[] = [];
    const denied: string[] = [];
    try {
      for (const statement of statements) {
        const scoped = statement.resource !== '*';
        for await (const page of paginateSimulatePrincipalPolicy(
          { client: this.iam(infra.region) },
          {
            PolicySourceArn: role,
            ActionNames: statement.action,
            ...(scoped ? { ResourceArns: [statement.resource] } : {}),
          },
        )) {
          for (const result of page.EvaluationResults ?? []) {
            if (result.EvalDecision === 'allowed') continue;
            const name = `${result.EvalActionName ?? '?'}${scoped ? ` on ${statement.resource}` : ''}`;
            (result.EvalDecision === 'explicitDeny' ? denied : missing).push(name);
          }
        }
      }
    } catch (err) {
      this.roleChecks.forget();
      if (err instanceof NoSuchEntityException)
        return {
          reason: 'WebIdentityRoleNotFound',
          message: `webIdentityRoleArn: IAM role ${role} does not exist`,
        };
      return {
        reason: 'WebIdentityRoleCheckFailed',
        message: `webIdentityRoleArn: simulating the policy of ${role}: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    if (missing.length === 0 && denied.length === 0) {
      this.roleChecks.remember(role, asked);
      return undefined;
    }
    this.roleChecks.forget();
    return {
      reason: 'WebIdentityRolePolicyIncomplete',
      message:
        `webIdentityRoleArn: the policy of ${role} does not allow what Karpenter calls:` +
        (missing.length ? ` not allowed: ${missing.join(', ')}` : '') +
        (missing.length && denied.length ? ';' : '') +
        (denied.length ? ` explicitly denied: ${denied.join(', ')}` : ''),
    };
  }

  /**
   * The interruption queue must exist in the cluster's region before Karpenter is told to read
   * it: Karpenter only logs its failure to find the queue and runs without interruption
   * handling, which nobody would notice until a Spot reclaim drains nodes without warning.
   */
  private async checkInterruptionQueue(
    infra: AwsStandaloneInfrastructure,
    desired: KarpenterDesiredState,
  ): Promise<{ reason: string; message: string } | undefined> {
    const queue = desired.interruptionQueue;
    if (!queue) return undefined;
    const sqs = this.sqs(infra.region);
    try {
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queue }));
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
      return undefined;
    } catch (err) {
      if (err instanceof QueueDoesNotExist)
        return {
          reason: 'InterruptionQueueNotFound',
          message: `interruptionQueue: SQS queue ${queue} does not exist in ${infra.region}`,
        };
      return {
        reason: 'InterruptionQueueCheckFailed',
        message: `interruptionQueue: checking SQS queue ${queue} in ${infra.region}: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }

  nodeIdentity(infra: AwsStandaloneInfrastructure) {
    const lookup = describeInstancesLookup(
      this.ec2(infra.region),
      ec2CallDeadlineMs(this.context.env),
    );
    return (claims: Parameters<AwsStandaloneCloudProvider['verifyNodeIdentity']>[0]) =>
      this.provider.verifyNodeIdentity(claims, lookup);
  }

  close(): void {
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
    for (const client of this.sqsClients.values()) client.destroy();
    this.sqsClients.clear();
    this.iamClient?.destroy();
    this.iamClient = undefined;
  }
}

export const AWS_STANDALONE_DRIVER: DriverRegistration = {
  ...AWS_STANDALONE,
  create: (context) => new AwsStandaloneDriver(context),
};
