/** Where the harness's files are, its output, and what it must undo on the way out. */
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
export const DIST_SERVER = path.join(ROOT, 'dist', 'server.js');
export const DIST_CLUSTER = path.join(ROOT, 'dist', 'cluster.js');

/** Undone last first: processes stopped, databases dropped, directories removed. */
export const cleanups: (() => Promise<void>)[] = [];
export const log = (message: string) => process.stdout.write(`${message}\n`);
