import {
  CONFIG_MAP,
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
import { AKS_NODE_CLASS } from './constants.js';

export const NODECLASS_POLICY_NAME = 'karpenter-fleet-aksnodeclass-enforced-fields';
export const LAUNCH_GATE_POLICY_NAME = 'karpenter-fleet-aksnodeclaim-launch-gate';

/** The AKSNodeClass fields RHCOS needs from the cluster (enforcedNodeClassFields). */
const ENFORCED_FIELDS = ['marketplaceImage', 'userData'] as const;

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
 * As on AWS (aws/admission-policies.ts), while Karpenter is enabled: only the sidecar may change
 * an AKSNodeClass's `marketplaceImage` and `userData` (the worker image and its Ignition pointer);
 * a NodeClaim of an AKSNodeClass is created only once the NodeClass is in the launch gate's
 * ConfigMap (its MachineConfigPool and pointer are in place). There is no Karpenter CR on Azure.
 */
export function renderAdmissionPolicies(
  sidecarUsername: string,
  gateNamespace: string,
): KubeObject[] {
  return [
    policy(NODECLASS_POLICY_NAME, {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [AKS_NODE_CLASS.group],
            apiVersions: ['*'],
            resources: [AKS_NODE_CLASS.plural],
            operations: ['UPDATE'],
          },
        ],
      },
      matchConditions: [
        {
          name: 'not-the-karpenter-fleet-sidecar',
          expression: `request.userInfo.username != ${JSON.stringify(sidecarUsername)}`,
        },
      ],
      validations: ENFORCED_FIELDS.map((field) => ({
        expression: unchanged(field),
        message: `spec.${field} is set by the Karpenter fleet from the cluster (the worker's marketplace image and its Ignition user data) and cannot be changed`,
        reason: 'Forbidden',
      })),
    }),
    binding(NODECLASS_POLICY_NAME),
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
          name: 'of-an-aksnodeclass',
          expression: `object.spec.nodeClassRef.group == ${JSON.stringify(AKS_NODE_CLASS.group)} && object.spec.nodeClassRef.kind == ${JSON.stringify(AKS_NODE_CLASS.kind)}`,
        },
      ],
      validations: [
        {
          expression: 'has(params.data) && object.spec.nodeClassRef.name in params.data',
          messageExpression: `'AKSNodeClass ' + object.spec.nodeClassRef.name + ' cannot launch nodes yet: the Karpenter fleet has not put its MachineConfigPool karpenter-' + object.spec.nodeClassRef.name + ' and Ignition pointer in place (see the KarpenterPoolsDegraded condition of the cluster in the fleet)'`,
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
