// Test-only helpers (not exported from the lib): the standalone OpenShift-on-AWS fixture cluster.
import { readdirSync, readFileSync } from 'node:fs';

import { parse } from 'yaml';

export const OCP_AWS_STANDALONE = new URL(
  '../../../../shared/fixtures/clusters/ocp-aws-standalone/',
  import.meta.url,
);

export function fixtureObject<T = Record<string, unknown>>(file: string): T {
  return parse(readFileSync(new URL(file, OCP_AWS_STANDALONE), 'utf8')) as T;
}

/** Every Kubernetes object in the fixture directory. */
export function fixtureObjects(): Record<string, unknown>[] {
  return readdirSync(OCP_AWS_STANDALONE)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => fixtureObject(f));
}

export function fixtureWorldPath(): URL {
  return new URL('ec2-world.json', OCP_AWS_STANDALONE);
}

/** A mutable MachineSet shape for building variants in tests. */
export interface MachineSetFixture {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; annotations?: Record<string, string> };
  spec: {
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        metadata?: { labels?: Record<string, string> };
        taints?: { key: string; effect: string }[];
        providerSpec: { value: Record<string, unknown> };
      };
    };
  };
}

export function workerMachineSet(zone: 'a' | 'b' | 'c' = 'a'): MachineSetFixture {
  return fixtureObject<MachineSetFixture>(`machineset-worker-us-east-1${zone}.yaml`);
}

export function renamed(ms: MachineSetFixture, name: string): MachineSetFixture {
  const copy = structuredClone(ms);
  copy.metadata.name = name;
  return copy;
}
