import type { ClusterFilter, ClustersQueryVariables } from '../graphql/generated.js';

export type Platform = 'AWS' | 'AZURE' | 'CAPI';
export type Topology = 'STANDALONE' | 'HOSTED';
export type SortField = 'NAME' | 'CREATED_AT' | 'LAST_REPORT';

/** The clusters page's filters, sort and page, as they live in the URL (shareable, reloadable). */
export interface ClusterListState {
  selector: string;
  name: string;
  platform: Platform | '';
  topology: Topology | '';
  /** Only clusters reporting hand edits of what the fleet manages (Drifted=True). */
  drifted: boolean;
  sort: SortField;
  desc: boolean;
  after: string | null;
  before: string | null;
}

const PLATFORMS: Platform[] = ['AWS', 'AZURE', 'CAPI'];
const TOPOLOGIES: Topology[] = ['STANDALONE', 'HOSTED'];
const SORTS: SortField[] = ['NAME', 'CREATED_AT', 'LAST_REPORT'];

const oneOf = <T extends string>(values: T[], v: string | null): T | '' =>
  values.includes(v as T) ? (v as T) : '';

export function parseClusterListState(search: string): ClusterListState {
  const q = new URLSearchParams(search);
  return {
    selector: q.get('selector') ?? '',
    name: q.get('name') ?? '',
    platform: oneOf(PLATFORMS, q.get('platform')),
    topology: oneOf(TOPOLOGIES, q.get('topology')),
    drifted: q.get('drifted') === 'true',
    sort: oneOf(SORTS, q.get('sort')) || 'NAME',
    desc: q.get('dir') === 'desc',
    after: q.get('after'),
    before: q.get('before'),
  };
}

/** Only what differs from the defaults goes into the URL, so a plain /clusters stays plain. */
export function formatClusterListState(state: ClusterListState): string {
  const q = new URLSearchParams();
  if (state.selector) q.set('selector', state.selector);
  if (state.name) q.set('name', state.name);
  if (state.platform) q.set('platform', state.platform);
  if (state.topology) q.set('topology', state.topology);
  if (state.drifted) q.set('drifted', 'true');
  if (state.sort !== 'NAME') q.set('sort', state.sort);
  if (state.desc) q.set('dir', 'desc');
  if (state.after) q.set('after', state.after);
  else if (state.before) q.set('before', state.before);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The clusters page's size. */
export const CLUSTERS_PAGE_SIZE = 25;

/**
 * The Clusters query's variables for a state of the page: what the page asks and what the console
 * fetches ahead for it on load (the same key, so the page takes that answer).
 */
export function clustersQueryVariables(state: ClusterListState): ClustersQueryVariables {
  const filter: ClusterFilter = {
    ...(state.selector ? { labelSelector: state.selector } : {}),
    ...(state.name ? { nameContains: state.name } : {}),
    ...(state.platform ? { platform: state.platform } : {}),
    ...(state.topology ? { topology: state.topology } : {}),
    ...(state.drifted ? { drifted: true } : {}),
  };
  return {
    filter,
    orderBy: { field: state.sort, direction: state.desc ? 'DESC' : 'ASC' },
    ...(state.before
      ? { last: CLUSTERS_PAGE_SIZE, before: state.before }
      : { first: CLUSTERS_PAGE_SIZE }),
    ...(state.after ? { after: state.after } : {}),
  };
}

/**
 * Rows picked on the clusters page, carried to the rollout form in its URL (reloadable): the
 * selector they were picked under and each cluster as `<global ID>:<name>`. Global IDs are
 * base64url and names DNS-1123, so neither holds ':' or ','. The names are for display only; the
 * API checks the IDs.
 */
export interface RolloutPicks {
  selector: string;
  clusters: { id: string; name: string }[];
}

export function formatRolloutPicks(selector: string, picked: ReadonlyMap<string, string>): string {
  const q = new URLSearchParams();
  if (selector) q.set('selector', selector);
  if (picked.size) {
    q.set('clusters', [...picked].map(([id, name]) => `${id}:${name}`).join(','));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export function parseRolloutPicks(search: string): RolloutPicks {
  const q = new URLSearchParams(search);
  const clusters = (q.get('clusters') ?? '')
    .split(',')
    .map((pair) => /^([A-Za-z0-9_-]+):([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/.exec(pair))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ id: m[1]!, name: m[2]! }));
  return { selector: q.get('selector') ?? '', clusters };
}
