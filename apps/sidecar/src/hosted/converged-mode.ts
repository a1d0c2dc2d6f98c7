import {
  DEPLOYMENT,
  NODE,
  NODECLAIM,
  NODEPOOL,
  type KarpenterDesiredState,
  type ReconcileOrder,
} from '@fleet/contracts';
import {
  CONVERGED_OPERAND_NAME,
  DEFAULT_KARPENTER_IMAGE,
  DERIVED_FROM_LABEL,
  EC2_NODE_CLASS,
  NodeClassNotReadyError,
  OPENSHIFT_EC2_NODE_CLASS,
  OWNED_BY_SELECTOR,
  USER_DATA_MANAGED_LABEL,
  deriveEC2NodeClass,
  findUserDataSecret,
  renderConvergedOperand,
  renderDerivedNodeClassPolicy,
  renderNodeClassKubeletConfigMap,
  renderTaintConfigMap,
  type KubeObject,
  type TargetedObject,
} from '@fleet/cloud-provider';
import { HOSTED_CONTROL_PLANE, type HostedAwsInfrastructure } from '@fleet/discovery';
import type { Logger } from 'pino';
import { describeKubeError, isNotFound, type ClusterClient } from '../kube/cluster-client.js';
import { changeFinalizers } from '../kube/finalizers.js';
import type { ConditionSet } from '../reconcile/conditions.js';

/** Held on the HostedControlPlane while converged Karpenter may have nodes in the guest. */
export const CONVERGED_FINALIZER = 'fleet.karpenter.sh/hosted-karpenter-cleanup';
/** Karpenter's escape hatch: a NodeClaim with it is terminated without waiting for a drain. */
export const NODECLAIM_TERMINATION_TIMESTAMP = 'karpenter.sh/nodeclaim-termination-timestamp';
/** HyperShift's control-plane-operator Deployment: its image carries the token-minter. */
export const CONTROL_PLANE_OPERATOR = 'control-plane-operator';

export interface ConvergedModeOptions {
  management: ClusterClient;
  /** The guest client (follows a rotated kubeconfig). */
  guest: () => ClusterClient;
  /** The Karpenter CRDs and OpenshiftEC2NodeClass for the guest (loaded from the CRD directory). */
  crds: readonly TargetedObject[];
  /** Overrides the control-plane-operator Deployment's image for the token-minter. */
  tokenMinterImage?: string;
  proxy?: { httpProxy?: string; httpsProxy?: string; noProxy?: string };
  /**
   * How long the guest API server must have failed to answer, while the HostedControlPlane is
   * deleted, before the finalizer is released without cleaning up (default 5 minutes): one
   * timeout must not leave Karpenter's instances behind.
   */
  guestUnreachableGraceMs?: number;
  log: Logger;
}

const GUEST_UNREACHABLE_GRACE_MS = 5 * 60_000;

export interface ConvergedOutcome {
  applied: number;
  pruned: number;
  requeue: boolean;
}

/** What the guest holds of the fleet (NodePools, its NodeClass) is applied by the runtime. */
export interface GuestObjects {
  apply(): Promise<{ applied: number; pruned: number } | undefined>;
  remove(): Promise<{ pruned: number; nodeClaims: number }>;
}

type Counts = { nodeCount: number; nodeClaimCount: number; vcpus: number };

const cpuValue = (q: unknown): number => {
  if (typeof q === 'number') return q;
  if (typeof q !== 'string') return 0;
  if (q.endsWith('m')) return Math.floor(Number(q.slice(0, -1)) / 1000);
  const n = Number(q);
  return Number.isFinite(n) ? Math.floor(n) : 0;
};

/**
 * Converged mode: the sidecar does the job of HyperShift's karpenter-operator for one hosted
 * cluster. The operand in the HCP namespace, CRDs, its guest RBAC and the admission policy in the
 * guest, EC2NodeClasses derived from every OpenshiftEC2NodeClass, HostedControlPlane
 * status.autoNode, and on deletion of the HostedControlPlane the guest's NodePools and NodeClaims
 * removed before its finalizer is released.
 */
