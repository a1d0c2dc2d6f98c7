/**
 * The API token lives in sessionStorage only: it ends with the browser tab, is never written to
 * disk as a long-lived credential, and is not sent by the browser on its own (no cookie), which
 * keeps the API's CSRF posture unchanged.
 */
const KEY = 'karpenter-fleet.token';

export const readToken = (): string | null => sessionStorage.getItem(KEY);
export const storeToken = (token: string): void => sessionStorage.setItem(KEY, token);
export const clearToken = (): void => sessionStorage.removeItem(KEY);

// Why the session ended outlives a reload: a tab signed out by one of its own requests (a
// subscription refused after revocation, say) and then reloaded still tells the user why.
const NOTICE_KEY = 'karpenter-fleet.sign-out-notice';

export const readSignOutNotice = (): string | null => sessionStorage.getItem(NOTICE_KEY);
export const storeSignOutNotice = (notice: string | null): void => {
  if (notice) sessionStorage.setItem(NOTICE_KEY, notice);
  else sessionStorage.removeItem(NOTICE_KEY);
};

/** The fragment keys the API's OIDC callback (apps/api/src/oidc) sends the browser back with. */
const SESSION_FRAGMENT = 'session';
const ERROR_FRAGMENT = 'oidc-error';

/**
 * Takes what the API's OIDC sign-in left in the URL fragment (which no server, log or Referer
 * sees): a session token is stored like a pasted API token, a refusal is returned for the
 * sign-in page. The fragment is removed from the address bar and history at once.
 */
export function takeSignInFragment(location: Location = window.location): {
  error: string | null;
} {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const session = params.get(SESSION_FRAGMENT);
  const error = params.get(ERROR_FRAGMENT);
  if (session === null && error === null) return { error: null };
  window.history.replaceState(window.history.state, '', `${location.pathname}${location.search}`);
  if (session) {
    storeToken(session);
    storeSignOutNotice(null);
  }
  return { error };
}
