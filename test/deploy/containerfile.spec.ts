// deploy/ and the Containerfile must agree: every image a manifest names is a target, runs what
// the manifest runs as a non-root user OpenShift may replace, and every path either side names
// exists on the other.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

import { deployWorkloads, imageTarget, parseContainerfile, type Instruction } from '@fleet/testing';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const containerfile = parseContainerfile(readFileSync(join(ROOT, 'Containerfile'), 'utf8'));
const containers = deployWorkloads().flatMap((w) =>
  w.containers.map((c) => ({ workload: w, container: c, target: imageTarget(c.image) })),
);
const label = ({ workload, container }: (typeof containers)[number]) =>
  `${workload.file} ${workload.kind}/${workload.name} container ${container.name}`;

/** Where the image's files come from: the runtime COPY destinations, relative to its WORKDIR. */
function copiedPaths(target: string): string[] {
  const { workdir } = containerfile.image(target);
  const chain: Instruction[] = [];
  for (let name: string | undefined = target; name;) {
    const stage = containerfile.stages.find((s) => s.name === name);
    chain.unshift(...(stage?.instructions ?? []));
    name =
      stage && containerfile.stages.some((s) => s.name === stage.base) ? stage.base : undefined;
  }
  return chain.flatMap((i) =>
    i.op !== 'COPY'
      ? []
      : i.destination.endsWith('/') || i.sources.length > 1
        ? i.sources.map((s) =>
            posix.relative(workdir, posix.join(workdir, i.destination, posix.basename(s))),
          )
        : [posix.relative(workdir, posix.resolve(workdir, i.destination))],
  );
}

/** The TypeScript source a `dist/...js` entry point is compiled from. */
/** The source an entry is built from: tsc's output, or an app's bundle (scripts/bundle-sidecar.mjs). */
const sourceOf = (entry: string) =>
  /^dist\/apps\/[^/]+\/main\.mjs$/.test(entry)
    ? entry.replace(/^dist\/(apps\/[^/]+)\/main\.mjs$/, '$1/src/main.ts')
    : entry.replace(/^dist\//, '').replace(/\.js$/, '.ts');

describe('deploy/ and the Containerfile', () => {
  it('has a workload for every image target, and a target for every image', () => {
    const finals = containerfile.stages
      .filter((s) => containerfile.image(s.name).cmd !== undefined)
      .map((s) => s.name);
    expect(new Set(containers.map((c) => c.target))).toEqual(new Set(finals));
  });

  it.each(containers.map((c) => [label(c), c] as const))(
    '%s runs a file the image holds',
    (_, { container, target }) => {
      const argv = [
        ...(container.command ?? containerfile.image(target).cmd ?? []),
        ...(container.args ?? []),
      ];
      // node's own flags (e.g. --optimize-for-size) come before the program it runs.
      const program = argv[0] === 'node' ? argv.slice(1).find((a) => !a.startsWith('-')) : argv[0];
      expect(program).toBeDefined();
      const copied = copiedPaths(target);
      expect(copied.some((p) => program === p || program!.startsWith(`${p}/`))).toBe(true);
      if (program!.startsWith('dist/'))
        expect(existsSync(join(ROOT, sourceOf(program!)))).toBe(true);
      else expect(existsSync(join(ROOT, program!))).toBe(true);
      // Apps run what the image's CMD runs, so `podman run` and the cluster agree.
      if (container.command && argv[0] === 'node') {
        expect(container.command).toEqual(containerfile.image(target).cmd);
      }
      expect(container.workingDir ?? containerfile.image(target).workdir).toBe(
        containerfile.image(target).workdir,
      );
    },
  );

  it.each(containers.map((c) => [label(c), c] as const))(
    '%s runs as a non-root user that OpenShift may replace',
    (_, { workload, container, target }) => {
      const user = containerfile.image(target).user ?? '0';
      expect(user).toMatch(/^[1-9]\d*$/);
      expect(
        container.securityContext?.runAsNonRoot ?? workload.podSecurityContext?.runAsNonRoot,
      ).toBe(true);
      // restricted-v2 assigns a UID from the namespace's range; a fixed one would be refused.
      expect(
        container.securityContext?.runAsUser ?? workload.podSecurityContext?.runAsUser,
      ).toBeUndefined();
    },
  );

  it.each(containers.map((c) => [label(c), c] as const))(
    '%s names only paths the image or its mounts provide',
    (_, { container, target }) => {
      const { workdir } = containerfile.image(target);
      const mounts = (container.volumeMounts ?? []).map((m) => m.mountPath);
      const copied = copiedPaths(target).map((p) => posix.join(workdir, p));
      for (const env of container.env ?? []) {
        if (!env.value?.startsWith('/')) continue;
        const provided = [...mounts, ...copied].some(
          (p) => env.value === p || env.value!.startsWith(`${p}/`),
        );
        expect({ [env.name]: env.value, provided }).toEqual({
          [env.name]: env.value,
          provided: true,
        });
      }
    },
  );

  it('ships everything a build context needs and nothing the build makes', () => {
    const ignored = readFileSync(join(ROOT, '.containerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git']));
    expect(ignored).not.toContain('libs');
  });
});
