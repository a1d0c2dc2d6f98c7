import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseContainerfile } from './containerfile.js';
import { spawnProcess, type RunningProcess } from './processes.js';

/**
 * How the sidecar's image runs it: the Containerfile's `sidecar` stage, its `CMD` (the bundle)
 * and its `ENV` (NODE_OPTIONS and glibc malloc settings). Every sidecar a test, the demo or a
 * benchmark starts runs this way, so what is tested and measured is what ships.
 */
export function imageSidecar(): { args: string[]; env: Record<string, string> } {
  const file = join(process.cwd(), 'Containerfile');
  const image = parseContainerfile(readFileSync(file, 'utf8')).image('sidecar');
  const [node, ...args] = image.cmd ?? [];
  if (node !== 'node' || args.length === 0)
    throw new Error(`${file}: the sidecar's CMD is not node <entry>`);
  return { args, env: image.env };
}

/** The built sidecar as a real process, started as its image starts it, with this configuration. */
export function startSidecarProcessWith(
  env: Record<string, string>,
  name = 'sidecar',
): RunningProcess {
  const image = imageSidecar();
  return spawnProcess({
    command: process.execPath,
    // V8 flags (that NODE_OPTIONS does not take) as they are; the entry from the checkout.
    args: image.args.map((a) => (a.startsWith('-') ? a : join(process.cwd(), a))),
    env: { ...process.env, NODE_OPTIONS: '', ...image.env, ...env },
    name,
  });
}
