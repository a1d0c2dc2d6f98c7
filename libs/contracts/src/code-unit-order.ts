/**
 * Strings in code-unit order, as Go's sort.Strings and the API server order names: the same on
 * every machine. `localeCompare` depends on the runtime's ICU data and default locale (so two
 * sidecars could sort, and digest, one report differently), and its first call maps the ICU
 * collation tables into memory (~8 MB of the sidecar's RSS at rest, issue 48 target 5).
 */
export const compareCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
