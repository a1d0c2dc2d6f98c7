// The sidecar's command (scripts/bundle-sidecar.mjs bundles from here into
// dist/apps/sidecar/main.mjs). A module of its own that runs unconditionally: the bundle is split
// into chunks, so main.ts's code may sit in a chunk whose URL is not the command's, and a check of
// import.meta.url there would never match.
import { runCommandLine } from './main.js';

runCommandLine();
