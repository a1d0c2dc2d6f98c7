import { defineKind } from '@fleet/contracts';

/** HyperShift's kinds (hypershift.openshift.io/v1beta1), as the management cluster serves them. */
export const HYPERSHIFT_GROUP = 'hypershift.openshift.io';
export const HOSTED_CLUSTER = defineKind(
  HYPERSHIFT_GROUP,
  'v1beta1',
  'HostedCluster',
  'hostedclusters',
  true,
);
export const HOSTED_CONTROL_PLANE = defineKind(
  HYPERSHIFT_GROUP,
  'v1beta1',
  'HostedControlPlane',
  'hostedcontrolplanes',
  true,
);
/** HyperShift's own NodePool (machine pools of the guest), not karpenter.sh's. */
export const HYPERSHIFT_NODE_POOL = defineKind(
  HYPERSHIFT_GROUP,
  'v1beta1',
  'NodePool',
  'nodepools',
  true,
);

/** `<namespace>/<name>` of the HostedCluster, written on its HostedControlPlane by HyperShift. */
export const HOSTED_CLUSTER_ANNOTATION = 'hypershift.openshift.io/cluster';
/** The instance profile HyperShift created for Karpenter's nodes, on the HostedControlPlane. */
export const KARPENTER_INSTANCE_PROFILE_ANNOTATION =
  'hypershift.openshift.io/aws-karpenter-default-instance-profile';
/** HyperShift's control-plane components for AutoNode, Deployments in the HCP namespace. */
export const HYPERSHIFT_KARPENTER_OPERATOR = 'karpenter-operator';
export const HYPERSHIFT_KARPENTER_OPERAND = 'karpenter';
/** The guest kubeconfig HyperShift's control-plane components use (key `kubeconfig`). */
export const HCCO_KUBECONFIG_SECRET = 'hcco-kubeconfig';
/**
 * The hosted sidecar's own guest kubeconfig (key `kubeconfig`) in the HCP namespace, written by
 * its guest bootstrap: what the sidecar's pod mounts instead of the admin `hcco-kubeconfig`.
 */
export const HOSTED_GUEST_KUBECONFIG_SECRET = 'karpenter-fleet-guest-kubeconfig';
