import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../types.js';
import { verifyMachineNodeIdentity } from './node-identity.js';

const FLEET = new Set(['capi-east-karpenter-m6i-xlarge-us-east-1a']);
const NODE = 'ip-10-0-1-23.ec2.internal';
const PROVIDER_ID = 'aws:///us-east-1a/i-0123456789abcdef0';

function machine(overrides: {
  name?: string;
  deployment?: string;
  providerID?: string;
  nodeRef?: string;
  addresses?: { type: string; address: string }[];
  deleting?: boolean;
}): KubeObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: {
      name: overrides.name ?? 'capi-east-karpenter-m6i-xlarge-us-east-1a-x7k2p',
      namespace: 'capi-east',
      labels: {
        'cluster.x-k8s.io/deployment-name':
          overrides.deployment ?? 'capi-east-karpenter-m6i-xlarge-us-east-1a',
      },
      ...(overrides.deleting ? { deletionTimestamp: '2026-12-01T00:00:00Z' } : {}),
    },
    spec: { providerID: overrides.providerID ?? PROVIDER_ID },
    status: {
      ...(overrides.nodeRef ? { nodeRef: { kind: 'Node', name: overrides.nodeRef } } : {}),
      addresses: overrides.addresses ?? [
        { type: 'InternalIP', address: '10.0.1.23' },
        { type: 'InternalDNS', address: NODE },
        { type: 'ExternalDNS', address: 'ec2-3-3-3-3.compute-1.amazonaws.com' },
      ],
    },
  };
}

const verify = (machines: KubeObject[], nodeName = NODE, providerID = PROVIDER_ID) =>
  verifyMachineNodeIdentity([{ nodeName, providerID }], machines, FLEET)[0];

describe('verifyMachineNodeIdentity: Machines of the fleet MachineDeployments as node identity', () => {
  it('before the Node exists: the Machine addresses name the node; its internal addresses are the verdict', () => {
    expect(verify([machine({})])).toEqual({
      nodeName: NODE,
      providerID: PROVIDER_ID,
      verified: true,
      instanceID: 'capi-east-karpenter-m6i-xlarge-us-east-1a-x7k2p',
      addresses: { dnsNames: [NODE], ipAddresses: ['10.0.1.23'] },
    });
  });

  it('after the Node registered: status.nodeRef names it', () => {
    expect(verify([machine({ nodeRef: NODE, addresses: [] })])).toMatchObject({ verified: true });
  });

  it('a Machine of a MachineDeployment the fleet does not own never vouches', () => {
    expect(verify([machine({ deployment: 'capi-east-m6i-us-east-1a' })])).toMatchObject({
      verified: false,
      reason: 'InstanceNotFound',
      message: expect.stringContaining(
        "MachineDeployment capi-east-m6i-us-east-1a, not one of the fleet's",
      ),
    });
  });

  it('no Machine with the providerID, another node name, a Machine being deleted, no providerID', () => {
    expect(verify([machine({})], NODE, 'aws:///us-east-1a/i-0fffffffffffffff0')).toMatchObject({
      verified: false,
      reason: 'InstanceNotFound',
    });
    expect(verify([machine({})], 'ip-10-0-9-9.ec2.internal')).toMatchObject({
      verified: false,
      reason: 'NodeNameMismatch',
    });
    expect(verify([machine({ deleting: true })])).toMatchObject({
      verified: false,
      reason: 'InstanceNotRunning',
    });
    expect(verify([machine({})], NODE, '')).toMatchObject({
      verified: false,
      reason: 'InvalidProviderID',
    });
  });

  it('an external address is no node name', () => {
    expect(verify([machine({})], 'ec2-3-3-3-3.compute-1.amazonaws.com')).toMatchObject({
      verified: false,
      reason: 'NodeNameMismatch',
    });
  });
});
