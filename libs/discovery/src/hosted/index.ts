export * from './kinds.js';
export * from './types.js';
export {
  discoverHostedAws,
  observeHostedMode,
  parseAutoNode,
  parseAutoNodeStatus,
} from './discover.js';
export type { HostedDiscoveryInput } from './discover.js';
