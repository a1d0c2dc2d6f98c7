#!/usr/bin/env node
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { run } from './program.js';

const readInput = async (path: string): Promise<string> => {
  if (path !== '-') return readFile(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const code = await run(process.argv, {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  readFile: readInput,
  // Bootstrap manifests and the config file carry credentials: readable by the owner only, also
  // when the file existed before with a wider mode (writeFile's mode applies to new files only).
  writeFile: async (path, data) => {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, data, { mode: 0o600 });
    await chmod(path, 0o600);
  },
  now: () => new Date(),
  tty: { stdout: Boolean(process.stdout.isTTY), stdin: Boolean(process.stdin.isTTY) },
  ...(process.stdout.columns ? { columns: process.stdout.columns } : {}),
});

// Exit once stdout has flushed: a watch's WebSocket that is still closing must not keep the
// command alive after it has finished.
process.stdout.write('', () => process.exit(code));
