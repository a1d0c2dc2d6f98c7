/**
 * The API token lives in sessionStorage only: it ends with the browser tab, is never written to
 * disk as a long-lived credential, and is not sent by the browser on its own (no cookie), which
 * keeps the API's CSRF posture unchanged.
 */
const KEY = 'karpenter-fleet.token';

export const readToken = (): string | null => sessionStorage.getItem(KEY);
export const storeToken = (token: string): void => sessionStorage.setItem(KEY, token);
export const clearToken = (): void => sessionStorage.removeItem(KEY);
