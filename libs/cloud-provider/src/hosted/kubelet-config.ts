import { stringify } from 'yaml';
import { canonical } from '../canonical.js';
import { ownedLabels } from '../labels.js';
import type { KubeObject } from '../types.js';

/*
 * The KubeletConfig ConfigMaps HyperShift's karpenter-operator keeps in the HCP namespace
 * (openshift/hypershift support/karpenter/karpenter.go, karpenter-operator/controllers/karpenter
 * reconcileTaintConfigMap and karpenterignition reconcileKubeletConfigMap). Its NodePool config
 * pipeline reads the `config` key of each (a machineconfiguration.openshift.io/v1 KubeletConfig)
 * and renders it into the user data: a NodeClass without `spec.kubelet` gets `set-karpenter-taint`,
 * one with it gets `karpenter-kubelet-<name>`, which carries the taint too (MCO refuses two
 * KubeletConfigs for one pool). Converged mode writes the same objects, same names and data.
 */

export const TAINT_CONFIG_MAP_NAME = 'set-karpenter-taint';
/** HyperShift's label on the per-NodeClass ConfigMaps, so they can be discovered. */
export const NODECLASS_KUBELET_CONFIG_LABEL =
  'hypershift.openshift.io/karpenter-nodeclass-kubelet-config';

export const nodeClassKubeletConfigName = (nodeClassName: string): string =>
  `karpenter-kubelet-${nodeClassName}`;

/** Nodes register tainted until Karpenter has seen them (HyperShift's KarpenterBaseTaints). */
export const KARPENTER_BASE_TAINTS = [
  { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' },
] as const;

const baseTaintMap = (): Record<string, unknown> => ({
  registerWithTaints: KARPENTER_BASE_TAINTS.map((t) => ({ ...t })),
});

/** As sigs.k8s.io/yaml writes it: keys sorted, sequences not indented, no trailing newline. */
function kubeletConfigManifest(name: string, kubeletConfig: Record<string, unknown>): string {
  return stringify(
    {
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'KubeletConfig',
      metadata: { name },
      spec: { kubeletConfig },
    },
    { sortMapEntries: true, indentSeq: false },
  ).replace(/\n$/, '');
}

function configMap(
  name: string,
  namespace: string,
  config: string,
  labels: Record<string, string>,
): KubeObject {
  return canonical({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: ownedLabels(labels) },
    data: { config },
  });
}

/** `set-karpenter-taint`: only the startup taint. */
export function renderTaintConfigMap(hcpNamespace: string): KubeObject {
  return configMap(
    TAINT_CONFIG_MAP_NAME,
    hcpNamespace,
    kubeletConfigManifest(TAINT_CONFIG_MAP_NAME, baseTaintMap()),
    {},
  );
}

/**
 * `karpenter-kubelet-<name>` for an OpenshiftEC2NodeClass with a non-empty `spec.kubelet`, or
 * undefined (HyperShift deletes it then). The taint is merged last so the class cannot drop it.
 */
export function renderNodeClassKubeletConfigMap(
  nodeClass: KubeObject,
  hcpNamespace: string,
): KubeObject | undefined {
  const spec = ((nodeClass as { spec?: unknown }).spec ?? {}) as { kubelet?: unknown };
  const kubelet =
    spec.kubelet && typeof spec.kubelet === 'object' && !Array.isArray(spec.kubelet)
      ? (spec.kubelet as Record<string, unknown>)
      : {};
  if (Object.keys(kubelet).length === 0) return undefined;
  const name = nodeClassKubeletConfigName(nodeClass.metadata.name);
  return configMap(
    name,
    hcpNamespace,
    kubeletConfigManifest(name, { ...kubelet, ...baseTaintMap() }),
    {
      [NODECLASS_KUBELET_CONFIG_LABEL]: 'true',
    },
  );
}
