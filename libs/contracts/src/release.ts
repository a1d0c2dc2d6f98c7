/**
 * The fleet's release: what `kfleet version` prints for the client and the API's `/version`
 * answers for the server. Kept equal to package.json's version by release.spec.ts, since the
 * built CLI and API cannot rely on finding package.json beside them.
 */
export const FLEET_RELEASE = '0.1.0';
