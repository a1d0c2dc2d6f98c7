import {
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Card,
  CardBody,
  CardTitle,
  CodeBlock,
  CodeBlockCode,
  Content,
  DescriptionList,
  Flex,
  Grid,
  GridItem,
  Label,
  PageSection,
  Skeleton,
  Title,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { stringify } from 'yaml';
import { ProfileDocument, RolloutChangedDocument } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { RolloutStateLabel } from '../components/RolloutStateLabel.js';
import { Term } from '../components/Term.js';
import { LiveUpdatesAlert } from '../components/LiveUpdatesAlert.js';
import { useQuery, useSubscription } from '../lib/hooks.js';
import { describeBinding, fieldLabel, formatValue, specEntries } from '../lib/profiles.js';
import { describeChange } from '../lib/rollout-plan.js';
import { Link } from '../lib/router.js';
import { isActive } from '../lib/rollout-state.js';

/** One profile: what it sets, its revisions, the clusters bound (on which revision), its rollout. */
export function ProfilePage({ name }: { name: string }) {
  const query = useQuery(ProfileDocument, { name });
  const profile = query.data?.profile;
  if (query.error && !profile) {
    return (
      <PageSection>
        <Alert variant="danger" isInline title="The profile could not be loaded">
          {describeRefusal(query.error)}
        </Alert>
      </PageSection>
    );
  }
  if (!profile) {
    return (
      <PageSection>
        <Skeleton height="300px" screenreaderText="Loading the profile" />
      </PageSection>
    );
  }
  const entries = specEntries(profile.spec);
  const settings = entries.filter((e) => !e.field.startsWith('nodePools.'));
  const nodePools = entries.filter((e) => e.field.startsWith('nodePools.'));
  const rollout = profile.rollout;
  return (
    <>
      <PageSection>
        <Breadcrumb>
          <BreadcrumbItem>
            <Link to="/profiles">Profiles</Link>
          </BreadcrumbItem>
          <BreadcrumbItem isActive>{profile.name}</BreadcrumbItem>
        </Breadcrumb>
        <Flex alignItems={{ default: 'alignItemsCenter' }} className="fleet-gap">
          <Title headingLevel="h1">{profile.name}</Title>
          {profile.deleting ? (
            <Label color="orange" isCompact>
              deleting
            </Label>
          ) : null}
        </Flex>
        {rollout && isActive(rollout.state) ? (
          <LiveRollout id={rollout.id} onChange={query.refetch} />
        ) : null}
      </PageSection>
      <PageSection>
        <Grid hasGutter>
          <GridItem md={6}>
            <Card>
              <CardTitle component="h2">Details</CardTitle>
              <CardBody>
                <DescriptionList isCompact isHorizontal>
                  <Term term="Selector">
                    <span data-testid="profile-selector">
                      {profile.selector || 'every cluster'}
                    </span>
                  </Term>
                  <Term term="Priority">{profile.priority}</Term>
                  <Term term="Revision">
                    <span data-testid="profile-revision">{profile.revision}</span>
                  </Term>
                  <Term term="Clusters bound">
                    <span data-testid="profile-bound">{describeBinding(profile)}</span>
                  </Term>
                  <Term term="Created">
                    {new Date(profile.createdAt).toLocaleString()} by {profile.createdBy}
                  </Term>
                  <Term term="Rollout">
                    {rollout ? (
                      <span data-testid="profile-rollout">
                        <Link to={`/rollouts/${encodeURIComponent(rollout.id)}`}>
                          {describeChange(rollout.change)}
                        </Link>{' '}
                        <RolloutStateLabel state={rollout.state} /> {rollout.counts.healthy} of{' '}
                        {rollout.counts.total} healthy
                      </span>
                    ) : (
                      'none yet: no cluster was affected'
                    )}
                  </Term>
                </DescriptionList>
              </CardBody>
            </Card>
          </GridItem>
          <GridItem md={6}>
            <Card>
              <CardTitle component="h2">Settings</CardTitle>
              <CardBody>
                {settings.length === 0 ? (
                  <Content component="p">
                    None: every setting falls through to a lower priority or the default.
                  </Content>
                ) : (
                  <Table aria-label="Profile settings" variant="compact">
                    <Thead>
                      <Tr>
                        <Th modifier="wrap">Setting</Th>
                        <Th modifier="wrap">Value</Th>
                      </Tr>
                    </Thead>
                    <Tbody>
                      {settings.map((e) => {
                        const value = formatValue(e.value);
                        return (
                          <Tr key={e.field} data-testid={`profile-setting-${e.field}`}>
                            <Td dataLabel="Setting">{fieldLabel(e.field)}</Td>
                            <Td dataLabel="Value" modifier="breakWord">
                              <span title={value.full}>{value.text}</span>
                            </Td>
                          </Tr>
                        );
                      })}
                    </Tbody>
                  </Table>
                )}
              </CardBody>
            </Card>
          </GridItem>
          <GridItem span={12}>
            <Card>
              <CardTitle component="h2">NodePools</CardTitle>
              <CardBody>
                {nodePools.length === 0 ? (
                  <Content component="p">None.</Content>
                ) : (
                  nodePools.map((e) => (
                    <div key={e.field} className="fleet-gap-bottom">
                      <Content component="h3">{fieldLabel(e.field)}</Content>
                      <CodeBlock>
                        <CodeBlockCode
                          className="fleet-manifest"
                          data-testid={`profile-${e.field.replace('.', '-')}`}
                        >
                          {stringify(e.value)}
                        </CodeBlockCode>
                      </CodeBlock>
                    </div>
                  ))
                )}
              </CardBody>
            </Card>
          </GridItem>
          <GridItem md={6}>
            <Card>
              <CardTitle component="h2">Clusters bound</CardTitle>
              <CardBody>
                {profile.clusters.length === 0 ? (
                  <Content component="p">None.</Content>
                ) : (
                  <Table aria-label="Clusters bound" variant="compact">
                    <Thead>
                      <Tr>
                        <Th modifier="wrap">Cluster</Th>
                        <Th modifier="wrap">Revision</Th>
                      </Tr>
                    </Thead>
                    <Tbody>
                      {profile.clusters.map((c) => (
                        <Tr key={c.clusterId} data-testid={`profile-cluster-${c.clusterName}`}>
                          <Td dataLabel="Cluster">
                            <Link to={`/clusters/${encodeURIComponent(c.clusterId)}`}>
                              {c.clusterName}
                            </Link>
                          </Td>
                          <Td dataLabel="Revision">
                            {c.revision}
                            {c.revision === profile.revision ? ' (current)' : ''}
                          </Td>
                        </Tr>
                      ))}
                    </Tbody>
                  </Table>
                )}
              </CardBody>
            </Card>
          </GridItem>
          <GridItem md={6}>
            <Card>
              <CardTitle component="h2">Revisions</CardTitle>
              <CardBody>
                <Table aria-label="Revisions" variant="compact">
                  <Thead>
                    <Tr>
                      <Th modifier="wrap">Revision</Th>
                      <Th modifier="wrap">Selector</Th>
                      <Th modifier="wrap">Priority</Th>
                      <Th modifier="wrap">Written</Th>
                    </Tr>
                  </Thead>
                  <Tbody>
                    {profile.revisions.map((r) => (
                      <Tr key={r.revision} data-testid={`profile-revision-${r.revision}`}>
                        <Td dataLabel="Revision">{r.revision}</Td>
                        <Td dataLabel="Selector">{r.selector || 'every cluster'}</Td>
                        <Td dataLabel="Priority">{r.priority}</Td>
                        <Td dataLabel="Written">{new Date(r.createdAt).toLocaleString()}</Td>
                      </Tr>
                    ))}
                  </Tbody>
                </Table>
              </CardBody>
            </Card>
          </GridItem>
        </Grid>
      </PageSection>
    </>
  );
}

/**
 * While its rollout runs, each of its events may bind clusters to the new revision: the profile
 * is asked again (its counts, its clusters' revisions, the rollout's state).
 */
function LiveRollout({ id, onChange }: { id: string; onChange: () => void }) {
  const error = useSubscription(RolloutChangedDocument, { id }, onChange);
  return <LiveUpdatesAlert error={error} />;
}
