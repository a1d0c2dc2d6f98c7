import { describe, expect, it } from '@jest/globals';
import { ApiError, describeRefusal } from '../graphql/client.js';
import { clusterState, relativeTime } from './cluster-state.js';
import { lineOf, specPath } from './field-location.js';
import { describeKarpenterChange } from './karpenter-change.js';
import {
  clustersQueryVariables,
  formatClusterListState,
  parseClusterListState,
} from './url-state.js';

describe('specPath', () => {
  it('turns the API field of a refused NodePool spec into a path inside the spec', () => {
    expect(specPath('input.spec.template.spec.requirements[0].operator')).toEqual([
      'template',
      'spec',
      'requirements',
      0,
      'operator',
    ]);
    expect(specPath('input.spec')).toEqual([]);
  });

  it('is null for a field outside the spec', () => {
    expect(specPath('input.name')).toBeNull();
    expect(specPath(undefined)).toBeNull();
  });
});

describe('lineOf', () => {
  const yaml = [
    'template:',
    '  spec:',
    '    requirements:',
    '      - key: kubernetes.io/arch',
    '        operator: Equals',
    'limits:',
    '  cpu: "64"',
  ].join('\n');

  it('finds the line of the offending field in YAML', () => {
    expect(lineOf(yaml, ['template', 'spec', 'requirements', 0, 'operator'])).toBe(5);
    expect(lineOf(yaml, ['limits', 'cpu'])).toBe(7);
  });

  it('falls back to the deepest present parent for a field that is missing', () => {
    expect(lineOf(yaml, ['template', 'spec', 'nodeClassRef', 'kind'])).toBe(2);
  });

  it('finds it in JSON too', () => {
    const json = JSON.stringify({ weight: 101, limits: { cpu: '1' } }, null, 2);
    expect(lineOf(json, ['weight'])).toBe(2);
  });

  it('is null for text that does not parse', () => {
    expect(lineOf('a: [', ['a'])).toBeNull();
  });
});

