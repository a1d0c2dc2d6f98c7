import {
  CONFIG_MAP,
  NODECLAIM,
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
  type ResourceIdentity,
} from '@fleet/contracts';
import { canonical } from '../canonical.js';
import { ownedLabels } from '../labels.js';
import type { KubeObject } from '../types.js';
import { LAUNCHABLE_NODECLASSES, renderLaunchableNodeClasses } from './machine-config.js';

/** A ValidatingAdmissionPolicy the fleet owns. */
export function admissionPolicy(name: string, spec: Record<string, unknown>): KubeObject {
  return canonical({
    apiVersion: VALIDATING_ADMISSION_POLICY.apiVersion,
    kind: VALIDATING_ADMISSION_POLICY.kind,
    metadata: { name, labels: ownedLabels() },
    spec,
  });
}

/** Its binding, denying what the policy refuses. */
export function admissionPolicyBinding(
  name: string,
  extra: Record<string, unknown> = {},
): KubeObject {
  return canonical({
    apiVersion: VALIDATING_ADMISSION_POLICY_BINDING.apiVersion,
    kind: VALIDATING_ADMISSION_POLICY_BINDING.kind,
    metadata: { name, labels: ownedLabels() },
    spec: { policyName: name, validationActions: ['Deny'], ...extra },
  });
}

/** Every request but the sidecar's own. */
export const notTheSidecar = (sidecarUsername: string) => [
  {
    name: 'not-the-karpenter-fleet-sidecar',
    expression: `request.userInfo.username != ${JSON.stringify(sidecarUsername)}`,
  },
];

const unchanged = (field: string) =>
  `has(object.spec.${field}) == has(oldObject.spec.${field}) && (!has(object.spec.${field}) || object.spec.${field} == oldObject.spec.${field})`;

/**
 * Only the sidecar may change the NodeClass fields RHCOS needs from the cluster (the worker image
 * and its Ignition user data); `why` says where they come from. Status writes are not matched.
 */
export function enforcedFieldsPolicy(options: {
  name: string;
  nodeClass: ResourceIdentity;
  fields: readonly string[];
  sidecarUsername: string;
  why: string;
}): KubeObject[] {
  const { name, nodeClass, fields, sidecarUsername, why } = options;
  return [
    admissionPolicy(name, {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [nodeClass.group],
            apiVersions: ['*'],
            resources: [nodeClass.plural],
            operations: ['UPDATE'],
          },
        ],
      },
      matchConditions: notTheSidecar(sidecarUsername),
      validations: fields.map((field) => ({
        expression: unchanged(field),
        message: `spec.${field} is set by the Karpenter fleet from the cluster (${why}) and cannot be changed`,
        reason: 'Forbidden',
      })),
    }),
    admissionPolicyBinding(name),
  ];
}

/**
 * The launch gate: a NodeClaim of this NodeClass kind is created only once its NodeClass is in
 * the gate's ConfigMap (its MachineConfigPool and Ignition pointer are in place). Karpenter
 * creates the NodeClaim before it launches the instance, so a refused NodeClaim launches
 * nothing and is retried in its next provisioning loop; the ConfigMap missing denies every
 * NodeClaim (parameterNotFoundAction Deny).
 */
export function launchGate(options: {
  name: string;
  nodeClass: ResourceIdentity;
  gateNamespace: string;
}): KubeObject[] {
  const { name, nodeClass, gateNamespace } = options;
  return [
    renderLaunchableNodeClasses(gateNamespace),
    admissionPolicy(name, {
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
          name: `of-an-${nodeClass.kind.toLowerCase()}`,
          expression: `object.spec.nodeClassRef.group == ${JSON.stringify(nodeClass.group)} && object.spec.nodeClassRef.kind == ${JSON.stringify(nodeClass.kind)}`,
        },
      ],
      validations: [
        {
          expression: 'has(params.data) && object.spec.nodeClassRef.name in params.data',
          messageExpression: `'${nodeClass.kind} ' + object.spec.nodeClassRef.name + ' cannot launch nodes yet: the Karpenter fleet has not put its MachineConfigPool karpenter-' + object.spec.nodeClassRef.name + ' and Ignition pointer in place (see the KarpenterPoolsDegraded condition of the cluster in the fleet)'`,
          reason: 'Forbidden',
        },
      ],
    }),
    admissionPolicyBinding(name, {
      paramRef: {
        name: LAUNCHABLE_NODECLASSES,
        namespace: gateNamespace,
        parameterNotFoundAction: 'Deny',
      },
    }),
  ];
}
