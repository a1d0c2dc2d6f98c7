import { enforcedFieldsPolicy, launchGate } from '../openshift/admission-policies.js';
import type { KubeObject } from '../types.js';
import { AKS_NODE_CLASS } from './constants.js';

export const NODECLASS_POLICY_NAME = 'karpenter-fleet-aksnodeclass-enforced-fields';
export const LAUNCH_GATE_POLICY_NAME = 'karpenter-fleet-aksnodeclaim-launch-gate';

/** The AKSNodeClass fields RHCOS needs from the cluster (enforcedNodeClassFields). */
const ENFORCED_FIELDS = ['marketplaceImage', 'userData'] as const;

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
    ...enforcedFieldsPolicy({
      name: NODECLASS_POLICY_NAME,
      nodeClass: AKS_NODE_CLASS,
      fields: ENFORCED_FIELDS,
      sidecarUsername,
      why: "the worker's marketplace image and its Ignition user data",
    }),
    ...launchGate({ name: LAUNCH_GATE_POLICY_NAME, nodeClass: AKS_NODE_CLASS, gateNamespace }),
  ];
}
