import {
  Alert,
  Brand,
  Button,
  Content,
  Label,
  Masthead,
  MastheadBrand,
  MastheadContent,
  MastheadMain,
  Nav,
  NavItem,
  NavList,
  Page,
  PageSidebar,
  PageSidebarBody,
  Spinner,
  Toolbar,
  ToolbarContent,
  ToolbarItem,
} from '@patternfly/react-core';
import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { ApiError, createFleetClient, type FleetClient } from './graphql/client.js';
import { SignOutDocument, ViewerDocument, type ViewerQuery } from './graphql/generated.js';
import {
  clearToken,
  readSignOutNotice,
  readToken,
  storeSignOutNotice,
  storeToken,
  takeSignInFragment,
} from './lib/session.js';
import { SessionContext, useSession, type Session } from './lib/session-context.js';
import { Link, Router, useRouter } from './lib/router.js';
import { SignIn } from './pages/SignIn.js';

// Each page is its own chunk, loaded when first shown: the first paint loads only the shell (and
// the sign-in form) plus the page it needs. apps/console/budget.json caps what index.html loads,
// and test/console/bundle-budget.e2e-spec.ts enforces it.
const Overview = lazy(() => import('./pages/Overview.js').then((m) => ({ default: m.Overview })));
const Clusters = lazy(() => import('./pages/Clusters.js').then((m) => ({ default: m.Clusters })));
const ClusterPage = lazy(() =>
  import('./pages/ClusterPage.js').then((m) => ({ default: m.ClusterPage })),
);
const Rollouts = lazy(() => import('./pages/Rollouts.js').then((m) => ({ default: m.Rollouts })));
const RolloutNew = lazy(() =>
  import('./pages/RolloutNew.js').then((m) => ({ default: m.RolloutNew })),
);
const RolloutPage = lazy(() =>
  import('./pages/RolloutPage.js').then((m) => ({ default: m.RolloutPage })),
);
const Administration = lazy(() =>
  import('./pages/Administration.js').then((m) => ({ default: m.Administration })),
);

type Viewer = ViewerQuery['viewer'];

// Read once per page load, before the first render reads the stored token (StrictMode renders
// twice; the fragment is gone after the first read).
let signInFragment: { error: string | null } | undefined;
const fromSignIn = () => (signInFragment ??= takeSignInFragment());

export function App() {
  return (
    <Router>
      <Console />
    </Router>
  );
}

function Console() {
  const [token, setToken] = useState<string | null>(() => (fromSignIn(), readToken()));
  const [viewer, setViewer] = useState<Viewer | null>(null);
  // A refused sign-in is the news; an older sign-out notice would only compete with it.
  const [notice, setNotice] = useState<string | null>(() =>
    fromSignIn().error ? (storeSignOutNotice(null), null) : readSignOutNotice(),
  );
  const [signInError] = useState<string | null>(() => fromSignIn().error);

  const signOut = useCallback((why?: string) => {
    clearToken();
    setToken(null);
    setViewer(null);
    storeSignOutNotice(why ?? null);
    setNotice(why ?? null);
  }, []);

  const client = useMemo<FleetClient | null>(
    () =>
      token
        ? createFleetClient(token, () =>
            signOut('Your session ended: the API no longer accepts this token.'),
          )
        : null,
    [token, signOut],
  );
  useEffect(() => () => client?.close(), [client]);

  // A stored token is checked again on load: it may have been revoked since.
  useEffect(() => {
    if (!client || viewer) return;
    client.request(ViewerDocument, {}).then(
      (data) => setViewer(data.viewer),
      (err: unknown) => {
        // UNAUTHENTICATED has already ended the session, through the client, with its notice.
        if (err instanceof ApiError && err.code === 'UNAUTHENTICATED') return;
        signOut(
          `Your token could not be checked: ${err instanceof Error ? err.message : String(err)}`,
        );
      },
    );
  }, [client, viewer, signOut]);

  if (!token || !client) {
    return (
      <SignIn
        notice={notice}
        providerError={signInError}
        onSignIn={async (secret) => {
          const probe = createFleetClient(secret, () => undefined);
          try {
            const data = await probe.request(ViewerDocument, {});
            storeToken(secret);
            storeSignOutNotice(null);
            setNotice(null);
            setViewer(data.viewer);
            setToken(secret);
          } finally {
            probe.close();
          }
        }}
      />
    );
  }
  if (!viewer) {
    return (
      <main className="fleet-loading">
        <Spinner aria-label="Checking your token" />
      </main>
    );
  }
  const session: Session = {
    client,
    viewer,
    canMutate: viewer.role !== 'VIEWER',
    // A session from the identity provider ends on the API too; a pasted API token is only
    // forgotten by this tab (automation may share it).
    signOut: () => {
      if (!viewer.session) return signOut();
      void client
        .request(SignOutDocument, {})
        .catch(() => undefined)
        .finally(() => signOut());
    },
  };
  return (
    <SessionContext.Provider value={session}>
      <Shell />
    </SessionContext.Provider>
  );
}

