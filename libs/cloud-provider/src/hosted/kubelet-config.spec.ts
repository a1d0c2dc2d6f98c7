import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { OWNED_BY_SELECTOR } from '../labels.js';
import type { KubeObject } from '../types.js';
import {
  NODECLASS_KUBELET_CONFIG_LABEL,
  renderNodeClassKubeletConfigMap,
  renderTaintConfigMap,
} from './kubelet-config.js';

const NS = 'clusters-alpha';
const [ownedKey, ownedValue] = OWNED_BY_SELECTOR.split('=') as [string, string];
const nodeClass = (name: string, kubelet?: unknown): KubeObject => ({
  apiVersion: 'karpenter.hypershift.openshift.io/v1',
  kind: 'OpenshiftEC2NodeClass',
  metadata: { name },
  spec: kubelet === undefined ? {} : { kubelet },
});

// What openshift/hypershift support/karpenter KarpenterTaintConfigManifest writes (sigs.k8s.io/yaml).
const UPSTREAM_TAINT = `apiVersion: machineconfiguration.openshift.io/v1
kind: KubeletConfig
metadata:
  name: set-karpenter-taint
spec:
  kubeletConfig:
    registerWithTaints:
    - effect: NoExecute
      key: karpenter.sh/unregistered
      value: "true"`;

describe('HyperShift KubeletConfig ConfigMaps', () => {
  it('set-karpenter-taint holds the startup taint as upstream writes it', () => {
    const cm = renderTaintConfigMap(NS) as KubeObject & { data: Record<string, string> };
    expect(cm.metadata).toMatchObject({ name: 'set-karpenter-taint', namespace: NS });
    expect(cm.metadata.labels?.[ownedKey]).toBe(ownedValue);
    expect(cm.metadata.labels?.[NODECLASS_KUBELET_CONFIG_LABEL]).toBeUndefined();
    expect(cm.data).toEqual({ config: UPSTREAM_TAINT });
  });

  it('a NodeClass with spec.kubelet gets karpenter-kubelet-<name> with its settings and the taint', () => {
    const cm = renderNodeClassKubeletConfigMap(
      nodeClass('gpu', { maxPods: 110, kubeReserved: { cpu: '500m' } }),
      NS,
    ) as KubeObject & { data: Record<string, string> };
    expect(cm.metadata).toMatchObject({ name: 'karpenter-kubelet-gpu', namespace: NS });
    expect(cm.metadata.labels).toMatchObject({
      [NODECLASS_KUBELET_CONFIG_LABEL]: 'true',
      [ownedKey]: ownedValue,
    });
    expect(Object.keys(cm.data)).toEqual(['config']);
    expect(parse(cm.data.config!)).toEqual({
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'KubeletConfig',
      metadata: { name: 'karpenter-kubelet-gpu' },
      spec: {
        kubeletConfig: {
          kubeReserved: { cpu: '500m' },
          maxPods: 110,
          registerWithTaints: [
            { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' },
          ],
        },
      },
    });
    expect(cm.data.config).not.toMatch(/\n$/);
  });

  it('the taint wins over a registerWithTaints the class carries', () => {
    const cm = renderNodeClassKubeletConfigMap(
      nodeClass('x', { maxPods: 5, registerWithTaints: [] }),
      NS,
    ) as KubeObject & { data: Record<string, string> };
    const parsed = parse(cm.data.config!) as {
      spec: { kubeletConfig: { registerWithTaints: unknown[] } };
    };
    expect(parsed.spec.kubeletConfig.registerWithTaints).toHaveLength(1);
  });

  it('no ConfigMap without kubelet settings (HyperShift deletes it then)', () => {
    expect(renderNodeClassKubeletConfigMap(nodeClass('plain'), NS)).toBeUndefined();
    expect(renderNodeClassKubeletConfigMap(nodeClass('empty', {}), NS)).toBeUndefined();
  });
});
