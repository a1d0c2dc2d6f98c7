import type { ClusterObjectReader } from '../cluster-reader.js';
import { fail, readCluster as read, Stop } from '../stop.js';
import { describeError } from '../describe-error.js';
import type { DiscoveryFailure, DiscoveryResult } from '../types.js';
import {
  CAPI_CLUSTER,
  CAPI_MACHINE_SET,
  CLUSTER_NAME_LABEL,
  DEPLOYMENT_NAME_LABEL,
  MACHINE_DEPLOYMENT,
} from './kinds.js';
import type {
  Bootstrap,
  ClusterApiInfrastructure,
  InfrastructureMachineTemplate,
  InfrastructureTemplateParser,
  WorkerGroup,
} from './types.js';

/** The sidecar's own label (libs/cloud-provider/src/labels.ts): its MachineDeployments are no workers. */
const MANAGED_BY_LABEL = 'fleet.karpenter.sh/managed-by';

export interface ClusterApiDiscoveryInput {
  /** Reads on the management cluster. */
  reader: ClusterObjectReader;
  clusterName: string;
  namespace: string;
  /** The infrastructure providers the driver knows, by Cluster infrastructureRef kind. */
  infrastructure: readonly InfrastructureTemplateParser[];
}

/**
 * Learns what Karpenter needs from a Cluster API workload cluster, on its management cluster:
 * the Cluster, its worker MachineDeployments (and MachineSets no MachineDeployment owns), the
 * infrastructure template and bootstrap of the one the fleet copies, and the failure domains.
 * Never throws: each missing piece is its own Degraded reason naming the object.
 */
