import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  DRIVER_REGISTRY,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  findDriver,
  loadCustomResourceDefinitions,
  awsInfrastructureProvider,
  renderDesiredObjects,
  type ClusterApiRenderInfrastructure,
  type ClusterDriver,
  type DriverRegistration,
  type RegisteredDriver,
  type KubeObject,
} from '@fleet/cloud-provider';
import { CLUSTER_OPERATOR, NODEPOOL, type KarpenterDesiredState } from '@fleet/contracts';
import {
  KARPENTER_CRD_DIRECTORY,
  StructuralSchema,
  UPSTREAM_CRD_DIRECTORY,
  clone,
  type JSONSchemaProps,
} from '@fleet/crd-schema';
import { InMemoryClusterObjectReader, type HostedAwsInfrastructure } from '@fleet/discovery';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  CAPI_CLUSTER,
  HOSTED,
  azureFixtureInfrastructure,
  capiFixtureInfrastructure,
  desiredState,
  fixtureInfrastructure,
  loadCrdValidator,
} from '@fleet/testing';

/**
 * What each driver must bring to the conformance run: the infrastructure its discovery would
 * find on a fixture cluster. A driver added to the registry without an entry here fails below.
 */
const FIXTURES: Record<
  string,
  {
    infra: () => unknown;
    env?: Record<string, string>;
    sameApiServer?: boolean;
    /**
     * The provenance file (libs/crd-schema/upstream/sources/<name>.yaml) whose `chart` lists every
     * CRD the operand's Helm chart ships; or who installs them instead of the fleet.
     */
    chart: string | { installedBy: string };
  }
> = {
  'AWS/STANDALONE': { infra: fixtureInfrastructure, chart: 'karpenter-provider-aws' },
  // A workload cluster of a separate management cluster; capacities as EC2 gives them.
  'CAPI/STANDALONE': {
    infra: clusterApiFixtureInfrastructure,
    env: {
      CLUSTER_API_CLUSTER_NAME: CAPI_CLUSTER.name,
      CLUSTER_API_NAMESPACE: CAPI_CLUSTER.namespace,
    },
    sameApiServer: false,
    chart: 'karpenter-provider-cluster-api',
  },
  'AWS/HOSTED': {
    // HyperShift's karpenter-operator installs the guest's CRDs; the fleet only validates with them.
    chart: { installedBy: "HyperShift's karpenter-operator" },
    infra: (): HostedAwsInfrastructure => ({
      hcpNamespace: HOSTED.hcpNamespace,
      hcpName: HOSTED.hostedCluster.name,
      hostedCluster: { ...HOSTED.hostedCluster },
      infraID: HOSTED.infraID,
      region: HOSTED.region,
      release: { desiredVersion: '4.21.3', updating: false, installing: false },
      autoNodeStatus: {},
      resourceTags: [{ key: 'cost-center', value: '5120' }],
      deleting: false,
      finalizers: [],
    }),
  },
  // The fixture once its workers boot a no-plan marketplace image (as installed it is refused).
  'AZURE/STANDALONE': {
    infra: azureFixtureInfrastructure,
    env: {
      AZURE_KARPENTER_IMAGE: 'quay.io/example/azure-karpenter-provider@sha256:' + '0'.repeat(64),
    },
    chart: 'azure-karpenter-provider-azure-openshift-pr6',
  },
};

async function clusterApiFixtureInfrastructure(): Promise<ClusterApiRenderInfrastructure> {
  const infra = await capiFixtureInfrastructure();
  // Template cloning is pure; EC2 is never called here.
  const aws = awsInfrastructureProvider(() => {
    throw new Error('no EC2 in the conformance run');
  });
  return {
    ...infra,
    nodeGroups: {
      capacities: [
        { instanceType: 'm6i.xlarge', vCpus: 4, memoryMiB: 16384, architecture: 'amd64' },
      ],
      templateKind: aws.templateKind,
      templateSpecs: { 'm6i.xlarge': aws.templateSpecFor(infra.template, 'm6i.xlarge') },
    },
  };
}

const nodePools: KarpenterDesiredState['nodePools'] = [
  { name: 'general', spec: { template: { spec: { requirements: [] } } } },
];

interface CrdShape {
  spec: {
    group: string;
    names: { kind: string };
    versions: { name: string; schema?: { openAPIV3Schema?: JSONSchemaProps } }[];
  };
}

