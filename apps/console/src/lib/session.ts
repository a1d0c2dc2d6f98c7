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
