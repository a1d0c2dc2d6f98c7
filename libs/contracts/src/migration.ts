import { z } from 'zod';
import { DesiredNodePool, NodeClassOverrides } from './desired-state.js';

/** NodePools one proposal carries (one per distinct shape of Cluster Autoscaler group). */
export const MIGRATION_NODEPOOLS_MAX = 32;
/** Things the proposal cannot carry over, each naming its group. */
export const MIGRATION_NOT_EXPRESSIBLE_MAX = 64;
/** Explanations per NodePool, and for the NodeClass and the whole plan. */
export const MIGRATION_EXPLANATIONS_MAX = 16;
/** The whole proposal as JSON: it travels in every report that carries it. */
export const MIGRATION_PROPOSAL_MAX_CHARS = 256 * 1024;

const explanation = z.string().min(1).max(1024);
const explanations = z.array(explanation).max(MIGRATION_EXPLANATIONS_MAX);

/** One NodePool proposed in place of one or more Cluster Autoscaler groups of the same shape. */
export const ProposedNodePool = DesiredNodePool.extend({
  /** The groups it replaces, as `<Kind>/<name>` (MachineSet/…, MachineDeployment/…). */
  replaces: z.array(z.string().min(1).max(253)).min(1).max(64),
  /** One sentence per choice: instance types, zones, capacity type, limits, disruption, ... */
  explanations,
});
export type ProposedNodePool = z.infer<typeof ProposedNodePool>;

/** A setting of the Cluster Autoscaler or of a group that no NodePool field can say. */
export const NotExpressible = z.object({
  /** `<Kind>/<name>`: the group, or ClusterAutoscaler/default for cluster-wide settings. */
  object: z.string().min(1).max(253),
  /** What is lost, e.g. `label node-role.kubernetes.io/infra=""`, `minReplicas 1`. */
  what: z.string().min(1).max(512),
  reason: explanation,
});
export type NotExpressible = z.infer<typeof NotExpressible>;

/**
 * The sidecar's proposal for moving a cluster from the Cluster Autoscaler to Karpenter, computed
 * from what the Cluster Autoscaler reads (ClusterAutoscaler, MachineAutoscalers and their
 * MachineSets; or Cluster API groups with size annotations). The NodePools are desired-state
 * NodePools (name + karpenter.sh/v1 spec) the fleet can store as they are.
 */
export const MigrationProposal = z
  .object({
    nodePools: z.array(ProposedNodePool).max(MIGRATION_NODEPOOLS_MAX),
    nodeClassOverrides: NodeClassOverrides,
    nodeClassExplanations: explanations,
    notExpressible: z.array(NotExpressible).max(MIGRATION_NOT_EXPRESSIBLE_MAX),
    /** Choices that concern the whole plan (groups left out, cluster-wide limits). */
    explanations,
  })
  .refine((p) => JSON.stringify(p).length <= MIGRATION_PROPOSAL_MAX_CHARS, {
    message: `a migration proposal must be at most ${MIGRATION_PROPOSAL_MAX_CHARS} characters as JSON`,
  });
export type MigrationProposal = z.infer<typeof MigrationProposal>;

/** What a report carries: the proposal and when the sidecar computed it. */
export const ReportedMigrationProposal = z.object({
  proposal: MigrationProposal,
  computedAt: z.iso.datetime(),
});
export type ReportedMigrationProposal = z.infer<typeof ReportedMigrationProposal>;
