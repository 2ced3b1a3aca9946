#!/usr/bin/env node
/**
 * The package's `voiceplane` command (package.json "bin"; `npx voiceplane …`, `npm run -s cli -- …`).
 * Like `npm start`, it first compiles dist/ when src/ changed since the last build
 * (build-if-stale.mjs, quietly: its messages go to stderr, so stdout holds only the command's
 * answer, one JSON document with --json), then runs dist/cli/main.js with the same arguments.
 * Plain JavaScript with Node built-ins only: it must run where dev dependencies are absent.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The embedded database `npm start` uses is ./data of the package, whichever directory the
// operator runs `npx voiceplane` from; a DATA_DIR given is taken as given.
if (!process.env.DATA_DIR && !process.env.DATABASE_URL) process.env.DATA_DIR = path.join(root, 'data');
const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs'), '--quiet'], {
  cwd: root,
  stdio: ['ignore', 2, 'inherit'],
});
if (build.status !== 0) process.exit(1);
await import(pathToFileURL(path.join(root, 'dist', 'cli', 'main.js')).href);
