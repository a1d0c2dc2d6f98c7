import { KARPENTER_CR } from '@fleet/contracts';
import {
  admissionPolicy,
  admissionPolicyBinding,
  enforcedFieldsPolicy,
  launchGate,
  notTheSidecar,
} from '../openshift/admission-policies.js';
import type { KubeObject } from '../types.js';
import { EC2_NODE_CLASS, KARPENTER_CR_NAME } from './constants.js';

export const NODECLASS_POLICY_NAME = 'karpenter-fleet-ec2nodeclass-enforced-fields';
export const KARPENTER_CR_POLICY_NAME = 'karpenter-fleet-karpenter-cr';
export const LAUNCH_GATE_POLICY_NAME = 'karpenter-fleet-nodeclaim-launch-gate';

/** The EC2NodeClass fields RHCOS needs from the cluster (enforcedNodeClassFields). */
const ENFORCED_FIELDS = ['amiFamily', 'amiSelectorTerms', 'userData'] as const;

/**
 * The ValidatingAdmissionPolicies the karpenter-operator enhancement asks for, rendered while
 * Karpenter is enabled (disabling prunes them with everything else):
 * - only the sidecar's own user may change `amiFamily`, `amiSelectorTerms` and `userData` of an
 *   EC2NodeClass (RHCOS boots only from the cluster's AMI with its Ignition); creating a class
 *   stays open, since the CRD requires amiSelectorTerms and a user cannot know the cluster's, so
 *   the sidecar corrects a new class right after;
 * - the Karpenter CR `default` cannot be deleted (only the sidecar removes it, when the fleet
 *   disables Karpenter).
 * - a NodeClaim of an EC2NodeClass may be created only once the NodeClass controller has listed
 *   that NodeClass in the launch gate's ConfigMap (its MachineConfigPool and Ignition pointer are
 *   in place): Karpenter creates the NodeClaim before it launches the instance, so a refused
 *   NodeClaim launches nothing, and Karpenter retries it in its next provisioning loop. The
 *   ConfigMap missing denies every NodeClaim (parameterNotFoundAction Deny).
 * Status writes (Karpenter's) are not matched: the rules name the main resource only.
 */
export function renderAdmissionPolicies(
  sidecarUsername: string,
  gateNamespace: string,
): KubeObject[] {
  return [
    ...enforcedFieldsPolicy({
      name: NODECLASS_POLICY_NAME,
      nodeClass: EC2_NODE_CLASS,
      fields: ENFORCED_FIELDS,
      sidecarUsername,
      why: 'the RHCOS AMI and its Ignition user data',
    }),
    admissionPolicy(KARPENTER_CR_POLICY_NAME, {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [KARPENTER_CR.group],
            apiVersions: ['*'],
            resources: [KARPENTER_CR.plural],
            operations: ['DELETE'],
            resourceNames: [KARPENTER_CR_NAME],
          },
        ],
      },
      matchConditions: notTheSidecar(sidecarUsername),
      validations: [
        {
          expression: 'false',
          message: `Karpenter is enabled on this cluster by the Karpenter fleet; Karpenter "${KARPENTER_CR_NAME}" goes when the fleet disables Karpenter (kfleet karpenter disable), not by deleting it`,
          reason: 'Forbidden',
        },
      ],
    }),
    admissionPolicyBinding(KARPENTER_CR_POLICY_NAME),
    ...launchGate({ name: LAUNCH_GATE_POLICY_NAME, nodeClass: EC2_NODE_CLASS, gateNamespace }),
  ];
}