export class ConvergedMode {
  private sidecarUser?: { client: ClusterClient; name: string };

  /** Since when the guest API server has not answered during deletion (none: it answered). */
  private guestUnreachableSince: number | undefined;

  constructor(private readonly options: ConvergedModeOptions) {}

  private async guestUser(guest: ClusterClient): Promise<string> {
    if (this.sidecarUser?.client !== guest)
      this.sidecarUser = { client: guest, name: await guest.whoAmI() };
    return this.sidecarUser.name;
  }

  private async tokenMinterImage(infra: HostedAwsInfrastructure): Promise<string | undefined> {
    if (this.options.tokenMinterImage) return this.options.tokenMinterImage;
    const cpo = await this.options.management.read<KubeObject>({
      apiVersion: DEPLOYMENT.apiVersion,
      kind: DEPLOYMENT.kind,
      name: CONTROL_PLANE_OPERATOR,
      namespace: infra.hcpNamespace,
    });
    const containers = (
      cpo?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined
    )?.template?.spec?.containers;
    return containers?.[0]?.image;
  }

  async reconcile(
    order: ReconcileOrder,
    infra: HostedAwsInfrastructure,
    conditions: ConditionSet,
    guestObjects: GuestObjects,
    degraded: (reason: string, message: string, requeue?: boolean) => ConvergedOutcome,
  ): Promise<ConvergedOutcome> {
    const { spec } = order;
    conditions.set(
      'HostedMode',
      'True',
      'Converged',
      'the sidecar runs Karpenter itself in the HCP namespace (HOSTED_MODE=Converged)',
    );
    try {
      if (infra.deleting) return await this.deleting(infra, conditions, degraded);
      if (!spec.enabled) return await this.disable(infra, conditions, guestObjects);
      return await this.enable(spec, infra, conditions, guestObjects, degraded);
    } catch (err) {
      return degraded('ApplyFailed', describeKubeError(err), true);
    }
  }

