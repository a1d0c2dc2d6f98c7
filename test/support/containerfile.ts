// No container engine runs on these machines, so the Containerfile is checked by doing what a
// builder would: its instructions are parsed and carried out in a scratch directory, each stage's
// file system a folder, RUN lines run by the shell with the stage's working directory and ENV.
// Only the instruction forms the project's Containerfile uses are understood; anything else is an
// error, so the file cannot drift into something this reading silently gets wrong.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, matchesGlob, posix, relative } from 'node:path';
import { homedir } from 'node:os';

export type Instruction =
  | { op: 'WORKDIR'; path: string }
  | { op: 'COPY'; from?: string; sources: string[]; destination: string }
  | { op: 'RUN'; command: string }
  | { op: 'USER'; user: string }
  | { op: 'ENV'; name: string; value: string }
  | { op: 'CMD'; argv: string[] };

export interface Stage {
  name: string;
  /** Another stage's name, or an external image. */
  base: string;
  instructions: Instruction[];
}

export interface Containerfile {
  stages: Stage[];
  stage(name: string): Stage;
  /** The stage's settings as its image has them, inherited through `FROM <stage>`. */
  image(name: string): {
    workdir: string;
    user?: string;
    env: Record<string, string>;
    cmd?: string[];
  };
}

function logicalLines(text: string): string[] {
  const lines: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (current === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    lines.push((current + line).trim());
    current = '';
  }
  if (current !== '') throw new Error('Containerfile ends inside a continued line');
  return lines;
}

export function parseContainerfile(text: string): Containerfile {
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  const expand = (s: string) =>
    s.replace(/\$\{(\w+)\}/g, (_, name: string) => {
      const value = args.get(name);
      if (value === undefined) throw new Error(`ARG ${name} is used but not declared`);
      return value;
    });
  for (const line of logicalLines(text)) {
    const [, keyword = '', rest = ''] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    const current = stages.at(-1);
    if (keyword === 'ARG') {
      const [name = '', value = ''] = rest.split('=', 2);
      args.set(name, value);
      continue;
    }
    if (keyword === 'FROM') {
      const match = /^(\S+)\s+AS\s+(\S+)$/i.exec(expand(rest));
      if (!match) throw new Error(`FROM must name its stage: ${line}`);
      stages.push({ base: match[1]!, name: match[2]!, instructions: [] });
      continue;
    }
    if (!current) throw new Error(`${keyword} before the first FROM`);
    const words = rest.split(/\s+/);
    switch (keyword) {
      case 'WORKDIR':
        current.instructions.push({ op: 'WORKDIR', path: rest });
        break;
      case 'COPY': {
        const flags = words.filter((w) => w.startsWith('--'));
        const paths = words.filter((w) => !w.startsWith('--'));
        const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
        const unknown = flags.filter((f) => !f.startsWith('--from='));
        if (unknown.length > 0 || paths.length < 2) throw new Error(`unsupported COPY: ${line}`);
        current.instructions.push({
          op: 'COPY',
          ...(from ? { from } : {}),
          sources: paths.slice(0, -1),
          destination: paths.at(-1)!,
        });
        break;
      }
      case 'RUN':
        if (rest.startsWith('[')) throw new Error(`RUN must use the shell form: ${line}`);
        current.instructions.push({ op: 'RUN', command: rest });
        break;
      case 'USER':
        current.instructions.push({ op: 'USER', user: rest });
        break;
      case 'ENV': {
        // Split at the first '=' only: a value may hold '=' itself (NODE_OPTIONS=--flag=value).
        const at = rest.indexOf('=');
        if (at <= 0) throw new Error(`ENV must be name=value: ${line}`);
        current.instructions.push({
          op: 'ENV',
          name: rest.slice(0, at),
          value: rest.slice(at + 1),
        });
        break;
      }
      case 'CMD':
        current.instructions.push({ op: 'CMD', argv: JSON.parse(rest) as string[] });
        break;
      default:
        throw new Error(`unsupported instruction: ${line}`);
    }
  }
  const stage = (name: string): Stage => {
    const found = stages.find((s) => s.name === name);
    if (!found) throw new Error(`no stage ${name}`);
    return found;
  };
  const image: Containerfile['image'] = (name) => {
    const s = stage(name);
    const inherited = stages.some((o) => o.name === s.base)
      ? image(s.base)
      : { workdir: '/', env: {} };
    const result = { ...inherited, env: { ...inherited.env } };
    for (const i of s.instructions) {
      if (i.op === 'WORKDIR') result.workdir = posix.resolve(result.workdir, i.path);
      if (i.op === 'USER') result.user = i.user;
      if (i.op === 'ENV') result.env[i.name] = i.value;
      if (i.op === 'CMD') result.cmd = i.argv;
    }
    return result;
  };
  return { stages, stage, image };
}

