import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MCS_PORT } from '../support/machine-config-operator.js';
import { GENERAL_NODEPOOL, startAzureHarness, until, type AzureHarness } from './harness.js';

const MCO = 'machineconfiguration.openshift.io/v1';
const UNREGISTERED_TAINT = { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' };

/**
 * The Azure harness runs the same emulated MCO and MCS as the AWS one (issue 45, point 6): the
 * AKSNodeClass's pool is rendered with its KubeletConfig (registration taint, the worker's
 * settings, refusals) and the launch gate waits for it, exactly as on AWS, since both drivers
 * render their pools with libs/cloud-provider's openshift/machine-config.ts.
 */
describe('Azure: the default AKSNodeClass gets a MachineConfigPool the MCO renders', () => {
  let h: AzureHarness;
  const kube = () => h.cluster.kube;
  const poolStatus = () =>
    (kube().get(MCO, 'MachineConfigPool', 'karpenter-default')?.status ?? {}) as {
      configuration?: { name?: string; source?: { name: string }[] };
    };

  beforeAll(async () => {
    h = await startAzureHarness();
  });
  afterAll(async () => h?.stop());

  it('renders karpenter-default with its KubeletConfig, then opens the launch gate; the MCS serves the taint', async () => {
    const release = h.cluster.mco!.holdRendering('karpenter-default');
    await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        nodeClassOverrides: { kubelet: { podPidsLimit: 8192 } },
      }),
    );
    const gate = () =>
      (
        kube().get(
          'v1',
          'ConfigMap',
          'karpenter-fleet-launchable-nodeclasses',
          'openshift-karpenter',
        )?.data as Record<string, string> | undefined
      )?.default;
    // Applied, not rendered: the gate stays shut.
    await h.runtime.idle();
    expect(kube().get(MCO, 'MachineConfigPool', 'karpenter-default')).toBeDefined();
    expect(gate()).toBeUndefined();
    release();
    await until(gate, 'the default AKSNodeClass in the launch gate');
    expect(poolStatus().configuration?.source?.map((s) => s.name)).toContain(
      '99-karpenter-default-generated-kubelet',
    );
    expect(kube().get(MCO, 'KubeletConfig', 'karpenter-default')?.spec).toMatchObject({
      kubeletConfig: { podPidsLimit: 8192, registerWithTaints: [UNREGISTERED_TAINT] },
    });
    // The AKSNodeClass's user data points at the pool on the cluster's MCS.
    const nodeClass = kube().get('karpenter.azure.com/v1beta1', 'AKSNodeClass', 'default');
    // The fork passes userData to the VM as is (PROVISION_MODE=openshift): the Ignition pointer.
    const pointer = (nodeClass?.spec as { userData?: string } | undefined)?.userData ?? '';
    expect(pointer).toContain(`:${MCS_PORT}/config/karpenter-default`);
    const booted = await h.cluster.mco!.boot(pointer);
    expect(booted.pool).toBe('karpenter-default');
    expect(booted.kubeletConfig).toMatchObject({
      podPidsLimit: 8192,
      registerWithTaints: [UNREGISTERED_TAINT],
    });
  });
});
