import { describe, expect, it } from '@jest/globals';
import { readExposition, seriesUsed } from './promql.js';

describe('seriesUsed', () => {
  it('finds metric names and their matchers, not functions, aggregations, grouping or strings', () => {
    expect(
      seriesUsed(
        'histogram_quantile(0.95, sum by (le, type) (rate(fleet_x_bucket{app="api", type=~"q|m", note="a=b {c}"}[5m])))' +
          ' / ignoring(queue) max without (instance) (fleet_y offset 1h) > bool 2e3 and on() absent(fleet_z{cluster=~"$cluster"})',
      ),
    ).toEqual([
      { metric: 'fleet_x_bucket', labels: ['app', 'type', 'note'] },
      { metric: 'fleet_y', labels: [] },
      { metric: 'fleet_z', labels: ['cluster'] },
    ]);
  });

  it('refuses what it cannot read rather than reading it wrong', () => {
    expect(() => seriesUsed('rate(fleet_x[5m')).toThrow(/unbalanced \]/);
    expect(() => seriesUsed('{__name__="fleet_x"}')).toThrow(/without a metric name/);
  });
});

describe('readExposition', () => {
  it('reads sample names and their label names, and the names TYPE lines declare', () => {
    const { samples, declared } = readExposition(
      [
        '# HELP fleet_q Jobs',
        '# TYPE fleet_q gauge',
        'fleet_q{queue="a",app="worker"} 3',
        'fleet_q{queue="b",app="worker",extra="x"} 1',
        'process_cpu_seconds_total 1.5',
        '# TYPE fleet_h histogram',
        '# TYPE fleet_c_total counter',
        '',
      ].join('\n'),
    );
    expect([...samples.keys()]).toEqual(['fleet_q', 'process_cpu_seconds_total']);
    expect([...samples.get('fleet_q')!]).toEqual(['queue', 'app', 'extra']);
    expect([...declared].sort()).toEqual(
      [
        'fleet_c_total',
        'fleet_h',
        'fleet_h_bucket',
        'fleet_h_count',
        'fleet_h_sum',
        'fleet_q',
      ].sort(),
    );
  });
});
