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
import { useEffect, useState } from 'react';

/** What GET /auth/oidc says: whether the fleet signs people in with an identity provider. */
interface OidcProvider {
  enabled: boolean;
  providerName: string | null;
  loginPath: string | null;
}

function useOidcProvider(): OidcProvider | null {
  const [provider, setProvider] = useState<OidcProvider | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    fetch('/auth/oidc', { signal: abort.signal })
      .then((res) => (res.ok ? (res.json() as Promise<OidcProvider>) : null))
      .then((body) => setProvider(body?.enabled ? body : null))
      // An API without OIDC (or an older one) leaves the token form alone.
      .catch(() => undefined);
    return () => abort.abort();
  }, []);
  return provider;
}

export function SignIn({
  notice,
  providerError,
  onSignIn,
}: {
  notice: string | null;
  /** Why the identity provider's sign-in was refused, as the API said it. */
  providerError: string | null;
  onSignIn: (token: string) => Promise<void>;
}) {
  const provider = useOidcProvider();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  return (
    <LoginPage
      loginTitle="Sign in to Karpenter Fleet"
      loginSubtitle={
        provider
          ? `With your ${provider.providerName} account, or an API token. Either is kept for this browser tab only.`
          : "With an API token (kfleet tokens create, or the fleet's bootstrap token). It is kept for this browser tab only."
      }
    >
      {notice ? <Alert variant="info" isInline title={notice} className="fleet-gap" /> : null}
      {providerError ? (
        <Alert variant="danger" isInline title="Sign-in refused" className="fleet-gap">
          {providerError}
        </Alert>
      ) : null}
      {provider?.loginPath ? (
        <Button
          component="a"
          href={provider.loginPath}
          variant="primary"
          isBlock
          className="fleet-gap"
        >
          Sign in with {provider.providerName}
        </Button>
      ) : null}
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
            variant={provider ? 'secondary' : 'primary'}
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
