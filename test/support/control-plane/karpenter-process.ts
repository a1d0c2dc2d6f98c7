import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Deployment } from '@kubernetes/client-node';

import type { Ec2Emulator } from '../ec2/index.js';
import { freePort, spawnProcess, type RunningProcess } from '../processes.js';
import { upstreamBinary } from '../upstream-binaries.js';

/**
 * The real karpenter-provider-aws (test/upstream) run as a Deployment's container would run:
 * its arguments and environment, with what a pod has and a process lacks put in place, and the
 * cloud being the EC2 emulator. Each departure, and why:
 * - `AWS_SHARED_CREDENTIALS_FILE`: the mounted credentials Secret becomes a file of the
 *   emulator's keys; no instance metadata (`AWS_EC2_METADATA_DISABLED`);
 * - `AWS_ENDPOINT_URL_EC2`/`_SQS`: the emulator; `ISOLATED_VPC`: no pricing API to call;
 * - `KUBECONFIG`: the identity the pod would have (its service account's token, or the mounted
 *   kubeconfig); `LEADER_ELECTION_NAMESPACE`: the namespace a pod reads from its mount;
 * - `METRICS_PORT`, `HEALTH_PROBE_PORT`: free ports, so suites do not collide.
 */
export interface KarpenterProcess {
  process: RunningProcess;
  /** The Deployment's own environment, the downward API resolved. */
  deploymentEnv: Record<string, string>;
  healthPort: number;
  /** Whether the manager answers /readyz (caches synced, NodePool and NodeClaim served). */
  ready(): Promise<boolean>;
}

export async function startKarpenterFromDeployment(
  deployment: V1Deployment,
  options: { kubeconfigYaml: string; ec2: Ec2Emulator; dir: string },
): Promise<KarpenterProcess> {
  const namespace = deployment.metadata?.namespace ?? '';
  const container = deployment.spec!.template.spec!.containers[0]!;
  const deploymentEnv = Object.fromEntries(
    (container.env ?? []).map((e) => [
      e.name,
      e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace' ? namespace : (e.value ?? ''),
    ]),
  );
  const aws = options.ec2.clientConfig();
  const credentials = join(options.dir, 'credentials');
  writeFileSync(
    credentials,
    `[default]\naws_access_key_id = ${aws.credentials.accessKeyId}\naws_secret_access_key = ${aws.credentials.secretAccessKey}\n`,
  );
  const kubeconfig = join(options.dir, 'karpenter.kubeconfig');
  writeFileSync(kubeconfig, options.kubeconfigYaml, { mode: 0o600 });
  const healthPort = await freePort();
  const process = spawnProcess({
    name: 'karpenter-provider-aws',
    command: upstreamBinary('karpenter-provider-aws'),
    args: container.args ?? [],
    env: {
      ...deploymentEnv,
      AWS_SHARED_CREDENTIALS_FILE: credentials,
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_ENDPOINT_URL_EC2: aws.endpoint,
      AWS_ENDPOINT_URL_SQS: aws.endpoint,
      ISOLATED_VPC: 'true',
      METRICS_PORT: String(await freePort()),
      HEALTH_PROBE_PORT: String(healthPort),
      KUBECONFIG: kubeconfig,
      LEADER_ELECTION_NAMESPACE: namespace,
      PATH: globalThis.process.env.PATH ?? '',
      HOME: options.dir,
    },
  });
  return {
    process,
    deploymentEnv,
    healthPort,
    async ready() {
      try {
        const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
        return res.ok;
      } catch {
        return false;
      }
    },
  };
}
