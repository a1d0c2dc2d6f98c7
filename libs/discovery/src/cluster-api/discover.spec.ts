import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';

import {
  CAPI_CLUSTER as FIXTURE,
  capiFixtureObjects,
  startEmulatedCapiCluster,
  type EmulatedCapiCluster,
} from '@fleet/testing';
import { InMemoryClusterObjectReader, KubeClusterObjectReader } from '../cluster-reader.js';
import type { DiscoveryResult } from '../types.js';
import { AWS_TEMPLATE_PARSER } from './aws/template.js';
import { discoverClusterApi } from './discover.js';
import type { ClusterApiInfrastructure } from './types.js';

type Obj = Record<string, unknown> & {
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

const discover = (objects: unknown[]) =>
  discoverClusterApi({
    reader: new InMemoryClusterObjectReader(objects),
    clusterName: FIXTURE.name,
    namespace: FIXTURE.namespace,
    infrastructure: [AWS_TEMPLATE_PARSER],
  });

function failure(result: DiscoveryResult<ClusterApiInfrastructure>) {
  if (result.ok) throw new Error('expected discovery to fail');
  return { reason: result.reason, message: result.message };
}

function ok(result: DiscoveryResult<ClusterApiInfrastructure>): ClusterApiInfrastructure {
  if (!result.ok) throw new Error(`${result.reason}: ${result.message}`);
  return result.infrastructure;
}

/** The fixture with `edit` applied to its objects (copies). */
function fixture(edit: (objects: Obj[]) => Obj[] = (o) => o): Obj[] {
  return edit(structuredClone(capiFixtureObjects()));
}

const named = (name: string) => (o: Obj) => o.metadata?.name === name;

describe('discoverClusterApi (fixture capi-aws-workload)', () => {
  it('finds the Cluster, its worker MachineDeployments, the template to copy and the failure domains', async () => {
    const infra = ok(await discover(fixture()));
    expect(infra).toMatchObject({
      platform: 'CAPI',
      clusterName: 'capi-east',
      namespace: 'capi-east',
      infrastructureProvider: 'aws',
      failureDomains: ['us-east-1a', 'us-east-1b', 'us-east-1c'],
      worker: {
        kind: 'MachineDeployment',
        name: 'capi-east-c6i-us-east-1a',
        failureDomain: 'us-east-1a',
        version: 'v1.33.4',
        bootstrap: {
          configRef: {
            apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
            kind: 'KubeadmConfigTemplate',
            name: 'capi-east-workers',
          },
        },
      },
      template: {
        name: 'capi-east-c6i-us-east-1a',
        instanceType: 'c6i.2xlarge',
        rootVolumeGiB: 80,
      },
      workerSelection: { chosen: 'capi-east-c6i-us-east-1a', passedOver: [] },
    });
    // MachineSets of a MachineDeployment are not worker groups of their own.
    expect(infra.workers.map((w) => `${w.kind}/${w.name}`)).toEqual([
      'MachineDeployment/capi-east-c6i-us-east-1a',
      'MachineDeployment/capi-east-m6i-us-east-1a',
      'MachineDeployment/capi-east-m6i-us-east-1b',
    ]);
  });

  it("never counts the fleet's own MachineDeployments as workers", async () => {
    const infra = ok(
      await discover(
        fixture((objects) => {
          const own = structuredClone(objects.find(named('capi-east-c6i-us-east-1a'))!);
          own.metadata = {
            name: 'capi-east-karpenter-aaaa',
            labels: { ...own.metadata!.labels, 'fleet.karpenter.sh/managed-by': 'karpenter-fleet' },
          };
          return [...objects, own];
        }),
      ),
    );
    expect(infra.workers.map((w) => w.name)).not.toContain('capi-east-karpenter-aaaa');
  });

  it('ClusterNotFound names the Cluster and where it was looked for', async () => {
    expect(failure(await discover(fixture((o) => o.filter((x) => x.kind !== 'Cluster'))))).toEqual({
      reason: 'ClusterNotFound',
      message:
        'Cluster capi-east/capi-east (cluster.x-k8s.io/v1beta1) not found on the management cluster',
    });
  });

  it('UnsupportedInfrastructure for a Cluster on another infrastructure provider', async () => {
    const result = await discover(
      fixture((objects) => {
        const cluster = objects.find((x) => x.kind === 'Cluster')!;
        (cluster.spec!.infrastructureRef as Record<string, string>).kind = 'AzureCluster';
        return objects;
      }),
    );
    expect(failure(result)).toEqual({
      reason: 'UnsupportedInfrastructure',
      message:
        'Cluster capi-east/capi-east (cluster.x-k8s.io/v1beta1) runs on spec.infrastructureRef.kind AzureCluster; supported: AWSCluster',
    });
  });

  it('NoWorkerMachineDeployment when none is labelled for the cluster', async () => {
    const result = await discover(
      fixture((o) => o.filter((x) => x.kind !== 'MachineDeployment' && x.kind !== 'MachineSet')),
    );
    expect(failure(result)).toEqual({
      reason: 'NoWorkerMachineDeployment',
      message:
        'no MachineDeployment or MachineSet in capi-east labelled cluster.x-k8s.io/cluster-name=capi-east has a bootstrap and a AWSMachineTemplate; the namespace has none',
    });
  });

  it('passes over a group whose template is missing, and says so', async () => {
    const infra = ok(
      await discover(
        fixture((o) =>
          o.filter((x) => !named('capi-east-c6i-us-east-1a')(x) || x.kind !== 'AWSMachineTemplate'),
        ),
      ),
    );
    expect(infra.worker.name).toBe('capi-east-m6i-us-east-1a');
    expect(infra.workerSelection.passedOver).toEqual([
      {
        name: 'capi-east-c6i-us-east-1a',
        why: 'AWSMachineTemplate capi-east/capi-east-c6i-us-east-1a (infrastructureRef of MachineDeployment capi-east-c6i-us-east-1a) not found',
      },
    ]);
  });

  it('InfrastructureTemplateNotFound when no group has its template', async () => {
    const result = await discover(fixture((o) => o.filter((x) => x.kind !== 'AWSMachineTemplate')));
    expect(failure(result)).toEqual({
      reason: 'InfrastructureTemplateNotFound',
      message:
        'AWSMachineTemplate capi-east/capi-east-c6i-us-east-1a (infrastructureRef of MachineDeployment capi-east-c6i-us-east-1a) not found',
    });
  });

  it('InvalidInfrastructureTemplate names the field', async () => {
    const result = await discover(
      fixture((objects) =>
        objects.map((x) => {
          if (x.kind !== 'AWSMachineTemplate') return x;
          delete ((x.spec!.template as Obj).spec as Obj).instanceType;
          return x;
        }),
      ),
    );
    expect(failure(result)).toMatchObject({
      reason: 'InvalidInfrastructureTemplate',
      message: expect.stringContaining('spec.template.spec.instanceType'),
    });
  });

  it('BootstrapDataSecretNotFound for a dataSecretName bootstrap without its Secret; found with it', async () => {
    const withDataSecret = (objects: Obj[]) =>
      objects.map((x) => {
        if (x.kind !== 'MachineDeployment') return x;
        ((x.spec!.template as Obj).spec as Obj).bootstrap = { dataSecretName: 'worker-user-data' };
        return x;
      });
    expect(failure(await discover(fixture(withDataSecret)))).toEqual({
      reason: 'BootstrapDataSecretNotFound',
      message:
        'Secret capi-east/worker-user-data (bootstrap.dataSecretName of MachineDeployment capi-east-c6i-us-east-1a) not found',
    });
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'worker-user-data', namespace: 'capi-east' },
      stringData: { value: '#cloud-config' },
    };
    const infra = ok(await discover([...fixture(withDataSecret), secret]));
    expect(infra.worker.bootstrap).toEqual({ dataSecretName: 'worker-user-data' });
  });

  it("NoFailureDomains when neither the Cluster nor a worker names one; the workers' own otherwise", async () => {
    const noClusterDomains = (objects: Obj[]) =>
      objects.map((x) => (x.kind === 'Cluster' ? { ...x, status: {} } : x));
    expect(ok(await discover(fixture(noClusterDomains))).failureDomains).toEqual([
      'us-east-1a',
      'us-east-1b',
    ]);
    const none = (objects: Obj[]) =>
      noClusterDomains(objects).map((x) => {
        if (x.kind === 'MachineDeployment')
          delete ((x.spec!.template as Obj).spec as Obj).failureDomain;
        return x;
      });
    expect(failure(await discover(fixture(none)))).toMatchObject({ reason: 'NoFailureDomains' });
  });
});

