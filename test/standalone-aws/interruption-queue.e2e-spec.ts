import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { GENERAL_NODEPOOL, startHarness, type Harness } from './harness.js';

const QUEUE = 'ocp-east-spot';

describe('standalone AWS: Spot interruption handling through an SQS queue', () => {
  let h: Harness;
  const deployment = () =>
    h.cluster.kube.get('apps/v1', 'Deployment', OPERAND_NAME, OPERAND_NAMESPACE) as
      | (KubeObject & {
          spec: {
            template: { spec: { containers: { env: { name: string; value?: string }[] }[] } };
          };
        })
      | undefined;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('refuses a queue that does not exist, naming it and the region, and applies nothing', async () => {
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], interruptionQueue: QUEUE }),
    );
    expect(result.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'InterruptionQueueNotFound',
      message: `interruptionQueue: SQS queue ${QUEUE} does not exist in us-east-1`,
    });
    expect(deployment()).toBeUndefined();
    expect(h.cluster.ec2.requestLog.filter((r) => r.action.startsWith('sqs:'))).toEqual([
      { action: 'sqs:GetQueueUrl', params: { QueueName: QUEUE }, errorCode: 'QueueDoesNotExist' },
    ]);
  });

  it('once the queue exists: the operand reads it, and its credentials may use only that queue', async () => {
    h.cluster.ec2.addQueue({ QueueName: QUEUE });
    const result = await h.runtime.apply(
      h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL], interruptionQueue: QUEUE }),
    );
    expect(result.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'False',
    });
    expect(deployment()!.spec.template.spec.containers[0]!.env).toContainEqual({
      name: 'INTERRUPTION_QUEUE',
      value: QUEUE,
    });
    const request = h.cluster.kube.get(
      'cloudcredential.openshift.io/v1',
      'CredentialsRequest',
      'openshift-karpenter',
      'openshift-cloud-credential-operator',
    ) as KubeObject & { spec: { providerSpec: { statementEntries: unknown[] } } };
    expect(request.spec.providerSpec.statementEntries).toContainEqual({
      effect: 'Allow',
      action: ['sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
      resource: `arn:aws:sqs:us-east-1:*:${QUEUE}`,
    });
    expect(
      h.cluster.ec2.requestLog.filter((r) => r.action.startsWith('sqs:')).map((r) => r.action),
    ).toEqual(['sqs:GetQueueUrl', 'sqs:GetQueueUrl', 'sqs:GetQueueAttributes']);
  });

  it('without a queue, nothing of it is set', async () => {
    await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(deployment()!.spec.template.spec.containers[0]!.env.map((e) => e.name)).not.toContain(
      'INTERRUPTION_QUEUE',
    );
  });
});
