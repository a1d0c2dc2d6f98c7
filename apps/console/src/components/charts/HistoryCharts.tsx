import {
  Chart,
  ChartAxis,
  ChartBar,
  ChartGroup,
  ChartLine,
  ChartScatter,
  ChartStack,
  ChartTooltip,
} from '@patternfly/react-charts/victory';
import { Content } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * The console's charts (issue 47), PatternFly's charts as the OpenShift console draws them. This
 * module is loaded only by the pages that draw charts (React.lazy), so neither the first paint
 * nor the other pages carry Victory.
 *
 * Gaps: a step without samples has no bar and breaks the line (Victory draws nothing for a null
 * y), never a zero; each reported step is also a dot, so a lone report between gaps shows; the
 * data table under each chart says "no data" for it. Each chart is an
 * image with a title and a description (role="img"), and its numbers are in a table.
 */

export const COLORS = {
  healthy: '#3e8635',
  progressing: '#0066cc',
  degraded: '#c9190b',
  stale: '#f0ab00',
  available: '#3e8635',
  nodes: '#5e40be',
} as const;

/** Refused and ignored reasons get warm colours, approvals cool ones, stable per reason. */
const DECISION_COLORS: Record<string, readonly string[]> = {
  Approved: ['#3e8635', '#4cb140', '#23511e', '#95d58e'],
  Denied: ['#c9190b', '#a30000', '#f4b678', '#7d1007'],
  Ignored: ['#f0ab00', '#c58c00', '#f9e0a2', '#795600'],
};

function useWidth(): [React.RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(600);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(280, Math.floor(el.getBoundingClientRect().width)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

const timeTick = (hours: number) => (t: Date | number) => {
  const d = new Date(t);
  return hours > 48
    ? d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })
    : d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
};

const atText = (iso: string) => new Date(iso).toLocaleString();

/** A chart, its caption, and its numbers in a table (the text alternative a reader can open). */
function Figure({
  id,
  title,
  caption,
  children,
  columns,
  rows,
}: {
  id: string;
  title: string;
  caption: string;
  children: ReactNode;
  columns: string[];
  rows: { key: string; cells: (string | number)[] }[];
}) {
  return (
    <figure className="fleet-chart" data-testid={`chart-${id}`} aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>
        <strong>{title}</strong> <span className="fleet-muted">{caption}</span>
      </figcaption>
      {children}
      <details className="fleet-chart-data">
        <summary>Data table: {title.toLowerCase()}</summary>
        <Table aria-label={`${title}: data`} variant="compact" data-testid={`chart-${id}-data`}>
          <Thead>
            <Tr>
              {columns.map((c) => (
                <Th key={c} modifier="wrap">
                  {c}
                </Th>
              ))}
            </Tr>
          </Thead>
          <Tbody>
            {rows.map((r) => (
              <Tr key={r.key}>
                {r.cells.map((cell, i) => (
                  <Td key={i} dataLabel={columns[i]}>
                    {cell}
                  </Td>
                ))}
              </Tr>
            ))}
          </Tbody>
        </Table>
      </details>
    </figure>
  );
}

export interface FleetHealthPoint {
  at: string;
  healthy: number | null;
  progressing: number | null;
  degraded: number | null;
  stale: number | null;
}

const FLEET_STATES = ['healthy', 'progressing', 'degraded', 'stale'] as const;

