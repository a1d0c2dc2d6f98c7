import type { NodeClassOverrides } from '@fleet/contracts';
import { EC2_NODE_CLASS } from '../aws/constants.js';
import { validateNodeClassOverrides } from '../aws/nodeclass.js';
import type { DriverDescription, PlatformRules } from '../driver.js';
import { nodeClassRefProblem } from '../nodepools.js';
import type { KubeObject } from '../types.js';
import {
  HOSTED_DEFAULT_NODE_CLASS_NAME,
  HOSTED_NODECLASS_REF_HINT,
  OPENSHIFT_EC2_NODE_CLASS,
} from './autonode.js';

// What the registry and the fleet API know of hosted AWS without its driver (driver.ts), so that
// reading it loads no AWS SDK.

/** The fleet API's checks for hosted AWS: the OpenshiftEC2NodeClass CRD, then the AWS rules. */
export const AWS_HOSTED_PLATFORM_RULES: PlatformRules = {
  platform: 'AWS',
  nodeClass: OPENSHIFT_EC2_NODE_CLASS,
  nodeClassCrdFile: 'karpenter.hypershift.openshift.io_openshiftec2nodeclasses.yaml',
  nodeClassForValidation(overrides: NodeClassOverrides): KubeObject {
    // Placeholders for the selectors rendered from the infraID; they stay out of the answer.
    return {
      apiVersion: OPENSHIFT_EC2_NODE_CLASS.apiVersion,
      kind: OPENSHIFT_EC2_NODE_CLASS.kind,
      metadata: { name: HOSTED_DEFAULT_NODE_CLASS_NAME },
      spec: {
        subnetSelectorTerms: [{ tags: { 'kubernetes.io/role/internal-elb': '1' } }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'placeholder' } }],
        ...structuredClone(overrides),
      },
    };
  },
  // Hosted nodes keep spec.kubelet on their NodeClass (no KubeletConfig), so only the EC2 rules.
  validateNodeClassOverrides,
  nodeClassRefProblem: (ref) => nodeClassRefProblem(ref, EC2_NODE_CLASS, HOSTED_NODECLASS_REF_HINT),
};

/** HyperShift on AWS: the management cluster (the sidecar's) and the hosted guest. */
export const AWS_HOSTED: DriverDescription = {
  platform: 'AWS',
  topology: 'HOSTED',
  rules: AWS_HOSTED_PLATFORM_RULES,
  targets: ['management', 'workload'],
};
