import {
  Alert,
  Button,
  Checkbox,
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
  EmptyState,
  EmptyStateBody,
  FormSelect,
  FormSelectOption,
  PageSection,
  SearchInput,
  Skeleton,
  Title,
  Toolbar,
  ToolbarContent,
  ToolbarGroup,
  ToolbarItem,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr, type ThProps } from '@patternfly/react-table';
import { useState } from 'react';
import { ClusterChangedDocument, ClustersDocument } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { useQuery, useSubscription } from '../lib/hooks.js';
import { Link, useRouter } from '../lib/router.js';
import {
  clustersQueryVariables,
  formatClusterListState,
  parseClusterListState,
  type ClusterListState,
  type SortField,
} from '../lib/url-state.js';
import { Labels, StateLabel, When } from '../components/StateLabel.js';
import { LiveUpdatesAlert } from '../components/LiveUpdatesAlert.js';
import { SelectorInput } from '../components/SelectorInput.js';
import { useSession } from '../lib/session-context.js';
import { formatRolloutPicks } from '../lib/url-state.js';

export function Clusters() {
  const { search, navigate } = useRouter();
  const state = parseClusterListState(search);
  const { canMutate } = useSession();
  // Picked rows by ID (with their names, for the rollout form); kept across pages and filters,
  // so a selection can be built from several views of the table.
  const [picked, setPicked] = useState<ReadonlyMap<string, string>>(new Map());
  const pick = (rows: { id: string; name: string }[], on: boolean) =>
    setPicked((current) => {
      const next = new Map(current);
      for (const row of rows) {
        if (on) next.set(row.id, row.name);
        else next.delete(row.id);
      }
      return next;
    });

  // Rows whose details (topology, region, labels) are open: the less important columns live there
  // so the table fits 1280 px (issue 47).
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  const update = (change: Partial<ClusterListState>, keepPage = false, replace = false) => {
    const next = { ...state, ...change };
    if (!keepPage) {
      next.after = null;
      next.before = null;
    }
    navigate(`/clusters${formatClusterListState(next)}`, { replace });
  };

  const variables = clustersQueryVariables(state);
  const filter = variables.filter ?? {};
  const query = useQuery(ClustersDocument, variables);
  // Rows change in place; a cluster that newly matches shows up on the next page load rather
  // than shifting the rows the SRE is reading.
  const liveError = useSubscription(ClusterChangedDocument, { filter }, (event) =>
    query.setData((data) =>
      data
        ? {
            clusters: {
              ...data.clusters,
              nodes: data.clusters.nodes.map((c) =>
                c.id === event.clusterChanged.id ? event.clusterChanged : c,
              ),
            },
          }
        : data,
    ),
  );

  const sortBy = (field: SortField, index: number): ThProps['sort'] => ({
    sortBy: {
      index: state.sort === field ? index : undefined,
      direction: state.desc ? 'desc' : 'asc',
    },
    onSort: (_event, _index, direction) =>
      update({ sort: field, desc: String(direction) === 'desc' }),
    columnIndex: index,
  });

  const connection = query.data?.clusters;
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Clusters</Title>
      </PageSection>
      <PageSection>
        <Toolbar>
          <ToolbarContent>
            <ToolbarGroup variant="filter-group">
              <ToolbarItem>
                <SelectorInput
                  value={state.selector}
                  onApply={(selector) => update({ selector })}
                />
              </ToolbarItem>
              <ToolbarItem>
                <SearchInput
                  aria-label="Name contains"
                  placeholder="Name contains"
                  value={state.name}
                  // Typing replaces the history entry: Back leaves the search, not one letter.
                  onChange={(_e, v) => update({ name: v }, false, true)}
                  onClear={() => update({ name: '' })}
                />
              </ToolbarItem>
              <ToolbarItem>
                <FormSelect
                  aria-label="Platform"
                  value={state.platform}
                  onChange={(_e, v) => update({ platform: v as ClusterListState['platform'] })}
                >
                  <FormSelectOption value="" label="Any platform" />
                  <FormSelectOption value="AWS" label="AWS" />
                  <FormSelectOption value="AZURE" label="Azure" />
                  <FormSelectOption value="CAPI" label="Cluster API" />
                </FormSelect>
              </ToolbarItem>
              <ToolbarItem>
                <FormSelect
                  aria-label="Topology"
                  value={state.topology}
                  onChange={(_e, v) => update({ topology: v as ClusterListState['topology'] })}
                >
                  <FormSelectOption value="" label="Any topology" />
                  <FormSelectOption value="STANDALONE" label="Standalone" />
                  <FormSelectOption value="HOSTED" label="Hosted" />
                </FormSelect>
              </ToolbarItem>
              <ToolbarItem alignSelf="center">
                <Checkbox
                  id="filter-drifted"
                  label="Drifted only"
                  isChecked={state.drifted}
                  onChange={(_e, drifted) => update({ drifted })}
                />
              </ToolbarItem>
            </ToolbarGroup>
            {canMutate ? (
              <ToolbarItem>
                <Button
                  variant="primary"
                  data-mutates
                  isDisabled={picked.size === 0}
                  onClick={() =>
                    navigate(`/rollouts/new${formatRolloutPicks(state.selector, picked)}`)
                  }
                >
                  {picked.size ? `Start rollout (${picked.size} selected)` : 'Start rollout'}
                </Button>
              </ToolbarItem>
            ) : null}
            {canMutate && picked.size ? (
              <ToolbarItem>
                <Button variant="link" onClick={() => setPicked(new Map())}>
                  Clear selection
                </Button>
              </ToolbarItem>
            ) : null}
            <ToolbarItem align={{ default: 'alignEnd' }}>
              <span data-testid="cluster-total">
                {connection
                  ? // Past the API's count limit the total is a lower bound (issue 48).
                    `${connection.totalCount}${connection.totalCountIsExact ? '' : '+'} cluster${connection.totalCount === 1 && connection.totalCountIsExact ? '' : 's'}`
                  : ''}
              </span>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
        {query.error ? (
          <Alert variant="danger" isInline title="Clusters could not be loaded">
            {describeRefusal(query.error)}
          </Alert>
        ) : null}
        {!query.error ? <LiveUpdatesAlert error={liveError} /> : null}
        {!connection && !query.error ? (
          <Skeleton height="200px" screenreaderText="Loading clusters" />
        ) : null}
        {connection && !query.error && connection.nodes.length === 0 ? (
          <EmptyState titleText="No clusters match" headingLevel="h2">
            <EmptyStateBody>Change or clear the filters.</EmptyStateBody>
          </EmptyState>
        ) : null}
        {connection && !query.error && connection.nodes.length > 0 ? (
          <Table aria-label="Clusters" variant="compact" className="fleet-clusters-table">
            <Thead>
              <Tr>
                <Th screenReaderText="Details" />
                {canMutate ? (
                  <Th
                    select={{
                      onSelect: (_e, on) => pick(connection.nodes, on),
                      isSelected: connection.nodes.every((c) => picked.has(c.id)),
                    }}
                    aria-label="Select all rows on this page"
                  />
                ) : null}
                <Th modifier="wrap" sort={sortBy('NAME', 0)}>
                  Name
                </Th>
                <Th modifier="wrap">Health</Th>
                <Th modifier="wrap">Platform</Th>
                <Th modifier="wrap">Karpenter</Th>
                <Th modifier="wrap">Cluster Autoscaler</Th>
                <Th modifier="wrap">Generation applied</Th>
                <Th modifier="wrap" sort={sortBy('LAST_REPORT', 8)}>
                  Last report
                </Th>
                <Th modifier="wrap" sort={sortBy('CREATED_AT', 9)}>
                  Registered
                </Th>
              </Tr>
            </Thead>
            {connection.nodes.map((c, rowIndex) => {
              const open = expanded.has(c.id);
              return (
                <Tbody key={c.id} isExpanded={open}>
                  <Tr data-testid={`cluster-row-${c.name}`}>
                    <Td
                      expand={{
                        rowIndex,
                        isExpanded: open,
                        onToggle: () => toggle(c.id),
                        expandId: `cluster-details-${rowIndex}`,
                      }}
                    />
                    {canMutate ? (
                      <Td
                        select={{
                          rowIndex,
                          onSelect: (_e, on) => pick([c], on),
                          isSelected: picked.has(c.id),
                        }}
                      />
                    ) : null}
                    <Td dataLabel="Name">
                      <Link to={`/clusters/${encodeURIComponent(c.id)}`}>{c.name}</Link>
                    </Td>
                    <Td dataLabel="Health">
                      <StateLabel cluster={c} />
                    </Td>
                    <Td dataLabel="Platform">{c.platform}</Td>
                    <Td dataLabel="Karpenter">{c.karpenter.enabled ? 'Enabled' : 'Disabled'}</Td>
                    <Td dataLabel="Cluster Autoscaler">{c.karpenter.clusterAutoscalerMode}</Td>
                    <Td dataLabel="Generation applied" data-testid="generation-sync">
                      {c.status.observedGeneration} of {c.karpenter.generation}
                    </Td>
                    <Td dataLabel="Last report">
                      <When at={c.status.lastReportAt} />
                    </Td>
                    <Td dataLabel="Registered">
                      <When at={c.createdAt} />
                    </Td>
                  </Tr>
                  <Tr isExpanded={open} data-testid={`cluster-details-${c.name}`}>
                    <Td colSpan={canMutate ? 10 : 9}>
                      {open ? (
                        <DescriptionList isHorizontal isCompact isAutoFit>
                          <DescriptionListGroup>
                            <DescriptionListTerm>Topology</DescriptionListTerm>
                            <DescriptionListDescription>{c.topology}</DescriptionListDescription>
                          </DescriptionListGroup>
                          <DescriptionListGroup>
                            <DescriptionListTerm>Region</DescriptionListTerm>
                            <DescriptionListDescription>{c.region}</DescriptionListDescription>
                          </DescriptionListGroup>
                          <DescriptionListGroup>
                            <DescriptionListTerm>Labels</DescriptionListTerm>
                            <DescriptionListDescription>
                              <Labels labels={c.labels} />
                            </DescriptionListDescription>
                          </DescriptionListGroup>
                          <DescriptionListGroup>
                            <DescriptionListTerm>Generation sync</DescriptionListTerm>
                            <DescriptionListDescription>
                              {c.generationSync}
                            </DescriptionListDescription>
                          </DescriptionListGroup>
                        </DescriptionList>
                      ) : null}
                    </Td>
                  </Tr>
                </Tbody>
              );
            })}
          </Table>
        ) : null}
        {connection && !query.error ? (
          <div className="fleet-pager">
            <Button
              variant="secondary"
              isDisabled={
                !(state.after || state.before) ||
                (!!state.before && !connection.pageInfo.hasPreviousPage)
              }
              onClick={() => update({ before: connection.pageInfo.startCursor, after: null }, true)}
            >
              Previous
            </Button>
            <Button
              variant="secondary"
              isDisabled={!(connection.pageInfo.hasNextPage || state.before)}
              onClick={() => update({ after: connection.pageInfo.endCursor, before: null }, true)}
            >
              Next
            </Button>
          </div>
        ) : null}
      </PageSection>
    </>
  );
}
