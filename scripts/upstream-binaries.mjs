// Pinned upstream binaries (kubectl today; kube-apiserver, etcd and the Karpenter providers as
// they come), built from the Go modules under test/upstream/<name>/ and cached outside the clone.
// scripts/setup.mjs calls ensureUpstreamBinaries for what `npm test` or `npm run demo` need;
// tests find each binary at test/upstream/.bin/<binary> (a symbolic link into the cache), through
// test/support/upstream-binaries.ts. See test/upstream/README.md.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const upstreamDir = join(root, 'test', 'upstream');
export const binDir = join(upstreamDir, '.bin');

/** The Go the project's machines carry; a module may ask for a newer one in its go directive. */
const GO_TO_INSTALL = '1.26.8';

export function readUpstreamVersions() {
  return JSON.parse(readFileSync(join(upstreamDir, 'versions.json'), 'utf8')).upstreams;
}

/**
 * Every Go command runs with the Go on PATH (GOTOOLCHAIN=local: never a toolchain download),
 * statically linked (CGO_ENABLED=0), outside any go.work, with a module cache that `rm -rf` can
 * clear (-modcacherw).
 */
export function goEnvironment() {
  // Go's own install location last on PATH: a shell that never sourced a profile still finds the
  // Go the machine carries, and a Go earlier on PATH still wins.
  const path = [process.env.PATH, existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin' : '']
    .filter(Boolean)
    .join(':');
  return {
    ...process.env,
    PATH: path,
    GOTOOLCHAIN: 'local',
    CGO_ENABLED: '0',
    GOWORK: 'off',
    GOFLAGS: '-modcacherw',
  };
}

export function cacheRoot() {
  return (
    process.env.FLEET_UPSTREAM_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'karpenter-fleet', 'upstream-bin')
  );
}

