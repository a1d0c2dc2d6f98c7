import type { ReconcileOrder } from '@fleet/contracts';
import { DEPLOYMENT } from '@fleet/contracts';
import {
  InvalidDesiredStateError,
  OPERAND_NAME,
  type KubeObject,
  NodeClassConfigError,
  renderDesiredObjects,
  type FieldCause,
  type TargetedObject,
} from '@fleet/cloud-provider';
import { describeKubeError, isConflict, type ClusterClient } from '../kube/cluster-client.js';
import type { ClusterAutoscalerPhase } from './cluster-autoscaler-phase.js';
import type { ConditionSet } from './conditions.js';
import { degraded, describeObject, type Outcome } from './outcome.js';
import {
  OPERAND_ACCESS_BINDING,
  operandAccessBinding,
  untilOperandAccess,
} from './operand-access.js';
import type { OwnedObjects } from './owned-objects.js';
import type { ReconcilerDeps } from './reconciler.js';

/**
 * The apply phase of an enabled order: an order is applied whole or not at all, since every
 * rendered object is checked against the real CRDs before the first write.
 */
export class ApplyPhase {
  /** Exempt from the provider's admission policies; asked once, it does not change. */
  private sidecarUsername?: string;

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly owned: OwnedObjects,
    private readonly clusterAutoscaler: ClusterAutoscalerPhase,
  ) {}

  private get provider() {
    return this.deps.driver.provider;
  }

  /**
   * Discover, render, check against the CRDs, apply, prune, then the Cluster Autoscaler.
   * `beforeWrites` runs once every check has passed, just before the first write; an outcome it
   * returns is the result instead (Cluster API: the Cluster's finalizer could not be held).
   */
  async run(
    order: ReconcileOrder,
    conditions: ConditionSet,
    beforeWrites?: () => Promise<Outcome | undefined>,
  ): Promise<Outcome> {
    const { spec } = order;
    const discovery = await this.deps.driver.discover();
    if (!discovery.ok)
      return degraded(this.deps.log, conditions, discovery.reason, discovery.message);
    let infra = discovery.infrastructure;
    // What discovery chose (the worker MachineSet, and why others were passed over) is reported.
    for (const c of discovery.conditions ?? [])
      conditions.set(c.type, c.status, c.reason, c.message);
    this.deps.approver?.setNodeIdentityCheck(this.deps.driver.nodeIdentity(infra));
    // What rendering needs from the cloud for this order (rendering itself is synchronous).
    if (this.deps.driver.prepare) {
      const prepared = await this.deps.driver.prepare(infra, spec);
      if (!prepared.ok)
        return degraded(this.deps.log, conditions, prepared.reason, prepared.message);
      infra = prepared.infra;
    }
    const missing = await this.deps.driver.checkCloud?.(infra, spec);
    if (missing) return degraded(this.deps.log, conditions, missing.reason, missing.message);

    let desired: TargetedObject[];
    try {
      desired = renderDesiredObjects(this.provider, infra, spec);
    } catch (err) {
      if (err instanceof NodeClassConfigError) {
        return degraded(this.deps.log, conditions, err.reason, err.message);
      }
      if (err instanceof InvalidDesiredStateError) {
        const overrides = err.causes.some((c) => c.field.startsWith('nodeClassOverrides'));
        return degraded(
          this.deps.log,
          conditions,
          overrides ? 'InvalidNodeClassOverrides' : 'InvalidDesiredState',
          err.message,
        );
      }
      throw err;
    }
    if (this.provider.renderAdmissionPolicies) {
      try {
        this.sidecarUsername ??= await this.deps.apiServers.client('workload').whoAmI();
      } catch (err) {
        return degraded(
          this.deps.log,
          conditions,
          'ApplyFailed',
          `learning the sidecar's own username (SelfSubjectReview): ${describeKubeError(err)}`,
        );
      }
      desired.push(...this.provider.renderAdmissionPolicies(this.sidecarUsername));
    }
    // Everything is checked against the real CRDs before the first write: an order is applied
    // whole or not at all.
    const invalid: FieldCause[] = [];
    let invalidNodeClass = false;
    for (const { object } of desired) {
      const causes = this.deps.validator.validate(object);
      if (causes.length === 0) continue;
      if (object.kind === this.provider.nodeClass.kind) invalidNodeClass = true;
      invalid.push(
        ...causes.map((c) => ({
          field: `${describeObject(object)}: ${c.field}`,
          message: c.message,
        })),
      );
    }
    if (invalid.length > 0) {
      return degraded(
        this.deps.log,
        conditions,
        invalidNodeClass ? 'InvalidNodeClassOverrides' : 'InvalidDesiredState',
        invalid.map((c) => `${c.field}: ${c.message}`).join('; '),
      );
    }

    // The API servers' own word on what is about to be written (a dry run): refused, nothing is.
    const refused = await this.deps.driver.checkWrites?.(desired);
    if (refused) return degraded(this.deps.log, conditions, refused.reason, refused.message);
    const instead = await beforeWrites?.();
    if (instead) return instead;

    let applied = 0;
    let current = '';
    try {
      for (const { target, object } of desired) {
        current = describeObject(object);
        // Drift policy REPORT: a hand-edited object stays as its editor left it (reported as
        // Drifted) until the edit is undone or the policy goes back to CORRECT.
        if (this.deps.drift?.held(object, spec.driftPolicy)) continue;
        const client = this.deps.apiServers.client(target);
        this.deps.drift?.recordApplied(target, await this.applyObject(client, object));
        applied++;
        if (
          this.deps.identity &&
          object.kind === 'Namespace' &&
          object.metadata.name === this.provider.operandNamespace
        ) {
          current = `RoleBinding ${this.provider.operandNamespace}/${OPERAND_ACCESS_BINDING}`;
          await client.apply(operandAccessBinding(object.metadata.name, this.deps.identity));
          await untilOperandAccess(client, object.metadata.name);
        }
      }
    } catch (err) {
      return degraded(
        this.deps.log,
        conditions,
        'ApplyFailed',
        `applying ${current}: ${describeKubeError(err)}`,
        applied,
      );
    }
    if (this.deps.driver.renderAfterApply) {
      current = 'the objects rendered after the others exist';
      try {
        const after = await this.deps.driver.renderAfterApply(infra, spec);
        for (const { target, object } of after) {
          current = describeObject(object);
          if (this.deps.drift?.held(object, spec.driftPolicy)) continue;
          const live = await this.deps.apiServers.client(target).apply(object);
          this.deps.drift?.recordApplied(target, live);
          applied++;
        }
        desired.push(...after);
      } catch (err) {
        return degraded(
          this.deps.log,
          conditions,
          'ApplyFailed',
          `applying ${current}: ${describeKubeError(err)}`,
          applied,
        );
      }
    }
    const defaultNodeClass = desired.find(
      ({ object }) =>
        object.kind === this.provider.nodeClass.kind &&
        object.metadata.name === this.provider.defaultNodeClassName,
    );
    if (defaultNodeClass) {
      this.deps.nodeClasses?.setTarget({
        infra,
        defaultNodeClass: defaultNodeClass.object,
        desired: spec,
      });
      // Its pool was applied before it, with the pointer it carries: Karpenter may launch from it.
      try {
        await this.deps.nodeClasses?.allowLaunches(this.provider.defaultNodeClassName);
      } catch (err) {
        return degraded(
          this.deps.log,
          conditions,
          'ApplyFailed',
          `opening the launch gate to NodeClass ${this.provider.defaultNodeClassName}: ${describeKubeError(err)}`,
          applied,
        );
      }
    }

    // Before pruning, so the fleet's own deletions are never mistaken for drift.
    this.deps.drift?.retain(desired.map(({ object }) => object));
    let pruned: number;
    try {
      pruned = await this.owned.prune(desired);
    } catch (err) {
      return degraded(this.deps.log, conditions, 'PruneFailed', describeKubeError(err), applied);
    }

    const cas = await this.clusterAutoscaler.whileEnabled(order, conditions, () =>
      this.karpenterNotReady(),
    );
    if (cas.failed) return { applied, pruned, requeue: false };

    conditions.set('Degraded', 'False', 'AsExpected', 'the desired state is applied');
    conditions.set(
      'Available',
      'True',
      'AsExpected',
      `Karpenter is deployed with ${spec.nodePools.length} NodePool(s)`,
    );
    conditions.set('Progressing', 'False', 'AsExpected', `generation ${order.generation} applied`);
    return {
      applied,
      pruned,
      // Holding the Cluster Autoscaler back: look again as Karpenter comes up.
      requeue: cas.waiting,
      ...(cas.state ? { clusterAutoscaler: cas.state } : {}),
    };
  }

  /**
   * Server-side apply, except for fields the provider sets only at creation (createOnlyFields):
   * the object is created whole once, then applied without them, so the fleet's field manager
   * never owns them and whoever scales them afterwards (Karpenter) is never overwritten.
   */
  private async applyObject(client: ClusterClient, object: KubeObject): Promise<KubeObject> {
    const fields = this.provider.createOnlyFields?.(object) ?? [];
    if (fields.length === 0) return client.apply(object);
    const ref = {
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: object.metadata.name,
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
    };
    if (!(await client.read(ref))) {
      try {
        await client.create(object);
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
    const without = structuredClone(object);
    for (const path of fields) {
      let parent: Record<string, unknown> | undefined = without;
      for (const key of path.slice(0, -1))
        parent = parent?.[key] as Record<string, unknown> | undefined;
      if (parent) delete parent[path[path.length - 1]!];
    }
    return client.apply(without);
  }

  /**
   * What Karpenter still lacks before it can replace the Cluster Autoscaler: its operand
   * Deployment Available (an available replica) and its default NodeClass Ready (Karpenter's
   * own status condition: subnets, security groups, AMI and instance profile resolved).
   */
  private async karpenterNotReady(): Promise<string | undefined> {
    const missing: string[] = [];
    const operand = await this.deps.apiServers
      .client(this.provider.operandTarget ?? 'management')
      .read<KubeObject & { status?: { availableReplicas?: number } }>({
        apiVersion: DEPLOYMENT.apiVersion,
        kind: DEPLOYMENT.kind,
        name: OPERAND_NAME,
        namespace: this.provider.operandNamespace,
      });
    if ((operand?.status?.availableReplicas ?? 0) < 1)
      missing.push(
        `the operand Deployment ${this.provider.operandNamespace}/${OPERAND_NAME} is not Available yet`,
      );
    const nodeClass = await this.deps.apiServers
      .client('workload')
      .read<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>({
        apiVersion: this.provider.nodeClass.apiVersion,
        kind: this.provider.nodeClass.kind,
        name: this.provider.defaultNodeClassName,
      });
    const ready = nodeClass?.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True')
      missing.push(
        `${this.provider.nodeClass.kind} ${this.provider.defaultNodeClassName} is not Ready yet${ready ? ` (Ready=${ready.status})` : ''}`,
      );
    return missing.length > 0 ? missing.join('; ') : undefined;
  }
}