  private async enable(
    spec: KarpenterDesiredState,
    infra: HostedAwsInfrastructure,
    conditions: ConditionSet,
    guestObjects: GuestObjects,
    degraded: (reason: string, message: string, requeue?: boolean) => ConvergedOutcome,
  ): Promise<ConvergedOutcome> {
    const roleArn = spec.webIdentityRoleArn;
    if (!roleArn)
      return degraded(
        'WebIdentityRoleMissing',
        'webIdentityRoleArn: required to run Karpenter on a hosted cluster in converged mode (the role the operand assumes with its guest token)',
      );
    const tokenMinterImage = await this.tokenMinterImage(infra);
    if (!tokenMinterImage)
      return degraded(
        'TokenMinterImageUnknown',
        `Deployment ${infra.hcpNamespace}/${CONTROL_PLANE_OPERATOR} has no container image to run the token-minter from`,
        true,
      );
    const { management } = this.options;
    const guest = this.options.guest();
    let applied = 0;
    // The finalizer first: from now on the guest may have Karpenter's nodes.
    if (!infra.finalizers.includes(CONVERGED_FINALIZER)) {
      await changeFinalizers(management, hostedControlPlaneRef(infra), (finalizers) =>
        finalizers.includes(CONVERGED_FINALIZER)
          ? { result: 'held' }
          : { result: 'held', finalizers: [...finalizers, CONVERGED_FINALIZER] },
      );
      applied++;
    }
    for (const crd of this.options.crds) {
      await guest.apply(crd.object);
      applied++;
    }
    const operand = renderConvergedOperand(infra, spec, roleArn, {
      image: spec.operand?.image ?? DEFAULT_KARPENTER_IMAGE,
      tokenMinterImage,
      ...(this.options.proxy ? { proxy: this.options.proxy } : {}),
    });
    const policy = renderDerivedNodeClassPolicy(await this.guestUser(guest));
    // Guest identity and RBAC before the Deployment that uses them.
    for (const { target, object } of [
      ...operand.filter((t) => t.target === 'workload'),
      ...policy,
      ...operand.filter((t) => t.target === 'management'),
    ]) {
      await (target === 'management' ? management : guest).apply(object);
      applied++;
    }
    const written = await guestObjects.apply();
    applied += written?.applied ?? 0;
    const derivation = await this.derive(infra);
    applied += derivation.applied;
    const counts = await this.writeAutoNodeStatus(infra);

    const deployment = await management.read<KubeObject>({
      apiVersion: DEPLOYMENT.apiVersion,
      kind: DEPLOYMENT.kind,
      name: CONVERGED_OPERAND_NAME,
      namespace: infra.hcpNamespace,
    });
    const status = (deployment?.status ?? {}) as { availableReplicas?: number };
    const wanted = spec.paused ? 0 : 1;
    const available = status.availableReplicas ?? 0;
    const operandReady = available >= wanted;
    conditions.set(
      'OperandReady',
      operandReady ? 'True' : 'False',
      operandReady ? 'AsExpected' : 'OperandUnavailable',
      `Deployment ${infra.hcpNamespace}/${CONVERGED_OPERAND_NAME} has ${available}/${wanted} available`,
    );
    const notReady = derivation.notReady;
    conditions.set(
      'UpgradeDriftHeld',
      derivation.held.length > 0 ? 'True' : 'False',
      derivation.held.length > 0 ? 'ControlPlaneUpdating' : 'AsExpected',
      derivation.held.length > 0
        ? `the control plane is upgrading to ${infra.release.desiredVersion ?? 'a new release'}: EC2NodeClass(es) ${derivation.held.join(', ')} keep their AMI and user data until it completes, so no node drifts before`
        : 'no AMI or user data held',
    );
    conditions.set(
      'NodeClassesReady',
      notReady.length === 0 ? 'True' : 'False',
      notReady.length === 0 ? 'AsExpected' : notReady[0]!.reason,
      notReady.length === 0
        ? `${derivation.derived} EC2NodeClass(es) derived from OpenshiftEC2NodeClasses`
        : notReady.map((n) => n.message).join('; '),
    );
    conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
    const ready = operandReady && notReady.length === 0;
    conditions.set(
      'Available',
      ready ? 'True' : 'False',
      ready ? 'AsExpected' : operandReady ? 'NodeClassNotReady' : 'OperandUnavailable',
      ready
        ? `Karpenter runs in ${infra.hcpNamespace}: ${counts.nodeCount} node(s), ${counts.nodeClaimCount} NodeClaim(s)`
        : 'waiting for the operand and every NodeClass to be ready',
    );
    conditions.set(
      'Progressing',
      ready ? 'False' : 'True',
      ready ? 'AsExpected' : 'OperandProgressing',
      ready ? 'nothing to do' : 'converged Karpenter is starting',
    );
    return { applied, pruned: written?.pruned ?? 0, requeue: !ready };
  }