/** [1, 26, 8] from "go1.26.8"; missing parts are 0. */
const versionParts = (v) =>
  v
    .replace(/^go/, '')
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0);
const atLeast = (have, want) => {
  const [a, b] = [versionParts(have), versionParts(want)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
};

/** `go version`'s output, or an error that says exactly what to install. */
function goVersion(wanted) {
  const install =
    `install Go ${GO_TO_INSTALL} (the tarball go${GO_TO_INSTALL}.linux-amd64.tar.gz from go.dev/dl ` +
    `unpacked into /usr/local, then /usr/local/go/bin on PATH), which the project's polyglot ` +
    `machines carry; it builds the pinned upstream binaries of test/upstream from the Go module proxy`;
  const res = spawnSync('go', ['version'], { encoding: 'utf8', env: goEnvironment() });
  if (res.error || res.status !== 0) throw new Error(`no \`go\` on PATH: ${install}`);
  const found = /go version (go[\d.]+\S*) (\S+)/.exec(res.stdout);
  if (!found) throw new Error(`cannot read \`go version\` (${res.stdout.trim()}): ${install}`);
  if (!atLeast(found[1], `go${wanted}`)) {
    throw new Error(`${found[1]} is older than go${wanted}, which test/upstream needs: ${install}`);
  }
  return res.stdout.trim();
}

/** The go directive of a module's go.mod. */
function goDirective(goMod) {
  return /^go (\S+)$/m.exec(goMod)?.[1] ?? '1.0';
}

/** binary name → { upstream (the versions.json entry's name), entry, pkg } */
function binaryIndex(upstreams) {
  const index = new Map();
  for (const [upstream, entry] of Object.entries(upstreams)) {
    for (const [binary, pkg] of Object.entries(entry.binaries ?? {})) {
      index.set(binary, { upstream, entry, pkg });
    }
  }
  return index;
}

/** `-X` flags that make the binary report its release (`kubectl version`, `/version`). */
function ldflags(entry) {
  const flags = ['-s', '-w'];
  const [major, minor] = entry.version.replace(/^v/, '').split('.');
  for (const pkg of entry.versionLdflags ?? []) {
    flags.push(
      `-X ${pkg}.gitVersion=${entry.version}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
    );
  }
  return flags.join(' ');
}

const BUILD_TIMEOUT_MS = Number(process.env.FLEET_UPSTREAM_BUILD_TIMEOUT_MINUTES ?? 40) * 60_000;

const elapsed = (since) => `${Math.round((Date.now() - since) / 1000)} s`;

/** How many packages a build of `pkg` compiles at most (the progress lines' denominator). */
function packageCount(moduleDir, pkg) {
  const res = spawnSync('go', ['list', '-mod=readonly', '-deps', pkg], {
    cwd: moduleDir,
    env: goEnvironment(),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return res.status === 0 ? res.stdout.trim().split('\n').length : undefined;
}

/** `go build`, printing how far it got every 30 s (a cold build takes many minutes). */
function goBuild(moduleDir, args, label, log) {
  const total = packageCount(moduleDir, args.at(-1));
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn('go', ['build', '-v', ...args], {
      cwd: moduleDir,
      env: goEnvironment(),
      stdio: ['ignore', 'ignore', 'pipe'],
      // A build that hangs (a module download that never answers) fails the set-up instead of
      // holding CI to its own bound. A cold kube-apiserver takes ~15 min on 2 cores.
      timeout: BUILD_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let packages = 0;
    let tail = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      packages += chunk.split('\n').length - 1;
      tail = (tail + chunk).slice(-4000);
    });
    const progress = setInterval(
      () =>
        log(
          `${label}: ${packages}${total ? ` of at most ${total}` : ''} packages compiled, ${elapsed(started)}`,
        ),
      30_000,
    );
    child.on('error', (err) => {
      clearInterval(progress);
      reject(err);
    });
    child.on('close', (code) => {
      clearInterval(progress);
      if (code === 0) resolve();
      else if (code === null)
        reject(
          new Error(
            `${label}: go build stopped after ${elapsed(started)} (bound: FLEET_UPSTREAM_BUILD_TIMEOUT_MINUTES)`,
          ),
        );
      else reject(new Error(`${label}: go build exited ${code}:\n${tail}`));
    });
  });
}

/**
 * Builds (or finds in the cache) each named binary and links it at test/upstream/.bin/<name>.
 * The cache key is the module's go.mod and go.sum, the package, the ldflags and `go version`:
 * anything that changes the binary makes a new entry, and a build cut short leaves none (it is
 * written under a temporary name and renamed into place).
 */
export async function ensureUpstreamBinaries(names, log = (m) => console.log(`[setup] ${m}`)) {
  if (names.length === 0) return {};
  const upstreams = readUpstreamVersions();
  const index = binaryIndex(upstreams);
  const wanted = names.map((name) => {
    const found = index.get(name);
    if (!found) throw new Error(`${name} is not a binary of test/upstream/versions.json`);
    const moduleDir = join(upstreamDir, found.upstream);
    const goMod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
    const goSum = readFileSync(join(moduleDir, 'go.sum'), 'utf8');
    return { name, ...found, moduleDir, goMod, goSum };
  });
  const needGo = wanted.map((w) => goDirective(w.goMod)).reduce((a, b) => (atLeast(a, b) ? a : b));
  const version = goVersion(needGo);
  mkdirSync(binDir, { recursive: true });
  const paths = {};
  for (const w of wanted) {
    const flags = ldflags(w.entry);
    const key = createHash('sha256')
      .update(JSON.stringify([w.goMod, w.goSum, w.pkg, flags, version, process.arch]))
      .digest('hex')
      .slice(0, 16);
    const entryDir = join(cacheRoot(), `${w.name}-${w.entry.version}-${key}`);
    const binary = join(entryDir, w.name);
    if (!existsSync(binary)) {
      const label = `${w.name} (${w.entry.module}@${w.entry.version})`;
      log(`building ${label} with ${version.replace('go version ', '')}; cold, this takes minutes`);
      const started = Date.now();
      const partial = `${entryDir}.partial-${process.pid}`;
      rmSync(partial, { recursive: true, force: true });
      mkdirSync(partial, { recursive: true });
      try {
        await goBuild(
          w.moduleDir,
          [
            '-mod=readonly',
            '-p',
            '2',
            '-trimpath',
            '-ldflags',
            flags,
            '-o',
            join(partial, w.name),
            w.pkg,
          ],
          label,
          log,
        );
        writeFileSync(
          join(partial, 'build.json'),
          JSON.stringify(
            {
              module: w.entry.module,
              version: w.entry.version,
              pkg: w.pkg,
              ldflags: flags,
              go: version,
            },
            null,
            2,
          ),
        );
        rmSync(entryDir, { recursive: true, force: true });
        renameSync(partial, entryDir);
      } finally {
        rmSync(partial, { recursive: true, force: true });
      }
      log(`built ${label} in ${elapsed(started)}`);
    }
    const link = join(binDir, w.name);
    const tmpLink = `${link}.${process.pid}`;
    rmSync(tmpLink, { force: true });
    symlinkSync(binary, tmpLink);
    renameSync(tmpLink, link);
    paths[w.name] = binary;
  }
  return paths;
}

// `node scripts/upstream-binaries.mjs kubectl ...` builds them by hand.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureUpstreamBinaries(process.argv.slice(2)).then(
    (paths) => {
      for (const [name, path] of Object.entries(paths)) console.log(`${name}: ${path}`);
    },
    (err) => {
      console.error(`[upstream] ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
