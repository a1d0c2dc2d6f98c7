import {
  Alert,
  EmptyState,
  EmptyStateBody,
  Label,
  PageSection,
  Skeleton,
  Title,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { ProfilesDocument } from '../graphql/generated.js';
import { describeRefusal } from '../graphql/client.js';
import { useQuery } from '../lib/hooks.js';
import { describeBinding } from '../lib/profiles.js';
import { Link } from '../lib/router.js';

/** Every profile within the session's scope, by priority then name (as the API orders them). */
export function Profiles() {
  const query = useQuery(ProfilesDocument, {});
  const profiles = query.data?.profiles;
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Profiles</Title>
      </PageSection>
      <PageSection>
        {query.error ? (
          <Alert variant="danger" isInline title="Profiles could not be loaded">
            {describeRefusal(query.error)}
          </Alert>
        ) : null}
        {!profiles && !query.error ? (
          <Skeleton height="200px" screenreaderText="Loading profiles" />
        ) : null}
        {profiles && profiles.length === 0 ? (
          <EmptyState titleText="No profiles" headingLevel="h2">
            <EmptyStateBody>
              A profile is Karpenter desired state bound to every cluster its label selector
              matches. Create one with <code>kfleet profiles create</code> or the createProfile
              mutation.
            </EmptyStateBody>
          </EmptyState>
        ) : null}
        {profiles && profiles.length > 0 ? (
          <Table aria-label="Profiles" variant="compact">
            <Thead>
              <Tr>
                <Th modifier="wrap">Name</Th>
                <Th modifier="wrap">Selector</Th>
                <Th modifier="wrap">Priority</Th>
                <Th modifier="wrap">Revision</Th>
                <Th modifier="wrap">Clusters bound</Th>
                <Th modifier="wrap">Updated</Th>
              </Tr>
            </Thead>
            <Tbody>
              {profiles.map((p) => (
                <Tr key={p.uid} data-testid={`profile-row-${p.name}`}>
                  <Td dataLabel="Name">
                    <Link to={`/profiles/${encodeURIComponent(p.name)}`}>{p.name}</Link>{' '}
                    {p.deleting ? (
                      <Label color="orange" isCompact>
                        deleting
                      </Label>
                    ) : null}
                  </Td>
                  <Td dataLabel="Selector">{p.selector || 'every cluster'}</Td>
                  <Td dataLabel="Priority">{p.priority}</Td>
                  <Td dataLabel="Revision">{p.revision}</Td>
                  <Td dataLabel="Clusters bound">{describeBinding(p)}</Td>
                  <Td dataLabel="Updated">{new Date(p.updatedAt).toLocaleString()}</Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        ) : null}
      </PageSection>
    </>
  );
}