describe('discoverClusterApi against the emulated management cluster', () => {
  let pair: EmulatedCapiCluster;

  beforeAll(async () => {
    pair = await startEmulatedCapiCluster();
  });
  afterAll(async () => {
    await pair.stop();
  });

  it('reads the same through the API server (label-selected lists, templates by name)', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(pair.managementKubeconfigPath);
    const result = await discoverClusterApi({
      reader: new KubeClusterObjectReader(kc),
      clusterName: FIXTURE.name,
      namespace: FIXTURE.namespace,
      infrastructure: [AWS_TEMPLATE_PARSER],
    });
    const inMemory = ok(await discover(fixture()));
    // The API server applies the CRD's defaults to the stored template (hostAffinity).
    const live = ok(result);
    expect(live.template.spec).toMatchObject(inMemory.template.spec);
    expect({ ...live, template: { ...live.template, spec: {} } }).toEqual({
      ...inMemory,
      template: { ...inMemory.template, spec: {} },
    });
  });

  it('KubernetesLookupFailed when the management cluster refuses the reads', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      pair.management.kubeconfigYaml(
        FIXTURE.namespace,
        pair.management.addServiceAccount('capi-east', 'nobody'),
      ),
    );
    expect(
      failure(
        await discoverClusterApi({
          reader: new KubeClusterObjectReader(kc),
          clusterName: FIXTURE.name,
          namespace: FIXTURE.namespace,
          infrastructure: [AWS_TEMPLATE_PARSER],
        }),
      ),
    ).toMatchObject({
      reason: 'KubernetesLookupFailed',
      message: expect.stringContaining('HTTP 403'),
    });
  });
});