export interface BuildOptions {
  /** The build context (the repository). */
  context: string;
  /** An empty scratch directory; each stage's file system becomes a folder in it. */
  scratch: string;
  /** Written to with each RUN's output. */
  log: (line: string) => void;
  /** Told each instruction and how long it took, so a slow build says where its time went. */
  onStep?: (step: string, ms: number) => void;
  /**
   * A layer cache, as a container builder keeps one: a RUN whose command `runs` matches, reached
   * by instructions that copied only files (no directory, no other stage), is keyed by everything
   * before it (the base, each instruction, the copied files' bytes and modes, Node's and npm's
   * versions) and its resulting file system is kept in `dir`, one layer at a time. The same key
   * restores it instead of running the command again.
   */
  layerCache?: { dir: string; runs: RegExp };
}

/** The cache key of the file system after `instructions` so far, or undefined when untracked. */
type LayerKey = string | undefined;

const extendKey = (key: LayerKey, ...parts: (string | Buffer)[]): LayerKey => {
  if (key === undefined) return undefined;
  const hash = createHash('sha256').update(key);
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
};

const LAYER_NAME = /^[0-9a-f]{64}(?:\.(?:partial|trash)-\d+)?$/;

/** Restores a cached layer into `root`, or runs `produce` there and keeps its result. */
function throughLayerCache(dir: string, key: string, root: string, produce: () => void): boolean {
  const layer = join(dir, key);
  if (existsSync(layer)) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    try {
      execFileSync('cp', ['-a', `${layer}/.`, root]);
      return true;
    } catch {
      // Another build replaced the layer while this one copied it: build it here instead.
      rmSync(root, { recursive: true, force: true });
      mkdirSync(root, { recursive: true });
    }
  }
  produce();
  mkdirSync(dir, { recursive: true });
  // One layer kept: the lock file changes, the old install is only disk. Only the cache's own
  // entries are removed, each renamed first so a removal cut short never leaves a partial layer
  // under a valid key.
  for (const entry of readdirSync(dir)) {
    if (!LAYER_NAME.test(entry) || entry === key) continue;
    const trash = join(dir, `${entry.slice(0, 64)}.trash-${process.pid}`);
    try {
      renameSync(join(dir, entry), trash);
    } catch {
      continue;
    }
    rmSync(trash, { recursive: true, force: true });
  }
  const partial = `${layer}.partial-${process.pid}`;
  execFileSync('cp', ['-a', root, partial]);
  try {
    renameSync(partial, layer);
  } catch (err) {
    // Another build stored the same key first: its layer is as good as this one.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(layer)) throw err;
  }
  return false;
}

function describeInstruction(i: Instruction): string {
  switch (i.op) {
    case 'WORKDIR':
      return `WORKDIR ${i.path}`;
    case 'COPY':
      return `COPY ${i.from ? `--from=${i.from} ` : ''}${i.sources.join(' ')} ${i.destination}`;
    case 'RUN':
      return `RUN ${i.command}`;
    case 'USER':
      return `USER ${i.user}`;
    case 'ENV':
      return `ENV ${i.name}=${i.value}`;
    case 'CMD':
      return `CMD ${JSON.stringify(i.argv)}`;
  }
}

