import type { EC2ClientConfig } from '@aws-sdk/client-ec2';
import { z } from 'zod';

const AwsEnv = z.object({
  AWS_REGION: z.string().min(1).optional(),
  AWS_ENDPOINT_URL_EC2: z.url({ error: 'must be the URL of an EC2 endpoint' }).optional(),
  AWS_ENDPOINT_URL_SQS: z.url({ error: 'must be the URL of an SQS endpoint' }).optional(),
  AWS_ENDPOINT_URL_IAM: z.url({ error: 'must be the URL of an IAM endpoint' }).optional(),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  /**
   * Longest one EC2 request may take, connection to last byte. Every call has one: a hung
   * DescribeInstances must not hold CSR approval (the SDK sets no timeout of its own).
   */
  EC2_REQUEST_TIMEOUT_SECONDS: z.coerce
    .number({ error: 'must be a number of seconds' })
    .positive('must be a positive number of seconds')
    .max(300, 'must be at most 300 seconds')
    .default(10),
  /**
   * How long a web-identity role that passed SimulatePrincipalPolicy is trusted before the next
   * apply simulates it again (0: every apply). See role-check-cache.ts.
   */
  IAM_ROLE_CHECK_CACHE_SECONDS: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .min(0, 'must be 0 or more seconds')
    .max(86_400, 'must be at most 86400 seconds')
    .default(600),
});

function parseAwsEnv(env: Readonly<Record<string, string | undefined>>) {
  const parsed = AwsEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${issue?.path.join('.') ?? 'AWS environment'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/**
 * Deadline of one EC2 call as the caller sees it, retries included: the SDK tries a timed-out
 * request up to 3 times (its default), each bounded by EC2_REQUEST_TIMEOUT_SECONDS.
 */
export function ec2CallDeadlineMs(env: Readonly<Record<string, string | undefined>>): number {
  return parseAwsEnv(env).EC2_REQUEST_TIMEOUT_SECONDS * 1000 * 3 + 2_000;
}

/** How long a passing web-identity role check is kept, in milliseconds. */
export function roleCheckCacheMs(env: Readonly<Record<string, string | undefined>>): number {
  return parseAwsEnv(env).IAM_ROLE_CHECK_CACHE_SECONDS * 1000;
}

/**
 * The one place AWS drivers take their endpoint and credentials from. Credentials come, in
 * order: keys in the environment (the sidecar Deployment's `envFrom` of the cloud-credentials
 * Secret that the CredentialsRequest provisions on standalone OpenShift), else the SDK's default
 * chain, which covers STS web identity (AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE, projected
 * service-account tokens on STS clusters and hosted control planes). `region` is the cluster's,
 * as discovery found it; AWS_REGION overrides it (a proxy or an emulator in one region).
 */
export function awsClientConfig(
  env: Readonly<Record<string, string | undefined>>,
  region: string,
  service: 'EC2' | 'SQS' | 'IAM' = 'EC2',
): EC2ClientConfig {
  const e = parseAwsEnv(env);
  const timeoutMs = e.EC2_REQUEST_TIMEOUT_SECONDS * 1000;
  return {
    region: e.AWS_REGION ?? region,
    requestHandler: {
      connectionTimeout: Math.min(timeoutMs, 5_000),
      requestTimeout: timeoutMs,
      // Without it the SDK only logs a breached requestTimeout and keeps waiting.
      throwOnRequestTimeout: true,
    },
    ...(e[`AWS_ENDPOINT_URL_${service}`] ? { endpoint: e[`AWS_ENDPOINT_URL_${service}`] } : {}),
    ...(e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
      ? {
          credentials: {
            accessKeyId: e.AWS_ACCESS_KEY_ID,
            secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
            ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}),
          },
        }
      : {}),
  };
}