function Shell() {
  const { path } = useRouter();
  const session = useSession();
  const clusterMatch = /^\/clusters\/([^/]+)$/.exec(path);
  const rolloutMatch = /^\/rollouts\/([^/]+)$/.exec(path);
  const masthead = (
    <Masthead>
      <MastheadMain>
        <MastheadBrand>
          <Link to="/" className="fleet-brand">
            <Brand src={LOGO} alt="" heights={{ default: '24px' }} />
            <span>Karpenter Fleet</span>
          </Link>
        </MastheadBrand>
      </MastheadMain>
      <MastheadContent>
        <Toolbar isFullHeight>
          <ToolbarContent>
            <ToolbarItem align={{ default: 'alignEnd' }}>
              <Content component="p" className="fleet-user">
                {session.viewer.name}{' '}
                <Label color={session.viewer.role === 'VIEWER' ? 'grey' : 'blue'} isCompact>
                  {session.viewer.role}
                </Label>
                {session.viewer.scoped ? (
                  <Label isCompact variant="outline">
                    scoped
                  </Label>
                ) : null}
              </Content>
            </ToolbarItem>
            <ToolbarItem>
              <Button variant="secondary" onClick={session.signOut}>
                Sign out
              </Button>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
      </MastheadContent>
    </Masthead>
  );
  const sidebar = (
    <PageSidebar>
      <PageSidebarBody>
        <Nav aria-label="Console">
          <NavList>
            <NavItem isActive={path === '/'}>
              <Link to="/" aria-current={path === '/' ? 'page' : undefined}>
                Overview
              </Link>
            </NavItem>
            <NavItem isActive={path.startsWith('/clusters')}>
              <Link to="/clusters" aria-current={path === '/clusters' ? 'page' : undefined}>
                Clusters
              </Link>
            </NavItem>
            <NavItem isActive={path.startsWith('/rollouts')}>
              <Link to="/rollouts" aria-current={path === '/rollouts' ? 'page' : undefined}>
                Rollouts
              </Link>
            </NavItem>
            {session.viewer.role === 'ADMIN' ? (
              <NavItem isActive={path === '/administration'}>
                <Link
                  to="/administration"
                  aria-current={path === '/administration' ? 'page' : undefined}
                >
                  Administration
                </Link>
              </NavItem>
            ) : null}
          </NavList>
        </Nav>
      </PageSidebarBody>
    </PageSidebar>
  );
  let content;
  if (path === '/') content = <Overview />;
  else if (path === '/clusters') content = <Clusters />;
  else if (clusterMatch) content = <ClusterPage id={decodeURIComponent(clusterMatch[1]!)} />;
  else if (path === '/rollouts') content = <Rollouts />;
  else if (path === '/rollouts/new') content = <RolloutNew />;
  else if (rolloutMatch) content = <RolloutPage id={decodeURIComponent(rolloutMatch[1]!)} />;
  else if (path === '/administration') content = <Administration />;
  else
    content = (
      <Alert variant="warning" isInline title="No such page">
        <Link to="/">Back to the overview</Link>
      </Alert>
    );
  return (
    <Page masthead={masthead} sidebar={sidebar} isManagedSidebar>
      <Suspense
        fallback={
          <div className="fleet-page-loading">
            <Spinner aria-label="Loading the page" />
          </div>
        }
      >
        {content}
      </Suspense>
    </Page>
  );
}

// A small mark (Karpenter's k in a node-like hexagon), inline so the console has no asset to miss.
const LOGO =
  'data:image/svg+xml;utf8,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path fill="#e00" d="M12 1l10 6v10l-10 6-10-6V7z"/><path fill="#fff" d="M8 6h2v5l4-5h2.5l-4.2 5.2L16.8 18h-2.5l-3.3-5.2-1 1.2V18H8z"/></svg>',
  );
