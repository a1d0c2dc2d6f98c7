// The validator lives in libs/desired-state so kfleet apply checks YAML with the same CRDs and
// rules before it sends anything; the API's imports keep this path.
export { KarpenterSpecValidator, type SpecViolation } from '@fleet/desired-state';