/** The fleet by health state per hour: stacked bars; an hour no roll-up covers has none. */
export function FleetHealthChart({ points, hours }: { points: FleetHealthPoint[]; hours: number }) {
  const [ref, width] = useWidth();
  const covered = points.filter((p) => p.healthy !== null);
  const gaps = points.length - covered.length;
  const barWidth = Math.max(2, Math.floor(((width - 90) / Math.max(points.length, 1)) * 0.8));
  const desc = covered.length
    ? `Clusters per hour by health state over the last ${hours} hours; ${covered.length} hours with data, ${gaps} without (gaps).`
    : `No health history in the last ${hours} hours.`;
  const domain = points.length
    ? {
        x: [Date.parse(points[0]!.at), Date.parse(points.at(-1)!.at) + 3_600_000] as [
          number,
          number,
        ],
      }
    : undefined;
  return (
    <Figure
      id="fleet-health"
      title="Fleet health over time"
      caption={`clusters per hour by state, last ${hours === 24 ? '24 h' : '7 d'}; an hour without a bar has no data (a gap, not zero). Paused is not in history.`}
      columns={['Hour', 'Healthy', 'Progressing', 'Degraded', 'Stale']}
      rows={points.map((p) => ({
        key: p.at,
        cells:
          p.healthy === null
            ? [atText(p.at), 'no data', 'no data', 'no data', 'no data']
            : [atText(p.at), p.healthy, p.progressing ?? 0, p.degraded ?? 0, p.stale ?? 0],
      }))}
    >
      <div ref={ref} className="fleet-chart-canvas">
        {covered.length === 0 ? (
          <Content component="p" data-testid="chart-fleet-health-empty">
            No health history in this range yet: the worker rolls reports up by the hour.
          </Content>
        ) : (
          <Chart
            ariaTitle="Fleet health over time"
            ariaDesc={desc}
            width={width}
            height={240}
            scale={{ x: 'time', y: 'linear' }}
            domain={domain}
            domainPadding={{ x: barWidth }}
            padding={{ top: 16, bottom: 70, left: 50, right: 20 }}
            legendData={FLEET_STATES.map((s) => ({
              name: s[0]!.toUpperCase() + s.slice(1),
              symbol: { fill: COLORS[s] },
            }))}
            legendPosition="bottom"
          >
            <ChartAxis tickFormat={timeTick(hours)} fixLabelOverlap />
            <ChartAxis
              dependentAxis
              showGrid
              tickFormat={(t: number) => (Number.isInteger(t) ? t : '')}
            />
            <ChartStack>
              {FLEET_STATES.map((state) => (
                <ChartBar
                  key={state}
                  name={state}
                  barWidth={barWidth}
                  style={{ data: { fill: COLORS[state] } }}
                  data={covered.map((p) => ({
                    x: new Date(Date.parse(p.at) + 1_800_000),
                    y: p[state] ?? 0,
                    label: `${atText(p.at)}: ${p[state] ?? 0} ${state}`,
                  }))}
                  labelComponent={<ChartTooltip constrainToVisibleArea />}
                />
              ))}
            </ChartStack>
          </Chart>
        )}
      </div>
    </Figure>
  );
}

export interface HealthPoint {
  at: string;
  samples: number;
  available: number;
  degraded: number;
  progressing: number;
  nodes: number | null;
  /** Average NodeClaims per state over the step (raw samples only; null from roll-ups). */
  nodeClaimsByState: unknown;
}

/** Karpenter's NodeClaim lifecycle, in order, then what the sidecar also counts. */
const CLAIM_STATES = ['Pending', 'Launched', 'Registered', 'Initialized', 'Ready', 'Terminating'];
const CLAIM_COLORS = ['#8a8d90', '#f0ab00', '#73c5c5', '#0066cc', '#3e8635', '#c9190b'];
const claimsOf = (p: HealthPoint): Record<string, number> | null =>
  p.nodeClaimsByState && typeof p.nodeClaimsByState === 'object'
    ? (p.nodeClaimsByState as Record<string, number>)
    : null;

export interface CsrBucket {
  at: string;
  decision: string;
  reason: string;
  count: number;
}

const pct = (v: number) => `${Math.round(v * 100)}%`;

/**
 * A cluster's history on the step grid from `from`: conditions (share of reports with each one
 * True), nodes, and CSR decisions by decision and reason. A step without reports is a gap.
 */