  /**
   * Every OpenshiftEC2NodeClass in the guest (the fleet's and any a guest admin made) gets its
   * EC2NodeClass; one without HyperShift's user-data Secret is reported not ready on its status
   * and gets none. Derived EC2NodeClasses whose source is gone are deleted.
   */
  async derive(infra: HostedAwsInfrastructure): Promise<{
    applied: number;
    derived: number;
    notReady: NodeClassNotReadyError[];
    held: string[];
  }> {
    const guest = this.options.guest();
    const [sources, secrets] = await Promise.all([
      guest.list<KubeObject>(OPENSHIFT_EC2_NODE_CLASS.apiVersion, OPENSHIFT_EC2_NODE_CLASS.kind),
      this.options.management.list<KubeObject>('v1', 'Secret', {
        namespace: infra.hcpNamespace,
        labelSelector: `${USER_DATA_MANAGED_LABEL}=true`,
      }),
    ]);
    let applied = await this.writeKubeletConfigs(infra, sources);
    let derived = 0;
    const held: string[] = [];
    const notReady: NodeClassNotReadyError[] = [];
    const names = new Set<string>();
    for (const source of sources) {
      const name = source.metadata.name;
      if ((source.metadata as { deletionTimestamp?: string }).deletionTimestamp) continue;
      names.add(name);
      let ready: { status: string; reason: string; message: string };
      try {
        const ec2 = await this.holdDuringUpgrade(
          deriveEC2NodeClass(source, findUserDataSecret(name, secrets), infra),
          source,
          infra,
        );
        if (ec2.held) held.push(name);
        await guest.apply(ec2.object);
        applied++;
        derived++;
        ready = { status: 'True', reason: 'Ready', message: `EC2NodeClass ${name} derived` };
      } catch (err) {
        if (!(err instanceof NodeClassNotReadyError)) throw err;
        notReady.push(err);
        ready = { status: 'False', reason: err.reason, message: err.message };
        // A NodeClass that lost its Secret loses its EC2NodeClass: nothing launches from stale data.
        names.delete(name);
      }
      await guest.applyClusterCustomObjectStatus(
        {
          apiVersion: OPENSHIFT_EC2_NODE_CLASS.apiVersion,
          kind: OPENSHIFT_EC2_NODE_CLASS.kind,
          metadata: { name },
          status: {
            conditions: [
              {
                type: 'Ready',
                ...ready,
                lastTransitionTime: new Date().toISOString(),
                observedGeneration: (source.metadata as { generation?: number }).generation ?? 1,
              },
            ],
          },
        },
        OPENSHIFT_EC2_NODE_CLASS.plural,
      );
    }
    for (const live of await guest.list<KubeObject>(
      EC2_NODE_CLASS.apiVersion,
      EC2_NODE_CLASS.kind,
      { labelSelector: DERIVED_FROM_LABEL },
    )) {
      if (names.has(live.metadata.name)) continue;
      await guest.delete({
        apiVersion: EC2_NODE_CLASS.apiVersion,
        kind: EC2_NODE_CLASS.kind,
        name: live.metadata.name,
      });
    }
    return { applied, derived, notReady, held };
  }

  /**
   * HyperShift's KubeletConfig ConfigMaps in the HCP namespace: `set-karpenter-taint` and one
   * `karpenter-kubelet-<name>` per OpenshiftEC2NodeClass with `spec.kubelet` (whether or not its
   * user data is ready yet: the ConfigMap is an input to it). Owned ones no class wants are deleted.
   */
  private async writeKubeletConfigs(
    infra: HostedAwsInfrastructure,
    sources: KubeObject[],
  ): Promise<number> {
    const { management } = this.options;
    const wanted = [renderTaintConfigMap(infra.hcpNamespace)];
    for (const source of sources) {
      if ((source.metadata as { deletionTimestamp?: string }).deletionTimestamp) continue;
      const cm = renderNodeClassKubeletConfigMap(source, infra.hcpNamespace);
      if (cm) wanted.push(cm);
    }
    for (const cm of wanted) await management.apply(cm);
    const names = new Set(wanted.map((cm) => cm.metadata.name));
    for (const live of await management.list<KubeObject>('v1', 'ConfigMap', {
      namespace: infra.hcpNamespace,
      labelSelector: OWNED_BY_SELECTOR,
    })) {
      if (names.has(live.metadata.name)) continue;
      await management.delete({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: live.metadata.name,
        namespace: infra.hcpNamespace,
      });
    }
    return wanted.length;
  }

  /**
   * The upgrade-drift policy (docs/DOMAIN-PARITY.md "Upgrades"): while the control plane is
   * upgrading (the newest release history entry is Partial), an EC2NodeClass that exists keeps
   * the AMI and user data it has, so Karpenter marks no NodeClaim drifted before the control
   * plane has finished; both are held together, since either alone makes Karpenter drift (what
   * undid HyperShift's first attempt, which held the user data only). A NodeClass pinned to a
   * version (`spec.version`) is not held, nor is a new one (nothing to hold).
   */
  private async holdDuringUpgrade(
    derived: KubeObject,
    source: KubeObject,
    infra: HostedAwsInfrastructure,
  ): Promise<{ object: KubeObject; held: boolean }> {
    const pinned = typeof (source.spec as { version?: unknown } | undefined)?.version === 'string';
    if (!infra.release.updating || pinned) return { object: derived, held: false };
    const live = await this.options.guest().read<KubeObject>({
      apiVersion: EC2_NODE_CLASS.apiVersion,
      kind: EC2_NODE_CLASS.kind,
      name: derived.metadata.name,
    });
    const liveSpec = live?.spec as { amiSelectorTerms?: unknown; userData?: unknown } | undefined;
    if (!liveSpec?.amiSelectorTerms) return { object: derived, held: false };
    return {
      object: {
        ...derived,
        spec: {
          ...(derived.spec as Record<string, unknown>),
          amiSelectorTerms: liveSpec.amiSelectorTerms,
          ...(liveSpec.userData !== undefined ? { userData: liveSpec.userData } : {}),
        },
      },
      held: true,
    };
  }

