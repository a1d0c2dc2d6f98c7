import { describe, expect, it } from '@jest/globals';
import type { ReportedMigrationProposal } from '@fleet/contracts';
import { migrationPlanOf } from './migration-plan.js';

const reported: ReportedMigrationProposal = {
  proposal: {
    nodePools: [
      {
        name: 'worker',
        spec: { template: { spec: {} } },
        replaces: ['MachineSet/a'],
        explanations: ['instance types m6i.xlarge from MachineSet a'],
      },
    ],
    nodeClassOverrides: {},
    nodeClassExplanations: [],
    notExpressible: [],
    explanations: [],
  },
  computedAt: '2026-12-02T04:00:00.000Z',
};
const at = new Date('2026-12-02T04:00:01.000Z');
const cas = (mode: string, observed: string) => ({ mode, observed, machineAutoscalers: 3 });

describe('migrationPlanOf', () => {
  it('gives the stored plan with when it was computed and the generation it was observed at', () => {
    const { plan, reason } = migrationPlanOf({
      migrationProposal: reported,
      migrationProposalGeneration: 4,
      clusterAutoscaler: cas('KEEP', 'Present'),
      lastReportAt: at,
    });
    expect(reason).toBeNull();
    expect(plan).toMatchObject({
      nodePools: reported.proposal.nodePools,
      computedAt: new Date(reported.computedAt),
      observedGeneration: 4,
    });
  });

  it.each([
    [null, 'the sidecar has not reported yet'],
    [
      { clusterAutoscaler: null, lastReportAt: at },
      'the sidecar has not reported the Cluster Autoscaler',
    ],
    [
      { clusterAutoscaler: cas('DISABLE', 'Removed'), lastReportAt: at },
      'the Cluster Autoscaler is not in play: mode DISABLE (observed Removed)',
    ],
    [
      { clusterAutoscaler: cas('KEEP', 'Absent'), lastReportAt: at },
      'the Cluster Autoscaler is not in play: the cluster has no ClusterAutoscaler',
    ],
    [
      { clusterAutoscaler: cas('MIGRATE', 'Present'), lastReportAt: at },
      'the sidecar reported no proposal (its platform proposes none yet, or it is older than migration plans)',
    ],
    [
      // A stored value this release cannot read is no plan, with the reason, not an error.
      {
        clusterAutoscaler: cas('KEEP', 'Present'),
        lastReportAt: at,
        migrationProposal: { proposal: { nodePools: 'x' } },
        migrationProposalGeneration: 1,
      },
      'the sidecar reported no proposal (its platform proposes none yet, or it is older than migration plans)',
    ],
  ])('no plan, with the reason: %j', (status, reason) => {
    const stored = status && {
      migrationProposal: null,
      migrationProposalGeneration: null,
      ...status,
    };
    expect(migrationPlanOf(stored)).toEqual({ plan: null, reason });
  });
});
