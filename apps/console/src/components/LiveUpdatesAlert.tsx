import { Alert } from '@patternfly/react-core';
import type { ApiError } from '../graphql/client.js';

/** Shown while a page's subscription is down: what is on screen may be out of date. */
export function LiveUpdatesAlert({ error }: { error: ApiError | undefined }) {
  if (!error) return null;
  return (
    <Alert variant="warning" isInline title="Live updates are interrupted" className="fleet-gap">
      {error.message}
    </Alert>
  );
}
