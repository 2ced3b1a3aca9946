/**
 * The sources compiled to JavaScript once per test run, for tests that spawn the server or the CLI:
 * `node <compiled>/src/server.js` starts on a fraction of the CPU `node --import tsx src/server.ts`
 * needs (tsx hooks every import of every process), and the suite spawns dozens of processes.
 *
 *   const argv = nodeArgv('src/cli/migrate.ts');   // ['<compiled>/src/cli/migrate.js'] or tsx's
 *   spawn(process.execPath, [...argv, ...args], { cwd: REPO_ROOT });
 *
 * The compiler is esbuild, the transform tsx applies on the fly, file by file: the same JavaScript
 * as before, only not recompiled in each process. The output lives in `.tmp/compiled-<hash>/`, named
 * after the sources it was built from (src/ and the test fixtures run as processes), and mirrors
 * the repository: `src/`, `test/**\/fixtures/` compiled, every other top-level entry (migrations,
 * public, templates, package.json…) a symbolic link, so paths the code resolves from its own file
 * (`../../migrations`) land where they do in the repository. The global setup builds it; a worker
 * that finds it missing (a run with another config) builds it itself. TEST_SPAWN=tsx spawns with
 * tsx as before (e.g. for stack traces that name the .ts files).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
const TMP_DIR = path.join(REPO_ROOT, '.tmp');
/** Folders compiled, relative to the repository root. */
const COMPILED_FOLDERS = ['src', 'test/operations/fixtures'];
const EXIT_WITH_PARENT = path.join(import.meta.dirname, 'exit-with-parent.cjs');
const NOT_LINKED = new Set(['src', 'test', '.tmp', '.git', 'node_modules', 'dist', 'data', 'coverage']);

function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const item of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, item.name);
      if (item.isDirectory()) walk(file);
      else if (item.name.endsWith('.ts') && !item.name.endsWith('.d.ts')) files.push(file);
    }
  };
  for (const folder of COMPILED_FOLDERS) {
    const dir = path.join(REPO_ROOT, folder);
    if (fs.existsSync(dir)) walk(dir);
  }
  return files.sort();
}

async function esbuildVersion(): Promise<string> {
  const { version } = await import('esbuild');
  return version;
}

function hashOf(files: string[], compilerVersion: string): string {
  const hash = crypto.createHash('sha256').update(compilerVersion);
  for (const file of files)
    hash.update(path.relative(REPO_ROOT, file)).update('\0').update(fs.readFileSync(file));
  return hash.digest('hex').slice(0, 12);
}

let compiled: Promise<string> | undefined;

/** The compiled tree's root, built when missing (once per process). */
export function compiledRoot(): Promise<string> {
  compiled ??= build();
  return compiled;
}

async function build(): Promise<string> {
  const files = sourceFiles();
  const root = path.join(TMP_DIR, `compiled-${hashOf(files, await esbuildVersion())}`);
  if (fs.existsSync(root)) return root;
  fs.mkdirSync(TMP_DIR, { recursive: true });
  // Built under a temporary name, then renamed: a concurrent run never sees half a tree.
  const building = `${root}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: files,
    outdir: building,
    outbase: REPO_ROOT,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: path.join(REPO_ROOT, 'tsconfig.json'),
    logLevel: 'error',
  });
  for (const entry of fs.readdirSync(REPO_ROOT)) {
    if (NOT_LINKED.has(entry)) continue;
    fs.symlinkSync(path.join(REPO_ROOT, entry), path.join(building, entry));
  }
  try {
    fs.renameSync(building, root);
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    if (!fs.existsSync(root)) throw error;
  }
  pruneOldTrees(root);
  return root;
}

/** Trees of earlier sources, an hour old or more (a run that started before may still use a newer one). */
function pruneOldTrees(current: string) {
  const hourAgo = Date.now() - 3_600_000;
  for (const entry of fs.readdirSync(TMP_DIR)) {
    const dir = path.join(TMP_DIR, entry);
    if (!entry.startsWith('compiled-') || dir === current) continue;
    try {
      if (fs.statSync(dir).mtimeMs < hourAgo) fs.rmSync(dir, { recursive: true, force: true });
    } catch {}
  }
}

/**
 * Node's arguments that run `entry` (a .ts file, absolute or relative to the repository root): its
 * compiled .js when it is one of the compiled folders', otherwise tsx's loader and the file; either
 * way preceded by exit-with-parent.cjs, so the process ends when the test worker does.
 */
export async function nodeArgv(entry: string): Promise<string[]> {
  const absolute = path.resolve(REPO_ROOT, entry);
  const relative = path.relative(REPO_ROOT, absolute);
  const inCompiledFolder = COMPILED_FOLDERS.some((folder) => relative.startsWith(`${folder}${path.sep}`));
  const preload = ['--require', EXIT_WITH_PARENT];
  if (process.env.TEST_SPAWN === 'tsx' || !inCompiledFolder || !relative.endsWith('.ts'))
    return [...preload, '--import', 'tsx', absolute];
  return [...preload, path.join(await compiledRoot(), relative.replace(/\.ts$/, '.js'))];
}
