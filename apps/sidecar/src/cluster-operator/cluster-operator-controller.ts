import { CLUSTER_OPERATOR, DEPLOYMENT, KARPENTER_CR } from '@fleet/contracts';
import {
  clusterOperatorRow,
  KARPENTER_CR_NAME,
  OPERAND_NAME,
  type CloudProvider,
  type KarpenterObservation,
  type KubeObject,
  type OperandObservation,
  type OperatorCondition,
} from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { CoalescingLoop } from '../kube/coalescing-loop.js';
import { describeKubeError, isUnknownKind, type ClusterClient } from '../kube/cluster-client.js';
import type { ResourceWatch } from '../kube/resource-watch.js';

interface DeploymentStatus {
  spec?: { replicas?: number };
  status?: { replicas?: number; availableReplicas?: number; updatedReplicas?: number };
}

/** What the fleet is told about the operand: the ClusterOperator's headline, as one condition. */
export interface OperandState {
  /** The row of the DOMAIN.md table that matched (OperandNotYetCreated, AsExpected, ...). */
  reason: string;
  message: string;
  /** True only for AsExpected; Unknown when the sidecar could not read what it needs. */
  status: 'True' | 'False' | 'Unknown';
}

export interface ClusterOperatorControllerDeps {
  cluster: ClusterClient;
  provider: CloudProvider<unknown, unknown>;
  /** The operand Deployment and the Karpenter CRs; each event re-evaluates the ClusterOperator. */
  deployments: ResourceWatch;
  karpenters: ResourceWatch;
  version: string;
  log: Logger;
  onChange?: (state: OperandState) => void;
  /**
   * For a provider without the Karpenter CR (Azure): whether the fleet's order enables Karpenter,
   * and the last reconcile's refusal, which then stand for what the CR would say. Undefined before
   * the first order.
   */
  order?: () => { enabled: boolean; refusal?: { reason: string; message: string } } | undefined;
}

/**
 * Keeps ClusterOperator `karpenter` in line with what is on the cluster, as karpenter-operator
 * does: observe the Karpenter CR `default` and the operand Deployment (on every watch event of
 * either), render the conditions through the CloudProvider, and server-side apply the object and
 * then its `/status` subresource when anything changed.
 */
export class ClusterOperatorController {
  private previous?: OperatorCondition[];
  private lastApplied?: string;
  private state: OperandState = {
    status: 'Unknown',
    reason: 'NotObservedYet',
    message: 'the operand has not been observed yet',
  };
  private readonly unsubscribe: (() => void)[] = [];

  private readonly loop: CoalescingLoop;

  constructor(private readonly deps: ClusterOperatorControllerDeps) {
    this.loop = new CoalescingLoop(
      () => this.evaluate(),
      (err) => deps.log.warn({ err: describeKubeError(err) }, 'ClusterOperator update failed'),
    );
  }

  start(): void {
    const isOperand = (o: { metadata?: { name?: string; namespace?: string } }) =>
      o.metadata?.name === OPERAND_NAME &&
      o.metadata.namespace === this.deps.provider.operandNamespace;
    this.unsubscribe.push(
      this.deps.deployments.on((_, o) => {
        if (isOperand(o)) this.kick();
      }),
      this.deps.karpenters.on(() => this.kick()),
    );
    this.kick();
  }

  stop(): void {
    this.loop.stop();
    for (const off of this.unsubscribe.splice(0)) off();
  }

  operandState(): OperandState {
    return this.state;
  }

  /** Resolves when the evaluation in progress (if any) and any it queued have finished. */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  /** Re-evaluates soon; events arriving meanwhile coalesce into one more evaluation. */
  kick(): void {
    this.loop.kick();
  }

  private async observeKarpenter(): Promise<KarpenterObservation> {
    const order = this.deps.order;
    if (order)
      return order()?.enabled
        ? { state: 'present' }
        : { state: 'missing', message: 'the fleet does not enable Karpenter on this cluster' };
    try {
      const cr = await this.deps.cluster.read({
        apiVersion: KARPENTER_CR.apiVersion,
        kind: KARPENTER_CR.kind,
        name: KARPENTER_CR_NAME,
      });
      return cr ? { state: 'present' } : { state: 'missing' };
    } catch (err) {
      // The CRD not being installed yet: no Karpenter CR can exist, nothing is configured.
      if (isUnknownKind(err)) return { state: 'missing' };
      return { state: 'error', message: describeKubeError(err) };
    }
  }

  private async observeOperand(): Promise<OperandObservation> {
    try {
      const deployment = await this.deps.cluster.read<KubeObject & DeploymentStatus>({
        apiVersion: DEPLOYMENT.apiVersion,
        kind: DEPLOYMENT.kind,
        name: OPERAND_NAME,
        namespace: this.deps.provider.operandNamespace,
      });
      if (!deployment) return { state: 'missing' };
      return {
        state: 'present',
        replicas: deployment.spec?.replicas ?? 1,
        availableReplicas: deployment.status?.availableReplicas ?? 0,
        updatedReplicas: deployment.status?.updatedReplicas ?? 0,
      };
    } catch (err) {
      return { state: 'error', message: describeKubeError(err) };
    }
  }

  private async evaluate(): Promise<void> {
    if (this.previous === undefined) {
      const live = await this.deps.cluster.read<
        KubeObject & { status?: { conditions?: OperatorCondition[] } }
      >({
        apiVersion: `${CLUSTER_OPERATOR.group}/${CLUSTER_OPERATOR.version}`,
        kind: CLUSTER_OPERATOR.kind,
        name: 'karpenter',
      });
      this.previous = live?.status?.conditions ?? [];
    }
    const [karpenter, operand] = await Promise.all([
      this.observeKarpenter(),
      this.observeOperand(),
    ]);
    const refusal = this.deps.order?.()?.refusal;
    const { object } = this.deps.provider.renderClusterOperator({
      karpenter,
      operand,
      ...(refusal ? { refusal } : {}),
      version: this.deps.version,
      previousConditions: this.previous,
      now: new Date(),
    });
    const conditions = (object.status as { conditions: OperatorCondition[] }).conditions;
    const headline = clusterOperatorRow(conditions);
    const reason = headline?.reason ?? 'Unknown';
    const next: OperandState = {
      status:
        reason === 'AsExpected' ? 'True' : headline?.type === 'Degraded' ? 'Unknown' : 'False',
      reason,
      message: headline?.message ?? '',
    };
    // The fleet's view first: a report must never lag the ClusterOperator admins see.
    const changed = next.reason !== this.state.reason || next.message !== this.state.message;
    this.state = next;
    if (changed) this.deps.onChange?.(next);
    const rendered = JSON.stringify(object);
    if (rendered === this.lastApplied) return;
    // Main resource first so the object exists; /status then carries the conditions.
    await this.deps.cluster.apply(object);
    await this.deps.cluster.applyClusterCustomObjectStatus(object, CLUSTER_OPERATOR.plural);
    this.lastApplied = rendered;
    this.previous = conditions;
    this.deps.log.info({ reason, message: next.message }, 'ClusterOperator karpenter updated');
  }
}