export function ClusterHistoryCharts({
  from,
  step,
  steps,
  health,
  csr,
  label,
}: {
  from: number;
  step: number;
  steps: number;
  health: HealthPoint[];
  csr: CsrBucket[];
  label: string;
}) {
  const [ref, width] = useWidth();
  const grid = Array.from({ length: steps }, (_, i) =>
    new Date(from + i * step * 1000).toISOString(),
  );
  const bySlot = new Map<number, HealthPoint>();
  for (const p of health) {
    if (p.samples > 0) bySlot.set(Math.floor((Date.parse(p.at) - from) / 1000 / step), p);
  }
  const reported = bySlot.size;
  const gaps = steps - reported;
  const line = (pick: (p: HealthPoint) => number | null) =>
    grid.map((at, i) => {
      const p = bySlot.get(i);
      const y = p ? pick(p) : null;
      return { x: new Date(Date.parse(at) + (step * 1000) / 2), y };
    });
  const hours = (steps * step) / 3600;
  const tick = timeTick(hours);
  const domain = { x: [from, from + steps * step * 1000] as [number, number] };
  const axisAndPadding = { top: 16, bottom: 70, left: 50, right: 20 };
  const range = label;
  const healthRows = grid.map((at, i) => {
    const p = bySlot.get(i);
    return {
      key: at,
      cells: p
        ? [
            atText(at),
            p.samples,
            pct(p.available),
            pct(p.progressing),
            pct(p.degraded),
            p.nodes === null ? '—' : p.nodes.toFixed(1),
          ]
        : [atText(at), 0, 'no data', 'no data', 'no data', 'no data'],
    };
  });

  const series = [...new Set(csr.map((b) => `${b.decision}: ${b.reason}`))].sort();
  const colorOf = (name: string) => {
    const [decision = ''] = name.split(':');
    const palette = DECISION_COLORS[decision] ?? ['#6a6e73'];
    const sameDecision = series.filter((s) => s.startsWith(`${decision}:`));
    return palette[sameDecision.indexOf(name) % palette.length]!;
  };
  const claimStates = [...new Set(health.flatMap((p) => Object.keys(claimsOf(p) ?? {})))].sort(
    (a, b) =>
      (CLAIM_STATES.indexOf(a) + 1 || 99) - (CLAIM_STATES.indexOf(b) + 1 || 99) ||
      a.localeCompare(b),
  );
  const claimColor = (st: string) => CLAIM_COLORS[CLAIM_STATES.indexOf(st)] ?? '#6a6e73';
  const csrTotal = csr.reduce((n, b) => n + b.count, 0);
  const barWidth = Math.max(2, Math.floor(((width - 90) / Math.max(steps, 1)) * 0.8));

  return (
    <div ref={ref}>
      <Figure
        id="conditions"
        title="Conditions over time"
        caption={`share of reports with each condition True, ${range}; a step without reports breaks the line (a gap, not zero).`}
        columns={['From', 'Reports', 'Available', 'Progressing', 'Degraded', 'Nodes']}
        rows={healthRows}
      >
        {reported === 0 ? (
          <Content component="p" data-testid="chart-conditions-empty">
            No reports in this range.
          </Content>
        ) : (
          <Chart
            ariaTitle="Conditions over time"
            ariaDesc={`Share of reports with Available, Progressing and Degraded True, ${range}; ${reported} steps with reports, ${gaps} without (gaps).`}
            width={width}
            height={220}
            scale={{ x: 'time', y: 'linear' }}
            domain={{ ...domain, y: [0, 1] }}
            padding={axisAndPadding}
            legendData={[
              { name: 'Available', symbol: { fill: COLORS.available } },
              { name: 'Progressing', symbol: { fill: COLORS.progressing } },
              { name: 'Degraded', symbol: { fill: COLORS.degraded } },
            ]}
            legendPosition="bottom"
          >
            <ChartAxis tickFormat={tick} fixLabelOverlap />
            <ChartAxis
              dependentAxis
              showGrid
              tickFormat={(t: number) => pct(t)}
              tickValues={[0, 0.5, 1]}
            />
            <ChartGroup>
              <ChartLine
                name="available"
                data={line((p) => p.available)}
                style={{ data: { stroke: COLORS.available } }}
              />
              <ChartScatter
                name="available-points"
                size={2}
                data={line((p) => p.available).filter((d) => d.y !== null)}
                style={{ data: { fill: COLORS.available } }}
              />
              <ChartLine
                name="progressing"
                data={line((p) => p.progressing)}
                style={{ data: { stroke: COLORS.progressing } }}
              />
              <ChartScatter
                name="progressing-points"
                size={2}
                data={line((p) => p.progressing).filter((d) => d.y !== null)}
                style={{ data: { fill: COLORS.progressing } }}
              />
              <ChartLine
                name="degraded"
                data={line((p) => p.degraded)}
                style={{ data: { stroke: COLORS.degraded } }}
              />
              <ChartScatter
                name="degraded-points"
                size={2}
                data={line((p) => p.degraded).filter((d) => d.y !== null)}
                style={{ data: { fill: COLORS.degraded } }}
              />
            </ChartGroup>
          </Chart>
        )}
      </Figure>
      <Figure
        id="nodes"
        title="Nodes and NodeClaims over time"
        caption={`nodes, and Karpenter's NodeClaims by state, averaged per step, ${range}; a step without reports is a gap. NodeClaim states come from raw reports only (kept 7 days, charted up to 48 h).`}
        columns={['From', 'Reports', 'Nodes', ...claimStates]}
        rows={grid.map((at, i) => {
          const p = bySlot.get(i);
          const claims = p ? claimsOf(p) : null;
          return {
            key: at,
            cells: p
              ? [
                  atText(at),
                  p.samples,
                  p.nodes === null ? '—' : p.nodes.toFixed(1),
                  ...claimStates.map((st) => (claims ? (claims[st] ?? 0).toFixed(1) : '—')),
                ]
              : [atText(at), 0, 'no data', ...claimStates.map(() => 'no data')],
          };
        })}
      >
        {reported === 0 ? (
          <Content component="p">No reports in this range.</Content>
        ) : (
          <Chart
            ariaTitle="Nodes and NodeClaims over time"
            ariaDesc={`Average node count and NodeClaims by state per step, ${range}; ${reported} steps with reports, ${gaps} without (gaps).${claimStates.length ? '' : ' No NodeClaim states in this range.'}`}
            width={width}
            height={220}
            scale={{ x: 'time', y: 'linear' }}
            domain={domain}
            minDomain={{ y: 0 }}
            padding={axisAndPadding}
            legendData={[
              { name: 'Nodes', symbol: { fill: COLORS.nodes } },
              ...claimStates.map((st) => ({
                name: `NodeClaims ${st}`,
                symbol: { fill: claimColor(st) },
              })),
            ]}
            legendPosition="bottom"
          >
            <ChartAxis tickFormat={tick} fixLabelOverlap />
            <ChartAxis
              dependentAxis
              showGrid
              tickFormat={(t: number) => (Number.isInteger(t) ? t : '')}
            />
            <ChartGroup>
              <ChartLine
                name="nodes"
                data={line((p) => p.nodes)}
                style={{ data: { stroke: COLORS.nodes } }}
              />
              <ChartScatter
                name="nodes-points"
                size={2}
                data={line((p) => p.nodes).filter((d) => d.y !== null)}
                style={{ data: { fill: COLORS.nodes } }}
              />
              {claimStates.map((st) => (
                <ChartLine
                  key={st}
                  name={`claims-${st}`}
                  data={line((p) => {
                    const claims = claimsOf(p);
                    return claims ? (claims[st] ?? 0) : null;
                  })}
                  style={{ data: { stroke: claimColor(st), strokeDasharray: '4,3' } }}
                />
              ))}
            </ChartGroup>
          </Chart>
        )}
      </Figure>
      <Figure
        id="csr-decisions"
        title="CSR decisions over time"
        caption={`certificate signing requests the approver decided, by decision and reason, ${range}.`}
        columns={['From', 'Decision', 'Reason', 'Count']}
        rows={csr.map((b) => ({
          key: `${b.at}|${b.decision}|${b.reason}`,
          cells: [atText(b.at), b.decision, b.reason, b.count],
        }))}
      >
        {csrTotal === 0 ? (
          <Content component="p" data-testid="chart-csr-decisions-empty">
            No CSR decisions in this range.
          </Content>
        ) : (
          <Chart
            ariaTitle="CSR decisions over time"
            ariaDesc={`${csrTotal} CSR decisions ${range}: ${series.map((s) => `${s} ${csr.filter((b) => `${b.decision}: ${b.reason}` === s).reduce((n, b) => n + b.count, 0)}`).join(', ')}.`}
            width={width}
            height={220}
            scale={{ x: 'time', y: 'linear' }}
            domain={domain}
            domainPadding={{ x: barWidth }}
            padding={axisAndPadding}
            legendData={series.map((s) => ({ name: s, symbol: { fill: colorOf(s) } }))}
            legendPosition="bottom"
          >
            <ChartAxis tickFormat={tick} fixLabelOverlap />
            <ChartAxis
              dependentAxis
              showGrid
              tickFormat={(t: number) => (Number.isInteger(t) ? t : '')}
            />
            <ChartStack>
              {series.map((s) => (
                <ChartBar
                  key={s}
                  name={s}
                  barWidth={barWidth}
                  style={{ data: { fill: colorOf(s) } }}
                  data={csr
                    .filter((b) => `${b.decision}: ${b.reason}` === s)
                    .map((b) => ({
                      x: new Date(Date.parse(b.at) + (step * 1000) / 2),
                      y: b.count,
                      label: `${atText(b.at)}: ${b.count} ${s}`,
                    }))}
                  labelComponent={<ChartTooltip constrainToVisibleArea />}
                />
              ))}
            </ChartStack>
          </Chart>
        )}
      </Figure>
    </div>
  );
}
