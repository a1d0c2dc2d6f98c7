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
import {
  lazy,
  Suspense,
  useCallback,
  useEffect,
  useMemo,
  useState,
  type ComponentType,
} from 'react';
import { ApiError, createFleetClient, type FleetClient } from './graphql/client.js';
import {
  ClustersDocument,
  SignOutDocument,
  ViewerDocument,
  type ViewerQuery,
} from './graphql/generated.js';
import { clustersQueryVariables, parseClusterListState } from './lib/url-state.js';
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
// and test/console/bundle-budget.e2e-spec.ts enforces it. The page a load lands on is fetched
// from the start, beside the token check (preloadPageFor), and once its chunk is in it renders
// without suspending (no spinner, and none of React's hold on revealing a suspended page).
function page<P extends object>(load: () => Promise<ComponentType<P>>) {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  const preload = () =>
    (loading ??= load().then(
      (component) => (loaded = component),
      (err: unknown) => {
        loading = undefined; // a later render tries again (and its Suspense shows the failure)
        throw err;
      },
    ));
  const Lazy = lazy(() => preload().then((component) => ({ default: component })));
  const Page = (props: P) => {
    const Component = loaded ?? Lazy;
    return <Component {...props} />;
  };
  return Object.assign(Page, { preload });
}

const Overview = page(() => import('./pages/Overview.js').then((m) => m.Overview));
const Clusters = page(() => import('./pages/Clusters.js').then((m) => m.Clusters));
const ClusterPage = page(() => import('./pages/ClusterPage.js').then((m) => m.ClusterPage));
const Rollouts = page(() => import('./pages/Rollouts.js').then((m) => m.Rollouts));
const RolloutNew = page(() => import('./pages/RolloutNew.js').then((m) => m.RolloutNew));
const RolloutPage = page(() => import('./pages/RolloutPage.js').then((m) => m.RolloutPage));
const Strategies = page(() => import('./pages/Strategies.js').then((m) => m.Strategies));
const Profiles = page(() => import('./pages/Profiles.js').then((m) => m.Profiles));
const ProfilePage = page(() => import('./pages/ProfilePage.js').then((m) => m.ProfilePage));
const Administration = page(() =>
  import('./pages/Administration.js').then((m) => m.Administration),
);

/** The page a path shows, if any (the Shell's routes). */
function pageFor(path: string): { preload: () => Promise<unknown> } | undefined {
  if (path === '/') return Overview;
  if (path === '/clusters') return Clusters;
  if (/^\/clusters\/[^/]+$/.test(path)) return ClusterPage;
  if (path === '/rollouts') return Rollouts;
  if (path === '/rollouts/new') return RolloutNew;
  if (/^\/rollouts\/[^/]+$/.test(path)) return RolloutPage;
  if (path === '/strategies') return Strategies;
  if (path === '/profiles') return Profiles;
  if (/^\/profiles\/[^/]+$/.test(path)) return ProfilePage;
  if (path === '/administration') return Administration;
  return undefined;
}

/** Starts loading the chunk of the page at `path`; settles (never rejects) when it is in. */
const preloadPageFor = (path: string): Promise<unknown> =>
  pageFor(path)
    ?.preload()
    .catch(() => undefined) ?? Promise.resolve();

// With a session stored, the page this load lands on starts loading now, as the shell's scripts
// run, not after React's first render.
if (readToken()) void preloadPageFor(window.location.pathname);

/** Sends, ahead of the page, the query the page at `path` asks first. */
function prefetchDataFor(client: FleetClient, path: string, search: string) {
  if (path === '/clusters') {
    client.prefetch(ClustersDocument, clustersQueryVariables(parseClusterListState(search)));
  }
}

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

  // A stored token is checked again on load: it may have been revoked since. Beside that check,
  // not after it, go the page's chunk and its first query; the shell shows once the viewer and
  // the chunk are in (the query's answer is the page's to wait for). A refused token ends the
  // session through the client, whichever request hears it first.
  useEffect(() => {
    if (!client || viewer) return;
    const { pathname, search } = window.location;
    prefetchDataFor(client, pathname, search);
    let current = true;
    Promise.all([client.request(ViewerDocument, {}), preloadPageFor(pathname)]).then(
      ([data]) => {
        if (current) setViewer(data.viewer);
      },
      (err: unknown) => {
        // UNAUTHENTICATED has already ended the session, through the client, with its notice.
        if (!current || (err instanceof ApiError && err.code === 'UNAUTHENTICATED')) return;
        signOut(
          `Your token could not be checked: ${err instanceof Error ? err.message : String(err)}`,
        );
      },
    );
    return () => {
      current = false;
    };
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
  const profileMatch = /^\/profiles\/([^/]+)$/.exec(path);
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
            <NavItem isActive={path === '/strategies'}>
              <Link to="/strategies" aria-current={path === '/strategies' ? 'page' : undefined}>
                Strategies
              </Link>
            </NavItem>
            <NavItem isActive={path.startsWith('/profiles')}>
              <Link to="/profiles" aria-current={path === '/profiles' ? 'page' : undefined}>
                Profiles
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
  else if (path === '/strategies') content = <Strategies />;
  else if (path === '/profiles') content = <Profiles />;
  else if (profileMatch) content = <ProfilePage name={decodeURIComponent(profileMatch[1]!)} />;
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
