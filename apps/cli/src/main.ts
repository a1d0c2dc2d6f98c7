#!/usr/bin/env node
import { readFile, writeFile } from 'node:fs/promises';
import { run } from './program.js';

const readInput = async (path: string): Promise<string> => {
  if (path !== '-') return readFile(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

process.exitCode = await run(process.argv, {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  readFile: readInput,
  // Bootstrap manifests carry credentials: readable by the owner only.
  writeFile: (path, data) => writeFile(path, data, { mode: 0o600 }),
  now: () => new Date(),
});