/** Reads .containerignore: one glob per line, relative to the context. */
function ignorePatterns(context: string): string[] {
  try {
    return readFileSync(join(context, '.containerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
  } catch {
    return [];
  }
}

/** Copies a file or a directory's contents as a layer would (modes and symlinks kept). */
function copyInto(source: string, target: string, keep?: (path: string) => boolean): void {
  const directory = statSync(source).isDirectory();
  mkdirSync(directory ? target : dirname(target), { recursive: true });
  if (!keep) {
    execFileSync('cp', ['-a', directory ? `${source}/.` : source, target]);
    return;
  }
  if (!directory) {
    cpSync(source, target, { preserveTimestamps: true });
    return;
  }
  for (const entry of readdirSync(source)) {
    const from = join(source, entry);
    if (keep(from)) copyInto(from, join(target, entry), keep);
  }
}

/**
 * Carries out the stages the targets need, each stage once, and returns the folder holding each
 * target's file system. Stages built on another stage share that stage's folder (they only add
 * metadata here).
 */
export function buildStages(
  file: Containerfile,
  targets: string[],
  options: BuildOptions,
): Record<string, string> {
  const roots = new Map<string, string>();
  const ignored = ignorePatterns(options.context);
  // What else a RUN reads from the builder: the tools' versions, npm's settings (the .npmrc
  // files: registry, scripts; not the npm_config_* variables, which name this checkout's path)
  // and the C library that native packages are built or chosen against (Prisma's engine).
  const toolVersions = options.layerCache
    ? [
        process.version,
        process.arch,
        execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim(),
        ...[join(homedir(), '.npmrc'), join(options.context, '.npmrc')].map((path) =>
          existsSync(path) ? readFileSync(path, 'utf8') : '',
        ),
        execFileSync('ldd', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? '',
      ].join('\n')
    : '';
  const inContext = (path: string) => {
    const rel = relative(options.context, path);
    return !ignored.some((p) => matchesGlob(rel, p) || matchesGlob(basename(rel), p));
  };
  const build = (name: string): string => {
    const known = roots.get(name);
    if (known) return known;
    const stage = file.stage(name);
    const root = file.stages.some((s) => s.name === stage.base)
      ? build(stage.base)
      : join(options.scratch, name);
    mkdirSync(root, { recursive: true });
    roots.set(name, root);
    let workdir = '/';
    // Only a stage on an external image is tracked: one on another stage starts from its files.
    let key: LayerKey =
      options.layerCache && root === join(options.scratch, name)
        ? extendKey('', toolVersions, `FROM ${stage.base}`)
        : undefined;
    // PATH and HOME as a builder image has them (npm keeps its cache under HOME): not the
    // caller's PATH, which `npm test` prefixes with this checkout's node_modules/.bin, so neither
    // a RUN nor the layer cache's key depends on where the checkout is.
    const env: Record<string, string> = {
      PATH: `${dirname(process.execPath)}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      HOME: process.env.HOME ?? '/root',
    };
    const inRoot = (path: string, fsRoot = root) => join(fsRoot, posix.resolve(workdir, path));
    for (const i of stage.instructions) {
      const stepStarted = Date.now();
      runInstruction(i);
      key = extendKey(key, describeInstruction(i));
      options.onStep?.(`[${name}] ${describeInstruction(i)}`, Date.now() - stepStarted);
    }
    return root;

    function runInstruction(i: Instruction): void {
      switch (i.op) {
        case 'WORKDIR':
          workdir = posix.resolve(workdir, i.path);
          mkdirSync(inRoot('.'), { recursive: true });
          break;
        case 'ENV':
          env[i.name] = i.value;
          break;
        case 'COPY': {
          const fromRoot = i.from ? build(i.from) : options.context;
          const intoDirectory = i.sources.length > 1 || i.destination.endsWith('/');
          for (const source of i.sources) {
            const from = i.from ? join(fromRoot, source) : join(options.context, source);
            const stat = statSync(from);
            key =
              i.from || stat.isDirectory()
                ? undefined
                : extendKey(key, source, String(stat.mode), readFileSync(from));
            const to =
              intoDirectory && !statSync(from).isDirectory()
                ? join(inRoot(i.destination), basename(from))
                : inRoot(i.destination);
            copyInto(from, to, i.from ? undefined : inContext);
          }
          break;
        }
        case 'RUN': {
          const run = () =>
            options.log(
              execFileSync('sh', ['-c', i.command], {
                cwd: inRoot('.'),
                env: { ...env },
                encoding: 'utf8',
                stdio: ['ignore', 'pipe', 'pipe'],
                maxBuffer: 64 * 1024 * 1024,
              }),
            );
          const cache = options.layerCache;
          const layerKey = extendKey(key, JSON.stringify(env), `RUN ${i.command}`);
          if (cache && layerKey && cache.runs.test(i.command)) {
            options.log(`[${name}] RUN ${i.command} (layer ${layerKey.slice(0, 12)})`);
            if (throughLayerCache(cache.dir, layerKey, root, run))
              options.log(`[${name}] layer ${layerKey.slice(0, 12)} restored from ${cache.dir}`);
          } else {
            options.log(`[${name}] RUN ${i.command}`);
            run();
          }
          key = layerKey;
          break;
        }
        case 'USER':
        case 'CMD':
          break;
      }
    }
  };
  return Object.fromEntries(targets.map((target) => [target, build(target)]));
}
