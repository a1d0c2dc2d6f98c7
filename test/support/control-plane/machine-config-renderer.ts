import { createHash } from 'node:crypto';

import type { KubeObject } from '../kube-apiserver/index.js';
import type { RealControlPlane } from './control-plane.js';

// The one part of the Machine Config Operator the real-server scenarios need, on a real control
// plane: a custom pool's render. For each MachineConfigPool it names the generated MachineConfigs
// its KubeletConfigs yield (99-<pool>-generated-kubelet, then -1, -2 … as
// pkg/controller/kubelet-config/helpers.go getManagedKubeletConfigKey numbers them at
// openshift/machine-config-operator 7ff337a4) and writes status.configuration as the render
// controller does (rendered-<pool>-<hash> and its sources). It renders no file and drives no
// node: test/support/machine-config-operator.ts is the full emulation on the in-process server.

const MCO = 'machineconfiguration.openshift.io/v1';

export class MachineConfigPoolRenderer {
  private timer?: NodeJS.Timeout;
  private busy = false;

  constructor(private readonly plane: RealControlPlane) {}

  start(): this {
    this.timer = setInterval(() => void this.tick(), 250);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async list(plural: string): Promise<KubeObject[]> {
    const { json } = await this.plane.request('GET', `/apis/${MCO}/${plural}`);
    return (json as { items?: KubeObject[] }).items ?? [];
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const kubeletConfigs = await this.list('kubeletconfigs');
      for (const pool of await this.list('machineconfigpools')) {
        const name = pool.metadata!.name!;
        const labels = pool.metadata?.labels ?? {};
        const selecting = kubeletConfigs
          .filter((config) => {
            const selector = (
              config.spec as {
                machineConfigPoolSelector?: { matchLabels?: Record<string, string> };
              }
            ).machineConfigPoolSelector?.matchLabels;
            return selector && Object.entries(selector).every(([k, v]) => labels[k] === v);
          })
          .sort((a, b) =>
            (a.metadata?.creationTimestamp ?? '').localeCompare(
              b.metadata?.creationTimestamp ?? '',
            ),
          );
        const sources = [
          `00-worker`,
          `97-${name}-generated-kubelet`,
          ...selecting.map((_, i) => `99-${name}-generated-kubelet${i === 0 ? '' : `-${i}`}`),
        ];
        const hash = createHash('sha256')
          .update(JSON.stringify([sources, selecting.map((c) => c.spec)]))
          .digest('hex')
          .slice(0, 32);
        const rendered = `rendered-${name}-${hash}`;
        const current = (pool.status as { configuration?: { name?: string } } | undefined)
          ?.configuration?.name;
        if (current === rendered) continue;
        await this.plane.patch(
          MCO,
          'MachineConfigPool',
          name,
          undefined,
          {
            status: {
              observedGeneration: pool.metadata?.generation ?? 1,
              configuration: {
                name: rendered,
                source: sources.map((s) => ({ apiVersion: MCO, kind: 'MachineConfig', name: s })),
              },
            },
          },
          'merge',
          'status',
        );
      }
    } catch {
      // the API server restarting, or the CRDs not served yet: the next tick tries again
    } finally {
      this.busy = false;
    }
  }
}
