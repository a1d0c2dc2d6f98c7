import {
  CONFIG_MAP,
  KARPENTER_CR,
  NODECLAIM,
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
} from '@fleet/contracts';
import { canonical } from '../canonical.js';
import { ownedLabels } from '../labels.js';
import {
  LAUNCHABLE_NODECLASSES,
  renderLaunchableNodeClasses,
} from '../openshift/machine-config.js';
import type { KubeObject } from '../types.js';
import { EC2_NODE_CLASS, KARPENTER_CR_NAME } from './constants.js';

export const NODECLASS_POLICY_NAME = 'karpenter-fleet-ec2nodeclass-enforced-fields';
export const KARPENTER_CR_POLICY_NAME = 'karpenter-fleet-karpenter-cr';
export const LAUNCH_GATE_POLICY_NAME = 'karpenter-fleet-nodeclaim-launch-gate';

/** The EC2NodeClass fields RHCOS needs from the cluster (enforcedNodeClassFields). */
const ENFORCED_FIELDS = ['amiFamily', 'amiSelectorTerms', 'userData'] as const;

/** Both absent, or both present and equal: CEL has no "absent equals absent" of its own. */
const unchanged = (field: string) =>
  `has(object.spec.${field}) == has(oldObject.spec.${field}) && (!has(object.spec.${field}) || object.spec.${field} == oldObject.spec.${field})`;

function policy(name: string, spec: Record<string, unknown>): KubeObject {
  return canonical({
    apiVersion: VALIDATING_ADMISSION_POLICY.apiVersion,
    kind: VALIDATING_ADMISSION_POLICY.kind,
    metadata: { name, labels: ownedLabels() },
    spec,
  });
}

function binding(name: string, extra: Record<string, unknown> = {}): KubeObject {
  return canonical({
    apiVersion: VALIDATING_ADMISSION_POLICY_BINDING.apiVersion,
    kind: VALIDATING_ADMISSION_POLICY_BINDING.kind,
    metadata: { name, labels: ownedLabels() },
    spec: { policyName: name, validationActions: ['Deny'], ...extra },
  });
}

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
  const notTheSidecar = [
    {
      name: 'not-the-karpenter-fleet-sidecar',
      expression: `request.userInfo.username != ${JSON.stringify(sidecarUsername)}`,
    },
  ];
  return [
    policy(NODECLASS_POLICY_NAME, {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [EC2_NODE_CLASS.group],
            apiVersions: ['*'],
            resources: [EC2_NODE_CLASS.plural],
            operations: ['UPDATE'],
          },
        ],
      },
      matchConditions: notTheSidecar,
      validations: ENFORCED_FIELDS.map((field) => ({
        expression: unchanged(field),
        message: `spec.${field} is set by the Karpenter fleet from the cluster (the RHCOS AMI and its Ignition user data) and cannot be changed`,
        reason: 'Forbidden',
      })),
    }),
    binding(NODECLASS_POLICY_NAME),
    policy(KARPENTER_CR_POLICY_NAME, {
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
      matchConditions: notTheSidecar,
      validations: [
        {
          expression: 'false',
          message: `Karpenter is enabled on this cluster by the Karpenter fleet; Karpenter "${KARPENTER_CR_NAME}" goes when the fleet disables Karpenter (kfleet karpenter disable), not by deleting it`,
          reason: 'Forbidden',
        },
      ],
    }),
    binding(KARPENTER_CR_POLICY_NAME),
    renderLaunchableNodeClasses(gateNamespace),
    policy(LAUNCH_GATE_POLICY_NAME, {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: CONFIG_MAP.apiVersion, kind: CONFIG_MAP.kind },
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [NODECLAIM.group],
            apiVersions: ['*'],
            resources: [NODECLAIM.plural],
            operations: ['CREATE'],
          },
        ],
      },
      matchConditions: [
        {
          name: 'of-an-ec2nodeclass',
          expression: `object.spec.nodeClassRef.group == ${JSON.stringify(EC2_NODE_CLASS.group)} && object.spec.nodeClassRef.kind == ${JSON.stringify(EC2_NODE_CLASS.kind)}`,
        },
      ],
      validations: [
        {
          expression: 'has(params.data) && object.spec.nodeClassRef.name in params.data',
          messageExpression: `'EC2NodeClass ' + object.spec.nodeClassRef.name + ' cannot launch nodes yet: the Karpenter fleet has not put its MachineConfigPool karpenter-' + object.spec.nodeClassRef.name + ' and Ignition pointer in place (see the KarpenterPoolsDegraded condition of the cluster in the fleet)'`,
          reason: 'Forbidden',
        },
      ],
    }),
    binding(LAUNCH_GATE_POLICY_NAME, {
      paramRef: {
        name: LAUNCHABLE_NODECLASSES,
        namespace: gateNamespace,
        parameterNotFoundAction: 'Deny',
      },
    }),
  ];
}