  /** HostedControlPlane status.autoNode, computed as HyperShift's karpenter-operator does. */
  async writeAutoNodeStatus(infra: HostedAwsInfrastructure): Promise<Counts> {
    const guest = this.options.guest();
    const [nodes, claims] = await Promise.all([
      guest.list<KubeObject>(NODE.apiVersion, NODE.kind),
      guest.list<KubeObject>(NODECLAIM.apiVersion, NODECLAIM.kind),
    ]);
    const live = new Set(nodes.map((n) => n.metadata.name));
    const counts: Counts = {
      nodeCount: nodes.filter((n) => 'karpenter.sh/nodepool' in (n.metadata.labels ?? {})).length,
      nodeClaimCount: claims.length,
      // Only NodeClaims whose Node exists and reported capacity count (HyperShift's billing rule).
      vcpus: claims.reduce((sum, c) => {
        const status = (c.status ?? {}) as { nodeName?: string; capacity?: { cpu?: unknown } };
        return status.nodeName && live.has(status.nodeName)
          ? sum + cpuValue(status.capacity?.cpu)
          : sum;
      }, 0),
    };
    await this.options.management.applyNamespacedCustomObjectStatus(
      {
        apiVersion: HOSTED_CONTROL_PLANE.apiVersion,
        kind: HOSTED_CONTROL_PLANE.kind,
        metadata: { name: infra.hcpName, namespace: infra.hcpNamespace },
        status: { autoNode: counts },
      },
      HOSTED_CONTROL_PLANE.plural,
    );
    return counts;
  }

  /** Disabling: the fleet's guest objects first, the operand kept until no NodeClaim is left. */
  private async disable(
    infra: HostedAwsInfrastructure,
    conditions: ConditionSet,
    guestObjects: GuestObjects,
  ): Promise<ConvergedOutcome> {
    const removal = await guestObjects.remove();
    let pruned = removal.pruned;
    if (removal.nodeClaims > 0) {
      conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
      conditions.set('Available', 'True', 'KarpenterDisabling', 'Karpenter is being disabled');
      conditions.set(
        'Progressing',
        'True',
        'WaitingForNodeClaims',
        `waiting for Karpenter to remove ${removal.nodeClaims} NodeClaim(s) before its operand is removed from ${infra.hcpNamespace}`,
      );
      return { applied: 0, pruned, requeue: true };
    }
    pruned += await this.removeOperand(infra);
    conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
    conditions.set('Available', 'True', 'KarpenterDisabled', 'Karpenter is disabled');
    conditions.set('Progressing', 'False', 'AsExpected', 'nothing to do');
    return { applied: 0, pruned, requeue: false };
  }

  /**
   * HyperShift's own Karpenter has started (its karpenter-operator, or spec.autoNode) where this
   * sidecar ran converged mode: two operands would work the same NodePools and NodeClaims, and the
   * sidecar's admission policy would refuse HyperShift's EC2NodeClass writes. The sidecar takes
   * away what it wrote (operand, policy, derived EC2NodeClasses, finalizer; nothing of anyone
   * else's) and writes nothing more. Returns how many objects it removed; 0 where it had none.
   */
  async stepAside(infra: HostedAwsInfrastructure): Promise<number> {
    const operand = await this.options.management.read({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: CONVERGED_OPERAND_NAME,
      namespace: infra.hcpNamespace,
    });
    // Never ran here (its operand and finalizer are what converged mode writes first).
    if (!operand && !infra.finalizers.includes(CONVERGED_FINALIZER)) return 0;
    return this.removeOperand(infra);
  }