describe('describeKarpenterChange', () => {
  const facts = { name: 'prod-east', nodePools: 2, machineAutoscalers: 3, observed: 'Present' };

  it('says what enabling with the Cluster Autoscaler disabled does, step by step', () => {
    const steps = describeKarpenterChange(
      facts,
      { enabled: false, clusterAutoscalerMode: 'KEEP' },
      { enabled: true, clusterAutoscalerMode: 'DISABLE' },
    );
    expect(steps[0]).toMatch(/^Installs Karpenter on prod-east: .* the 2 NodePools/);
    expect(steps.join('\n')).toMatch(
      /saves an exact copy of ClusterAutoscaler\/default and its 3 MachineAutoscalers .* then deletes them/,
    );
    expect(steps.at(-1)).toMatch(/generation goes up by one/);
  });

  it('says so when there is no NodePool to apply yet', () => {
    const [install] = describeKarpenterChange(
      { ...facts, nodePools: 0 },
      { enabled: false, clusterAutoscalerMode: 'KEEP' },
      { enabled: true, clusterAutoscalerMode: 'KEEP' },
    );
    expect(install).toMatch(
      /and no NodePool yet \(Karpenter launches no node until one exists\)\.$/,
    );
  });

  it('says DISABLE without Karpenter keeps the Cluster Autoscaler (never without an autoscaler)', () => {
    const steps = describeKarpenterChange(
      facts,
      { enabled: false, clusterAutoscalerMode: 'KEEP' },
      { enabled: false, clusterAutoscalerMode: 'DISABLE' },
    );
    expect(steps.join('\n')).toMatch(
      /Cluster Autoscaler is kept: the cluster is never left without any autoscaler/,
    );
    expect(steps.join('\n')).not.toMatch(/then deletes them/);
  });

  it('says DISABLE waits for Karpenter to take over', () => {
    const steps = describeKarpenterChange(
      facts,
      { enabled: true, clusterAutoscalerMode: 'KEEP' },
      { enabled: true, clusterAutoscalerMode: 'DISABLE' },
    );
    expect(steps.join('\n')).toMatch(
      /once Karpenter can take over \(its operand Available and EC2NodeClass default Ready/,
    );
  });

  it('says KEEP after DISABLE restores the saved copy', () => {
    const steps = describeKarpenterChange(
      facts,
      { enabled: true, clusterAutoscalerMode: 'DISABLE' },
      { enabled: true, clusterAutoscalerMode: 'KEEP' },
    );
    expect(steps.join('\n')).toMatch(/Restores the Cluster Autoscaler exactly as it was saved/);
  });

  it('says disabling Karpenter removes NodePools before the operand', () => {
    const [step] = describeKarpenterChange(
      { ...facts, nodePools: 1 },
      { enabled: true, clusterAutoscalerMode: 'KEEP' },
      { enabled: false, clusterAutoscalerMode: 'KEEP' },
    );
    expect(step).toMatch(
      /first the Cluster Autoscaler comes back .*then the 1 NodePool \(.*then the EC2NodeClasses, then the operand/,
    );
  });

  it('is empty for no change, so there is nothing to confirm', () => {
    const same = { enabled: true, clusterAutoscalerMode: 'MIGRATE' } as const;
    expect(describeKarpenterChange(facts, same, same)).toEqual([]);
  });
});

describe('clusterState', () => {
  it("words the API's one health state, never deriving its own", () => {
    expect(clusterState({ healthState: 'HEALTHY' })).toBe('Healthy');
    expect(clusterState({ healthState: 'DEGRADED' })).toBe('Degraded');
    expect(clusterState({ healthState: 'STALE' })).toBe('Stale');
    expect(clusterState({ healthState: 'PAUSED' })).toBe('Paused');
    expect(clusterState({ healthState: 'PROGRESSING' })).toBe('Progressing');
  });
});

describe('relativeTime', () => {
  const now = Date.parse('2026-12-05T12:00:00Z');
  it('reads as a table should: seconds, minutes, hours, days', () => {
    expect(relativeTime('2026-12-05T11:59:58Z', now)).toBe('just now');
    expect(relativeTime('2026-12-05T11:59:30Z', now)).toBe('30 s ago');
    expect(relativeTime('2026-12-05T11:57:00Z', now)).toBe('3 min ago');
    expect(relativeTime('2026-12-05T09:00:00Z', now)).toBe('3 h ago');
    expect(relativeTime('2026-11-30T12:00:00Z', now)).toBe('5 d ago');
  });
});

describe('the clusters page URL', () => {
  it('round-trips filters, sort and page', () => {
    const state = {
      selector: 'env=prod,tier in (gold)',
      name: 'east',
      platform: 'AWS',
      topology: 'STANDALONE',
      drifted: true,
      sort: 'LAST_REPORT',
      desc: true,
      after: 'abc',
      before: null,
    } as const;
    expect(parseClusterListState(formatClusterListState(state))).toEqual(state);
    expect(formatClusterListState(state)).toContain('drifted=true');
    expect(clustersQueryVariables(state).filter).toMatchObject({ drifted: true });
    expect(clustersQueryVariables({ ...state, drifted: false }).filter).not.toHaveProperty(
      'drifted',
    );
  });

  it('keeps a plain URL plain and ignores values it does not know', () => {
    expect(formatClusterListState(parseClusterListState(''))).toBe('');
    expect(parseClusterListState('?platform=MARS&sort=COLOUR')).toMatchObject({
      platform: '',
      sort: 'NAME',
    });
  });
});

describe('describeRefusal', () => {
  it('names the field once, whether or not the API message already does', () => {
    expect(
      describeRefusal(
        new ApiError(
          'filter.labelSelector: "a b" is not a label requirement',
          'BAD_USER_INPUT',
          'filter.labelSelector',
        ),
      ),
    ).toBe('filter.labelSelector: "a b" is not a label requirement');
    expect(describeRefusal(new ApiError('is too long', 'BAD_USER_INPUT', 'input.name'))).toBe(
      'input.name: is too long',
    );
    expect(describeRefusal(new ApiError('requires role OPERATOR', 'FORBIDDEN', undefined))).toBe(
      'requires role OPERATOR',
    );
  });
});