/** Strict validation of every rendered custom resource against the CRDs the driver installs. */
function crdCauses(crds: readonly KubeObject[], object: KubeObject): string[] {
  for (const crd of crds as unknown as CrdShape[]) {
    for (const version of crd.spec.versions) {
      if (`${crd.spec.group}/${version.name}` !== object.apiVersion) continue;
      if (crd.spec.names.kind !== object.kind || !version.schema?.openAPIV3Schema) continue;
      const schema = new StructuralSchema(version.schema.openAPIV3Schema, crd.spec.names.kind);
      const candidate = clone(object) as Record<string, unknown>;
      const unknown = schema.prune(candidate);
      return [
        ...unknown.map((f) => `${f}: unknown field`),
        ...schema.validate(candidate).map((c) => `${c.field ?? ''}: ${c.message}`),
      ];
    }
  }
  return [];
}

/**
 * Every registered driver against the same contract, as karpenter's fake provider runs every
 * CloudProvider through one suite: what the sidecar relies on without knowing which cloud it is.
 */
describe.each(DRIVER_REGISTRY.map((r) => [`${r.platform}/${r.topology}`, r] as const))(
  'driver %s',
  (pair: string, registration: RegisteredDriver) => {
    const fixture = FIXTURES[pair];
    let loaded: DriverRegistration;
    let driver: ClusterDriver;
    let provider: ClusterDriver['provider'];
    let infra: unknown;
    beforeAll(async () => {
      loaded = await registration.load();
      driver = loaded.create({
        reader: () => new InMemoryClusterObjectReader([]),
        env: fixture?.env ?? {},
        ...(fixture?.sameApiServer !== undefined ? { sameApiServer: fixture.sameApiServer } : {}),
      });
      provider = driver.provider;
      infra = await fixture?.infra();
    });

    it('has a conformance fixture', () => {
      expect(fixture).toBeDefined();
    });

    it('is the registry entry for its pair, and names its NodeClass the same way everywhere', () => {
      expect(findDriver(registration.platform, registration.topology)).toBe(registration);
      // The registry's entry (read without the driver's code) describes the driver it loads.
      const { create, ...description } = loaded;
      expect(typeof create).toBe('function');
      const { load, ...entry } = registration;
      expect(typeof load).toBe('function');
      expect(entry).toEqual(description);
      expect(entry.rules).toBe(description.rules);
      expect([driver.platform, driver.topology]).toEqual([
        registration.platform,
        registration.topology,
      ]);
      expect(provider.topology).toBe(registration.topology);
      expect(registration.rules.platform).toBe(registration.platform);
      expect(registration.rules.nodeClass).toEqual(provider.nodeClass);
      expect(registration.targets).toContain('workload');
    });

    it('reports an empty cluster as a discovery failure instead of throwing', async () => {
      const result = await driver.discover();
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(/^[A-Z][A-Za-z]+$/);
    });

    it('renders nothing when Karpenter is disabled, so pruning removes everything it owns', () => {
      expect(renderDesiredObjects(provider, infra, desiredState({ enabled: false }))).toEqual([]);
    });

    it('renders owned, labelled objects for its own API servers, in a stable order', () => {
      const render = () => renderDesiredObjects(provider, infra, desiredState({ nodePools }));
      const objects = render();
      expect(JSON.stringify(render())).toBe(JSON.stringify(objects));
      // Per-NodeClass configuration is pruned with its NodeClass, not with the order.
      const owned = [...provider.ownedKinds(), ...provider.nodeClassConfigKinds()];
      for (const { target, object } of objects) {
        const what = `${object.kind} ${object.metadata.name}`;
        expect([what, registration.targets.includes(target)]).toEqual([what, true]);
        expect([what, object.metadata.labels?.[MANAGED_BY_LABEL]]).toEqual([
          what,
          MANAGED_BY_VALUE,
        ]);
        const kind = owned.find(
          (k) =>
            k.apiVersion === object.apiVersion && k.kind === object.kind && k.target === target,
        );
        expect([what, kind?.target]).toEqual([what, target]);
        // Pruning lists namespaced kinds only in the namespaces the provider names.
        if (kind?.namespaced)
          expect([what, kind.namespaces ?? []]).toEqual([
            what,
            expect.arrayContaining([object.metadata.namespace]),
          ]);
      }
    });

    it('renders what the CRDs it installs accept', async () => {
      const crds = await loadCustomResourceDefinitions(
        provider.customResourceDefinitions(),
        UPSTREAM_CRD_DIRECTORY,
      );
      for (const { target } of crds) expect(registration.targets).toContain(target);
      const objects = renderDesiredObjects(provider, infra, desiredState({ nodePools }));
      const kinds = new Set(objects.map(({ object }) => object.kind));
      expect(kinds.has(provider.nodeClass.kind)).toBe(true);
      expect(kinds.has(NODEPOOL.kind)).toBe(true);
      const crdObjects = crds.map((c) => c.object);
      for (const { object } of objects) {
        expect([object.kind, crdCauses(crdObjects, object)]).toEqual([object.kind, []]);
      }
    });

    it("installs every CRD its operand's chart ships, as that provider's own copies", async () => {
      const chart = fixture?.chart;
      if (chart === undefined || typeof chart !== 'string') {
        expect(chart).toEqual({ installedBy: expect.any(String) });
        return;
      }
      const source = parse(
        readFileSync(join(UPSTREAM_CRD_DIRECTORY, 'sources', `${chart}.yaml`), 'utf8'),
      ) as { chart: { crds: string[] }; files: { crd: string; file: string }[] };
      const installed = provider.customResourceDefinitions();
      const crds = await loadCustomResourceDefinitions(installed, UPSTREAM_CRD_DIRECTORY);
      expect(crds.map(({ object }) => object.metadata.name).sort()).toEqual(
        expect.arrayContaining(source.chart.crds),
      );
      // A chart CRD comes from that provider's copy: the karpenter.sh CRDs carry CEL rules that
      // reserve the provider's own label domain (AWS's reserve karpenter.k8s.aws, the Azure
      // fork's karpenter.azure.com).
      installed.forEach(({ path, origin }, i) => {
        const name = crds[i]!.object.metadata.name;
        const own = source.files.find((f) => f.crd === name)?.file;
        // Another Karpenter release's copy (karpenter-releases/<version>/) is that release's own.
        if (origin !== 'upstream' || own === undefined || path.startsWith('karpenter-releases/'))
          return;
        expect([name, path]).toEqual([name, own]);
      });
    });

    it('keeps its default NodeClass, which NodePools without a reference point at', () => {
      const objects = renderDesiredObjects(provider, infra, desiredState({ nodePools }));
      const defaults = objects.filter(
        ({ object }) =>
          object.kind === provider.nodeClass.kind &&
          object.metadata.name === provider.defaultNodeClassName,
      );
      expect(defaults).toHaveLength(1);
      expect(
        provider.enforceNodeClass(defaults[0]!.object, infra, desiredState({ nodePools })).drifted,
      ).toEqual([]);
      const pool = objects.find(({ object }) => object.kind === NODEPOOL.kind)?.object as
        { spec: { template: { spec: { nodeClassRef: unknown } } } } | undefined;
      // The default NodeClass's name, of the kind Karpenter manages there (hosted: the
      // EC2NodeClass HyperShift derives from the OpenshiftEC2NodeClass of that name).
      const ref = pool?.spec.template.spec.nodeClassRef as { name?: string } | undefined;
      expect(ref?.name).toBe(provider.defaultNodeClassName);
      expect(registration.rules.nodeClassRefProblem(ref)).toBeUndefined();
    });

    it('gives the API a complete NodeClass to check overrides against', () => {
      const validator = loadCrdValidator(
        join(KARPENTER_CRD_DIRECTORY, registration.rules.nodeClassCrdFile),
        registration.rules.nodeClass.version,
      );
      expect(validator.kind).toBe(provider.nodeClass.kind);
      expect(validator.validate(registration.rules.nodeClassForValidation({})).errors).toEqual([]);
      expect(() => registration.rules.validateNodeClassOverrides({})).not.toThrow();
    });

    it('never verifies a node whose providerID names no instance of its cloud', async () => {
      expect(provider.parseProviderID('')).toBeUndefined();
      const verdicts = await driver.nodeIdentity(infra)([
        { nodeName: 'node-a', providerID: 'not-a-provider-id' },
      ]);
      expect(verdicts).toEqual([
        expect.objectContaining({
          nodeName: 'node-a',
          verified: false,
          reason: 'InvalidProviderID',
        }),
      ]);
    });

    it('renders the status surfaces it owns so that their CRDs accept them', () => {
      if (!driver.statusSurfaces.includes('ClusterOperator')) return;
      expect(driver.topology).toBe('STANDALONE');
      const { target, object } = provider.renderClusterOperator({
        karpenter: { state: 'missing' },
        operand: { state: 'missing' },
        version: '0.0.0-conformance',
        now: new Date('2026-01-01T00:00:00Z'),
      });
      expect(registration.targets).toContain(target);
      expect(object.apiVersion).toBe(CLUSTER_OPERATOR.apiVersion);
      const validator = loadCrdValidator(
        join(UPSTREAM_CRD_DIRECTORY, 'openshift', 'config.openshift.io_clusteroperators.yaml'),
      );
      expect(validator.validate(object).errors).toEqual([]);
    });

    it('releases its cloud clients', () => {
      expect(() => driver.close()).not.toThrow();
    });
  },
);
