import {
  ActionGroup,
  Alert,
  Button,
  Form,
  FormGroup,
  FormHelperText,
  HelperText,
  HelperTextItem,
  LoginPage,
  TextInput,
} from '@patternfly/react-core';
import { useState } from 'react';

export function SignIn({
  notice,
  onSignIn,
}: {
  notice: string | null;
  onSignIn: (token: string) => Promise<void>;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  return (
    <LoginPage
      loginTitle="Sign in to Karpenter Fleet"
      loginSubtitle="With an API token (kfleet tokens create, or the fleet's bootstrap token). It is kept for this browser tab only."
    >
      {notice ? <Alert variant="info" isInline title={notice} className="fleet-gap" /> : null}
      <Form
        onSubmit={(event) => {
          event.preventDefault();
          setPending(true);
          setError(null);
          onSignIn(token.trim())
            .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err)))
            .finally(() => setPending(false));
        }}
      >
        <FormGroup label="API token" isRequired fieldId="token">
          <TextInput
            id="token"
            name="token"
            type="password"
            autoComplete="off"
            isRequired
            value={token}
            validated={error ? 'error' : 'default'}
            onChange={(_event, value) => setToken(value)}
          />
          {error ? (
            <FormHelperText>
              <HelperText>
                <HelperTextItem variant="error">{error}</HelperTextItem>
              </HelperText>
            </FormHelperText>
          ) : null}
        </FormGroup>
        <ActionGroup>
          <Button
            type="submit"
            variant="primary"
            isBlock
            isLoading={pending}
            isDisabled={!token.trim() || pending}
          >
            Sign in
          </Button>
        </ActionGroup>
      </Form>
    </LoginPage>
  );
}
