import type { NodeClassOverrides } from '@fleet/contracts';
import type { DriverDescription, PlatformRules } from '../driver.js';
import { nodeClassRefProblem } from '../nodepools.js';
import { validateKubeletForMachineConfig } from '../openshift/machine-config.js';
import type { KubeObject } from '../types.js';
import { DEFAULT_NODE_CLASS_NAME, EC2_NODE_CLASS } from './constants.js';
import { validateNodeClassOverrides } from './nodeclass.js';

// What the registry and the fleet API know of AWS standalone without its driver (driver.ts), so
// that reading it loads no AWS SDK.

/** The fleet API's checks for AWS: the EC2NodeClass CRD, then the provider's own rules. */
export const AWS_PLATFORM_RULES: PlatformRules = {
  platform: 'AWS',
  nodeClass: EC2_NODE_CLASS,
  nodeClassCrdFile: 'karpenter.k8s.aws_ec2nodeclasses.yaml',
  nodeClassForValidation(overrides: NodeClassOverrides): KubeObject {
    // Placeholders for what discovery fills in; they satisfy the CRD and stay out of the answer.
    return {
      apiVersion: EC2_NODE_CLASS.apiVersion,
      kind: EC2_NODE_CLASS.kind,
      metadata: { name: DEFAULT_NODE_CLASS_NAME },
      spec: {
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-00000000000000000' }],
        subnetSelectorTerms: [{ id: 'subnet-00000000000000000' }],
        securityGroupSelectorTerms: [{ id: 'sg-00000000000000000' }],
        instanceProfile: 'placeholder',
        ...structuredClone(overrides),
      },
    };
  },
  validateNodeClassOverrides(overrides: NodeClassOverrides): void {
    validateNodeClassOverrides(overrides);
    // Standalone: kubelet settings reach the nodes through a KubeletConfig.
    validateKubeletForMachineConfig(overrides);
  },
  nodeClassRefProblem: (ref) => nodeClassRefProblem(ref, EC2_NODE_CLASS),
};

/** Standalone OpenShift on AWS: one API server, the sidecar on it. */
export const AWS_STANDALONE: DriverDescription = {
  platform: 'AWS',
  topology: 'STANDALONE',
  rules: AWS_PLATFORM_RULES,
  targets: ['workload'],
};
