import { Alert, PageSection, Title } from '@patternfly/react-core';
import { Link } from '../lib/router.js';
import { useSession } from '../lib/session-context.js';
import { ApiTokens } from './administration/ApiTokens.js';
import { DeadLetters } from './administration/DeadLetters.js';
import { RegisterCluster } from './administration/RegisterCluster.js';

/** Tokens, registrations and dead letters: ADMIN only (the API refuses anyone else). */
export function Administration() {
  const { viewer } = useSession();
  if (viewer.role !== 'ADMIN') {
    return (
      <PageSection>
        <Title headingLevel="h1">Administration</Title>
        <Alert
          variant="info"
          isInline
          title="Administration needs the ADMIN role"
          className="fleet-gap"
        >
          Your token is {viewer.role}. <Link to="/">Back to the overview</Link>
        </Alert>
      </PageSection>
    );
  }
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Administration</Title>
      </PageSection>
      <PageSection>
        <ApiTokens />
        <RegisterCluster />
        <DeadLetters />
      </PageSection>
    </>
  );
}