export async function discoverClusterApi(
  input: ClusterApiDiscoveryInput,
): Promise<DiscoveryResult<ClusterApiInfrastructure>> {
  try {
    const infrastructure = await discover(input);
    const { chosen, passedOver } = infrastructure.workerSelection;
    return {
      ok: true,
      infrastructure,
      conditions: [
        {
          type: 'WorkerMachineDeploymentSelected',
          status: 'True',
          reason: passedOver.length > 0 ? 'OthersPassedOver' : 'FirstWorkerMachineDeployment',
          message:
            `the fleet's MachineDeployments copy ${infrastructure.worker.kind} ${input.namespace}/${chosen}` +
            (passedOver.length > 0
              ? `; passed over: ${passedOver.map((p) => `${p.name} (${p.why})`).join('; ')}`
              : ''),
        },
      ],
    };
  } catch (err) {
    if (err instanceof Stop) return err.failure;
    return {
      ok: false,
      reason: 'KubernetesLookupFailed',
      message: `unexpected error: ${describeError(err)}`,
    };
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const at = (v: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((o, k) => (isObj(o) ? o[k] : undefined), v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

async function discover(input: ClusterApiDiscoveryInput): Promise<ClusterApiInfrastructure> {
  const { reader, clusterName, namespace } = input;
  const where = `Cluster ${namespace}/${clusterName} (${CAPI_CLUSTER.apiVersion})`;
  const cluster = await read(where, () => reader.getObject(CAPI_CLUSTER, namespace, clusterName));
  if (!isObj(cluster)) fail('ClusterNotFound', `${where} not found on the management cluster`);

  const infraKind = str(at(cluster, 'spec', 'infrastructureRef', 'kind'));
  const parser = input.infrastructure.find((p) => p.clusterKind === infraKind);
  if (!parser) {
    fail(
      'UnsupportedInfrastructure',
      `${where} runs on spec.infrastructureRef.kind ${infraKind ?? '(none)'}; supported: ${input.infrastructure
        .map((p) => p.clusterKind)
        .join(', ')}`,
    );
  }

  const selector = `${CLUSTER_NAME_LABEL}=${clusterName}`;
  const [deployments, machineSets] = await Promise.all([
    read(`MachineDeployments in ${namespace}`, () =>
      reader.listObjects(MACHINE_DEPLOYMENT, namespace, selector),
    ),
    read(`MachineSets in ${namespace}`, () =>
      reader.listObjects(CAPI_MACHINE_SET, namespace, selector),
    ),
  ]);
  const passedOver: { name: string; why: string }[] = [];
  const groups: WorkerGroup[] = [];
  const consider = (kind: WorkerGroup['kind'], object: unknown): void => {
    const name = str(at(object, 'metadata', 'name')) ?? '(unnamed)';
    const labels = (at(object, 'metadata', 'labels') ?? {}) as Record<string, string>;
    if (labels[MANAGED_BY_LABEL] !== undefined) return; // the fleet's own
    if (kind === 'MachineSet' && ownedByDeployment(object, labels)) return;
    const parsed = parseGroup(kind, name, object, parser.templateKind.kind);
    if (typeof parsed === 'string') passedOver.push({ name, why: parsed });
    else groups.push(parsed);
  };
  deployments.forEach((d) => consider('MachineDeployment', d));
  machineSets.forEach((m) => consider('MachineSet', m));
  groups.sort((a, b) =>
    a.kind === b.kind ? cmp(a.name, b.name) : a.kind === 'MachineDeployment' ? -1 : 1,
  );
  if (groups.length === 0) {
    fail(
      'NoWorkerMachineDeployment',
      `no MachineDeployment or MachineSet in ${namespace} labelled ${selector} has a bootstrap and a ${parser.templateKind.kind}` +
        (passedOver.length > 0
          ? `; passed over: ${passedOver.map((p) => `${p.name} (${p.why})`).join('; ')}`
          : '; the namespace has none'),
    );
  }

  let firstFailure: DiscoveryFailure | undefined;
  const unusable: { name: string; why: string }[] = [];
  for (const group of groups) {
    try {
      const template = await usableTemplate(reader, namespace, group, parser);
      return {
        platform: 'CAPI',
        clusterName,
        namespace,
        infrastructureProvider: parser.name,
        failureDomains: failureDomains(cluster, groups, where),
        worker: group,
        template,
        workers: groups,
        workerSelection: { chosen: group.name, passedOver: [...passedOver, ...unusable] },
      };
    } catch (err) {
      if (!(err instanceof Stop) || err.failure.reason === 'KubernetesLookupFailed') throw err;
      firstFailure ??= err.failure;
      unusable.push({ name: group.name, why: err.failure.message });
    }
  }
  throw new Stop(firstFailure!);
}

function ownedByDeployment(object: unknown, labels: Record<string, string>): boolean {
  const owners = at(object, 'metadata', 'ownerReferences');
  return (
    labels[DEPLOYMENT_NAME_LABEL] !== undefined ||
    (Array.isArray(owners) && owners.some((o) => at(o, 'kind') === 'MachineDeployment'))
  );
}

/** A worker group, or why it cannot be one. */
function parseGroup(
  kind: WorkerGroup['kind'],
  name: string,
  object: unknown,
  templateKind: string,
): WorkerGroup | string {
  const spec = at(object, 'spec', 'template', 'spec');
  const ref = at(spec, 'infrastructureRef');
  const refKind = str(at(ref, 'kind'));
  const refName = str(at(ref, 'name'));
  if (refKind !== templateKind || !refName)
    return `spec.template.spec.infrastructureRef is ${refKind ?? 'missing'}, not a ${templateKind}`;
  let bootstrap: Bootstrap;
  const dataSecretName = str(at(spec, 'bootstrap', 'dataSecretName'));
  const configRef = at(spec, 'bootstrap', 'configRef');
  if (dataSecretName) bootstrap = { dataSecretName };
  else if (str(at(configRef, 'kind')) && str(at(configRef, 'name')))
    bootstrap = {
      configRef: {
        apiVersion: str(at(configRef, 'apiVersion')) ?? '',
        kind: str(at(configRef, 'kind'))!,
        name: str(at(configRef, 'name'))!,
      },
    };
  else return 'spec.template.spec.bootstrap has neither configRef nor dataSecretName';
  const failureDomain = str(at(spec, 'failureDomain'));
  const version = str(at(spec, 'version'));
  return {
    kind,
    name,
    ...(failureDomain ? { failureDomain } : {}),
    ...(version ? { version } : {}),
    bootstrap,
    infrastructureRef: {
      apiVersion: str(at(ref, 'apiVersion')) ?? '',
      kind: refKind,
      name: refName,
    },
    templateLabels: (at(object, 'spec', 'template', 'metadata', 'labels') ?? {}) as Record<
      string,
      string
    >,
  };
}

async function usableTemplate(
  reader: ClusterObjectReader,
  namespace: string,
  group: WorkerGroup,
  parser: InfrastructureTemplateParser,
): Promise<InfrastructureMachineTemplate> {
  const kind = parser.templateKind;
  const where = `${kind.kind} ${namespace}/${group.infrastructureRef.name} (infrastructureRef of ${group.kind} ${group.name})`;
  const object = await read(where, () =>
    reader.getObject(kind, namespace, group.infrastructureRef.name),
  );
  if (object === undefined || object === null)
    fail('InfrastructureTemplateNotFound', `${where} not found`);
  const parsed = parser.parse(object);
  if (!parsed.ok) fail('InvalidInfrastructureTemplate', `${where}: ${parsed.message}`);
  if ('dataSecretName' in group.bootstrap) {
    const secretWhere = `Secret ${namespace}/${group.bootstrap.dataSecretName} (bootstrap.dataSecretName of ${group.kind} ${group.name})`;
    const secret = await read(secretWhere, () =>
      reader.getSecret(namespace, (group.bootstrap as { dataSecretName: string }).dataSecretName),
    );
    if (secret === undefined) fail('BootstrapDataSecretNotFound', `${secretWhere} not found`);
  }
  return parsed.value;
}

/**
 * The zones the fleet's MachineDeployments cover: the Cluster's failure domains (v1beta1 map or
 * v1beta2 list), else those its worker groups name.
 */
function failureDomains(cluster: Obj, groups: WorkerGroup[], where: string): string[] {
  const declared = at(cluster, 'status', 'failureDomains');
  const names = Array.isArray(declared)
    ? declared.map((d) => str(at(d, 'name'))).filter((n): n is string => n !== undefined)
    : isObj(declared)
      ? Object.keys(declared)
      : [];
  const found = names.length > 0 ? names : groups.map((g) => g.failureDomain);
  const unique = [...new Set(found.filter((n): n is string => n !== undefined))].sort(cmp);
  if (unique.length === 0)
    fail(
      'NoFailureDomains',
      `${where} has no status.failureDomains and no worker MachineDeployment names a spec.template.spec.failureDomain`,
    );
  return unique;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
