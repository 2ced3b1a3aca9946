#!/usr/bin/env node
/**
 * Compiles src/ into dist/ with tsc only when dist/ is missing or was built from other sources.
 * `npm start` and `npm run db:migrate` run it first, so a start costs a build only after a change,
 * and a production install without dev dependencies (no tsc) runs the dist/ it was given.
 *
 *   node scripts/build-if-stale.mjs           build when missing or stale (prestart, db:migrate)
 *   node scripts/build-if-stale.mjs --force   always build (npm run build)
 *   node scripts/build-if-stale.mjs --quiet   silent when up to date, and every message (tsc's too)
 *                                             on stderr: stdout stays the caller's (scripts/voiceplane.mjs)
 *
 * "Stale" compares a fingerprint of the sources (the path, size and modification time of every
 * file and folder under src/, and of the tsconfig files) with the one recorded in
 * dist/.build-stamp by the last successful build. Any edit, new, renamed or deleted file, or a
 * checkout that brings older files back, changes it. Plain JavaScript with Node built-ins only:
 * it must run where dev dependencies are absent.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = path.join(root, 'src');
const distDir = path.join(root, 'dist');
const stampFile = path.join(distDir, '.build-stamp');
const entry = path.join(distDir, 'server.js');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json'];

function describe(file) {
  const stat = fs.statSync(file);
  return `${path.relative(root, file)}\t${stat.isDirectory() ? 'dir' : stat.size}\t${stat.mtimeMs}`;
}

function sourceFingerprint() {
  const lines = [];
  const walk = (dir) => {
    lines.push(describe(dir));
    for (const item of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, item.name);
      if (item.isDirectory()) walk(file);
      else lines.push(describe(file));
    }
  };
  walk(srcDir);
  for (const name of CONFIG_FILES) {
    const file = path.join(root, name);
    if (fs.existsSync(file)) lines.push(describe(file));
  }
  lines.sort();
  return crypto.createHash('sha256').update(lines.join('\n')).digest('hex');
}

function recordedFingerprint() {
  try {
    return JSON.parse(fs.readFileSync(stampFile, 'utf8')).sources;
  } catch {
    return undefined;
  }
}

function fail(message) {
  console.error(message);
  process.exit(1);
}

const force = process.argv.includes('--force');
const quiet = process.argv.includes('--quiet');
const say = quiet ? console.error : console.log;
const built = fs.existsSync(entry);

if (!fs.existsSync(srcDir)) {
  // A deployment that ships dist/ without the sources: nothing to compare, nothing to build from.
  if (built) process.exit(0);
  fail(`Neither ${path.relative(root, entry)} nor src/ is here: nothing to start.`);
}

const fingerprint = sourceFingerprint();
const reason = force
  ? 'requested'
  : !built
    ? 'dist/ is missing'
    : recordedFingerprint() !== fingerprint
      ? 'src/ changed since the last build'
      : undefined;
if (!reason) {
  if (!quiet) say('dist/ is up to date with src/: no build needed.');
  process.exit(0);
}

if (!fs.existsSync(tsc)) {
  const install = 'TypeScript is not installed here (dev dependencies omitted, e.g. npm ci --omit=dev)';
  const ship =
    'Build where dev dependencies are installed (npm ci && npm run build) and ship dist/ with the app, or run npm ci here first.';
  if (!built) fail(`Cannot build: dist/ is missing and ${install}.\n${ship}`);
  fail(
    `Cannot build: ${reason} and ${install}.\n${ship}\n` +
      'To run the dist/ that is here anyway: node dist/server.js (migrations: node dist/cli/migrate.js).',
  );
}

say(`Building dist/ (${reason})…`);
// A build that fails or is interrupted must not leave the old stamp claiming dist/ is current.
fs.rmSync(stampFile, { force: true });
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: quiet ? ['inherit', 2, 'inherit'] : 'inherit',
});
if (result.status !== 0) fail(`tsc failed (${result.status ?? result.signal}): dist/ is not up to date.`);
fs.mkdirSync(distDir, { recursive: true });
fs.writeFileSync(
  stampFile,
  `${JSON.stringify({ sources: fingerprint, built_at: new Date().toISOString() })}\n`,
);