  /** The operand and what the sidecar wrote beside it, the finalizer last; CRDs stay. */
  private async removeOperand(infra: HostedAwsInfrastructure): Promise<number> {
    const { management } = this.options;
    let pruned = 0;
    const guest = this.options.guest();
    const deleteOwned = async (
      client: ClusterClient,
      kinds: { apiVersion: string; kind: string; namespace?: string }[],
    ) => {
      for (const k of kinds) {
        let live: KubeObject[];
        try {
          live = await client.list<KubeObject>(k.apiVersion, k.kind, {
            labelSelector: OWNED_BY_SELECTOR,
            ...(k.namespace ? { namespace: k.namespace } : {}),
          });
        } catch (err) {
          if (isNotFound(err)) continue;
          throw err;
        }
        for (const o of live) {
          await client.delete({
            apiVersion: k.apiVersion,
            kind: k.kind,
            name: o.metadata.name,
            ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
          });
          pruned++;
        }
      }
    };
    await deleteOwned(management, [
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: infra.hcpNamespace },
      { apiVersion: 'v1', kind: 'ServiceAccount', namespace: infra.hcpNamespace },
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: infra.hcpNamespace },
    ]);
    await deleteOwned(guest, [
      { apiVersion: EC2_NODE_CLASS.apiVersion, kind: EC2_NODE_CLASS.kind },
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding' },
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy' },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
      { apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'kube-system' },
    ]);
    if (infra.finalizers.includes(CONVERGED_FINALIZER)) {
      await this.releaseFinalizer(infra);
      pruned++;
    }
    return pruned;
  }

  private async releaseFinalizer(infra: HostedAwsInfrastructure): Promise<void> {
    // Read again and written at that resourceVersion: HyperShift adds and removes its own
    // finalizers on the same list meanwhile, and a merge patch replaces the whole list.
    await changeFinalizers(this.options.management, hostedControlPlaneRef(infra), (finalizers) =>
      finalizers.includes(CONVERGED_FINALIZER)
        ? { result: 'released', finalizers: finalizers.filter((f) => f !== CONVERGED_FINALIZER) }
        : { result: 'released' },
    );
  }

  /**
   * The HostedControlPlane is being deleted: as HyperShift does, every NodePool in the guest is
   * deleted, then every NodeClaim, each marked with Karpenter's termination timestamp so a node
   * that cannot drain does not hold the deletion; once none is left the finalizer is released.
   * A guest API server that no longer answers cannot hold it for ever either: once it has not
   * answered for the grace period (`guestUnreachableGraceMs`), its nodes are left to go with the
   * cluster's infrastructure, the finalizer is released and the reason reported.
   */
  private async deleting(
    infra: HostedAwsInfrastructure,
    conditions: ConditionSet,
    degraded: (reason: string, message: string, requeue?: boolean) => ConvergedOutcome,
  ): Promise<ConvergedOutcome> {
    if (!infra.finalizers.includes(CONVERGED_FINALIZER)) {
      conditions.set('Available', 'False', 'HostedControlPlaneDeleting', 'being deleted');
      conditions.set('Progressing', 'False', 'AsExpected', 'the finalizer is released');
      conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
      return { applied: 0, pruned: 0, requeue: false };
    }
    const guest = this.options.guest();
    let pools: KubeObject[];
    let claims: KubeObject[];
    try {
      pools = await guest.list<KubeObject>(NODEPOOL.apiVersion, NODEPOOL.kind);
      for (const p of pools) {
        if ((p.metadata as { deletionTimestamp?: string }).deletionTimestamp) continue;
        await guest.delete({
          apiVersion: NODEPOOL.apiVersion,
          kind: NODEPOOL.kind,
          name: p.metadata.name,
        });
      }
      claims =
        pools.length > 0 ? [] : await guest.list<KubeObject>(NODECLAIM.apiVersion, NODECLAIM.kind);
      for (const c of claims) {
        const meta = c.metadata as KubeObject['metadata'] & { deletionTimestamp?: string };
        if (!meta.deletionTimestamp) {
          await guest.delete({
            apiVersion: NODECLAIM.apiVersion,
            kind: NODECLAIM.kind,
            name: meta.name,
          });
          continue;
        }
        if (meta.annotations?.[NODECLAIM_TERMINATION_TIMESTAMP]) continue;
        await guest.mergePatch({
          apiVersion: NODECLAIM.apiVersion,
          kind: NODECLAIM.kind,
          metadata: {
            name: meta.name,
            annotations: { [NODECLAIM_TERMINATION_TIMESTAMP]: meta.deletionTimestamp },
          },
        });
      }
      this.guestUnreachableSince = undefined;
    } catch (err) {
      if (!unreachable(err)) return degraded('GuestCleanupFailed', describeKubeError(err), true);
      const since = (this.guestUnreachableSince ??= Date.now());
      const grace = this.options.guestUnreachableGraceMs ?? GUEST_UNREACHABLE_GRACE_MS;
      if (Date.now() - since < grace) {
        conditions.set('Available', 'False', 'HostedControlPlaneDeleting', 'being deleted');
        conditions.set(
          'Progressing',
          'True',
          'GuestUnreachable',
          `the guest API server does not answer (${describeKubeError(err)}) since ${new Date(since).toISOString()}; the finalizer ${CONVERGED_FINALIZER} is held until it answers, or for ${Math.round(grace / 1000)} s`,
        );
        conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
        return { applied: 0, pruned: 0, requeue: true };
      }
      this.options.log.warn(
        { err: describeKubeError(err) },
        'guest API server unreachable while the HostedControlPlane is deleted; releasing the finalizer',
      );
      await this.releaseFinalizer(infra);
      conditions.set(
        'Progressing',
        'False',
        'GuestUnreachable',
        `the guest API server does not answer (${describeKubeError(err)}); the finalizer ${CONVERGED_FINALIZER} was released without removing NodePools and NodeClaims`,
      );
      conditions.set('Available', 'False', 'HostedControlPlaneDeleting', 'being deleted');
      conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
      return { applied: 0, pruned: 1, requeue: false };
    }
    if (pools.length > 0 || claims.length > 0) {
      conditions.set('Available', 'False', 'HostedControlPlaneDeleting', 'being deleted');
      conditions.set(
        'Progressing',
        'True',
        pools.length > 0 ? 'DeletingNodePools' : 'WaitingForNodeClaims',
        pools.length > 0
          ? `deleting ${pools.length} NodePool(s) in the guest before the HostedControlPlane's finalizer is released`
          : `waiting for Karpenter to terminate ${claims.length} NodeClaim(s) (forced: ${NODECLAIM_TERMINATION_TIMESTAMP})`,
      );
      conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
      return { applied: 0, pruned: pools.length, requeue: true };
    }
    const pruned = await this.removeOperand(infra);
    conditions.set('Available', 'False', 'HostedControlPlaneDeleting', 'being deleted');
    conditions.set(
      'Progressing',
      'False',
      'AsExpected',
      `no NodePool or NodeClaim left in the guest; finalizer ${CONVERGED_FINALIZER} released`,
    );
    conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
    return { applied: 0, pruned, requeue: false };
  }
}

/** A connection failure or timeout (no HTTP answer at all), not a refusal. */
function unreachable(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  const text = `${typeof code === 'string' ? code : ''} ${describeKubeError(err)} ${String(err)}`;
  return /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ETIMEDOUT|ENOTFOUND|socket hang up|fetch failed|timed out|aborted/i.test(
    text,
  );
}

function hostedControlPlaneRef(infra: HostedAwsInfrastructure) {
  return {
    apiVersion: HOSTED_CONTROL_PLANE.apiVersion,
    kind: HOSTED_CONTROL_PLANE.kind,
    name: infra.hcpName,
    namespace: infra.hcpNamespace,
  };
}
