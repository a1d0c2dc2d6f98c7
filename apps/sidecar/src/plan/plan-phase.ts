import type {
  PlannedObject,
  PlanReport,
  PlanValidationError,
  ReconcileOrder,
} from '@fleet/contracts';
import {
  InvalidDesiredStateError,
  NodeClassConfigError,
  renderDesiredObjects,
  type ClusterDriver,
  type ClusterTarget,
  type KubeObject,
  type TargetedObject,
} from '@fleet/cloud-provider';
import { ApiException } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeKubeError, type ClusterClient } from '../kube/cluster-client.js';
import type { OwnedObjects } from '../reconcile/owned-objects.js';
import { objectDiff } from './plan-diff.js';

/** What a plan answers, without whom it is for and when. */
export type PlanResult = Pick<PlanReport, 'outcome' | 'reason' | 'message' | 'objects'>;

export interface PlanPhaseDeps {
  apiServers: { client(target: ClusterTarget): ClusterClient };
  driver: ClusterDriver;
  owned: OwnedObjects;
  log: Logger;
}

/** The field manager of the identity-only dry run that reads an object the sidecar may only apply. */
const PLAN_PROBE_MANAGER = 'karpenter-fleet-plan';

const keyOf = (o: KubeObject) =>
  `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** The API server's refusal as plan errors: its causes with their fields, else its message. */
export function refusalOf(err: unknown): PlanValidationError[] {
  if (err instanceof ApiException) {
    const body = (typeof err.body === 'string' ? safeJson(err.body) : err.body) as
      | {
          reason?: string;
          message?: string;
          details?: { causes?: { field?: string; message?: string; reason?: string }[] };
        }
      | undefined;
    const causes = body?.details?.causes ?? [];
    if (causes.length)
      return causes.slice(0, 64).map((c) => ({
        field: (c.field ?? '').slice(0, 1024),
        message: (c.message ?? '').slice(0, 4096),
        ...(c.reason ? { reason: c.reason.slice(0, 128) } : {}),
      }));
    return [
      {
        field: '',
        message: describeKubeError(err).slice(0, 4096),
        ...(body?.reason ? { reason: body.reason.slice(0, 128) } : {}),
      },
    ];
  }
  return [
    { field: '', message: (err instanceof Error ? err.message : String(err)).slice(0, 4096) },
  ];
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
};

/**
 * A plan: the proposed order rendered by the same driver and renderer as a reconcile, each
 * object sent with server-side apply `dryRun=All` as the fleet's field manager, the answer
 * compared with the live object; what the order would prune gets a `dryRun=All` delete. Only
 * reads and dry runs reach the API servers: nothing is written, no resourceVersion moves.
 */
export class PlanPhase {
  private sidecarUsername?: string;

  constructor(private readonly deps: PlanPhaseDeps) {}

  private get provider() {
    return this.deps.driver.provider;
  }

  async run(order: ReconcileOrder): Promise<PlanResult> {
    const { spec } = order;
    if (spec.paused)
      return {
        outcome: 'PLANNED',
        reason: 'Paused',
        message: 'the proposed state pauses the cluster: nothing on it would change',
        objects: [],
      };
    let desired: TargetedObject[] = [];
    if (spec.enabled) {
      const rendered = await this.render(order);
      if ('outcome' in rendered) return rendered;
      desired = rendered;
    }
    // What the fleet owns now, by kind (the lists prune reads): the live side of each diff, and
    // what the order would prune.
    const owned: { target: ClusterTarget; objects: KubeObject[] }[] = [];
    try {
      for (const kind of [...this.provider.ownedKinds()].reverse())
        owned.push({ target: kind.target, objects: await this.deps.owned.list(kind) });
    } catch (err) {
      return {
        outcome: 'FAILED',
        reason: 'ListFailed',
        message: `listing what the fleet owns: ${describeKubeError(err)}`.slice(0, 4096),
        objects: [],
      };
    }
    const live = new Map(owned.flatMap((o) => o.objects.map((obj) => [keyOf(obj), obj] as const)));
    const objects: PlannedObject[] = [];
    // A namespace the plan would create does not exist yet: what goes into it cannot be dry-run
    // there (the API server answers NotFound), so it is listed as rendered.
    const newNamespaces = new Set<string>();
    for (const { target, object } of desired) {
      const planned = await this.planObject(target, object, live.get(keyOf(object)), newNamespaces);
      if (object.kind === 'Namespace' && planned.action === 'CREATED')
        newNamespaces.add(object.metadata.name);
      objects.push(planned);
    }
    const wanted = new Set(desired.map(({ object }) => keyOf(object)));
    for (const { target, objects: listed } of owned)
      for (const o of listed)
        if (!wanted.has(keyOf(o))) objects.push(await this.planDelete(target, o));
    return { outcome: 'PLANNED', objects };
  }

  private async render(order: ReconcileOrder): Promise<TargetedObject[] | PlanResult> {
    const failed = (reason: string, message: string): PlanResult => ({
      outcome: 'FAILED',
      reason,
      message: message.slice(0, 4096),
      objects: [],
    });
    const discovery = await this.deps.driver.discover();
    if (!discovery.ok) return failed(discovery.reason, discovery.message);
    let infra = discovery.infrastructure;
    if (this.deps.driver.prepare) {
      const prepared = await this.deps.driver.prepare(infra, order.spec);
      if (!prepared.ok) return failed(prepared.reason, prepared.message);
      infra = prepared.infra;
    }
    const missing = await this.deps.driver.checkCloud?.(infra, order.spec);
    if (missing) return failed(missing.reason, missing.message);
    let desired: TargetedObject[];
    try {
      desired = renderDesiredObjects(this.provider, infra, order.spec);
    } catch (err) {
      if (err instanceof NodeClassConfigError) return failed(err.reason, err.message);
      if (err instanceof InvalidDesiredStateError)
        return failed('InvalidDesiredState', err.message);
      throw err;
    }
    if (this.provider.renderAdmissionPolicies) {
      try {
        this.sidecarUsername ??= await this.deps.apiServers.client('workload').whoAmI();
      } catch (err) {
        return failed(
          'ApplyFailed',
          `learning the sidecar's own username: ${describeKubeError(err)}`,
        );
      }
      desired.push(...this.provider.renderAdmissionPolicies(this.sidecarUsername));
    }
    return desired;
  }

  private async planObject(
    target: ClusterTarget,
    object: KubeObject,
    listed: KubeObject | undefined,
    newNamespaces: ReadonlySet<string>,
  ): Promise<PlannedObject> {
    const client = this.deps.apiServers.client(target);
    const ref = {
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: object.metadata.name,
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
    };
    const base = {
      target,
      apiVersion: object.apiVersion,
      kind: object.kind,
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      name: object.metadata.name,
    };
    if (object.metadata.namespace && newNamespaces.has(object.metadata.namespace))
      return { ...base, action: 'CREATED', ...objectDiff(undefined, object), errors: [] };
    // Not among what the fleet lists for pruning (kinds the NodeClass controller writes, objects
    // in other namespaces): the sidecar's RBAC applies what it renders but may not read it, so
    // the live object is asked for with what it may do: a dry-run apply of the object's identity
    // alone, under a manager of its own, answers the object as it is (an existing one has a
    // resourceVersion; a refused or empty answer means there is none).
    let live = listed;
    if (!live) {
      try {
        const probe = await client.dryRunApply<KubeObject>(
          {
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
          },
          PLAN_PROBE_MANAGER,
        );
        live = (probe.metadata as { resourceVersion?: string } | undefined)?.resourceVersion
          ? probe
          : undefined;
      } catch {
        live = undefined;
      }
    }
    const action = live ? 'CHANGED' : 'CREATED';
    // As the apply phase does: fields set only at creation are not applied to a live object.
    const sent = live ? this.withoutCreateOnlyFields(object) : object;
    let answer: KubeObject;
    try {
      answer = await client.dryRunApply(sent);
    } catch (err) {
      return { ...base, action, diff: [], errors: refusalOf(err) };
    }
    const diff = objectDiff(live, answer);
    if (live && diff.diff.length === 0)
      return { ...base, action: 'UNCHANGED', diff: [], errors: [] };
    return { ...base, action, ...diff, errors: [] };
  }

  private async planDelete(target: ClusterTarget, live: KubeObject): Promise<PlannedObject> {
    const ref = {
      apiVersion: live.apiVersion,
      kind: live.kind,
      name: live.metadata.name,
      ...(live.metadata.namespace ? { namespace: live.metadata.namespace } : {}),
    };
    let errors: PlanValidationError[] = [];
    try {
      await this.deps.apiServers.client(target).dryRunDelete(ref);
    } catch (err) {
      errors = refusalOf(err);
    }
    return {
      target,
      ...ref,
      action: 'DELETED',
      diff: [],
      errors,
    };
  }

  private withoutCreateOnlyFields(object: KubeObject): KubeObject {
    const fields = this.provider.createOnlyFields?.(object) ?? [];
    if (fields.length === 0) return object;
    const without = structuredClone(object);
    for (const path of fields) {
      let parent: Record<string, unknown> | undefined = without;
      for (const key of path.slice(0, -1))
        parent = parent?.[key] as Record<string, unknown> | undefined;
      if (parent) delete parent[path[path.length - 1]!];
    }
    return without;
  }
}
