/**
 * The rules of the layout (docs/architecture.md), checked on every run: every import between the
 * folders of src/ allowed by the folder table that docs/architecture.md states (read from the doc
 * itself, so the doc cannot drift), no cycle between folders nor between files (type-only imports
 * included: they tie modules together as much as value imports do), the composition root imported
 * by the entry points only, no file a newcomer cannot hold, and no double casts that silence the
 * type checker.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');
const ARCHITECTURE_DOC = path.resolve(import.meta.dirname, '../../docs/architecture.md');
const MAX_LINES = 400;

function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The files of src/ that `file` imports (relative specifiers; `.js` written for `.ts` files). */
function localImports(file: string): string[] {
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts')))
    .filter((target) => fs.existsSync(target));
}

/** Every cycle found by a depth-first walk, each as the list of files around it. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

const relative = (file: string) => path.relative(SRC, file);

/** The unit of the folder rules: a top-level folder of src/ (`calls`), or a file at its root (`app.ts`). */
function unitOf(file: string): string {
  const [first] = relative(file).split(path.sep);
  return first;
}

type Kind = 'kit' | 'feature' | 'surface' | 'entry';
interface FolderRule {
  kind: Kind;
  uses: string[];
}

/** The table between the folder-table markers of docs/architecture.md. */
function folderTable(): Map<string, FolderRule> {
  const doc = fs.readFileSync(ARCHITECTURE_DOC, 'utf8');
  const start = doc.indexOf('<!-- folder-table');
  const end = doc.indexOf('<!-- /folder-table -->');
  const rows = doc.slice(start, end).split('\n');
  const table = new Map<string, FolderRule>();
  for (const row of rows) {
    const match = /^\| `([\w.-]+?)\/?` \| (kit|feature|surface|entry) \| (.*) \|$/.exec(row);
    if (!match) continue;
    const uses = match[3]
      .split(',')
      .map((name) => name.trim())
      .filter((name) => /^[\w-]+$/.test(name));
    table.set(match[1], { kind: match[2] as Kind, uses });
  }
  return table;
}

/** Whether a unit of `rule` may import `target` (core/ is open to all; the table lists the rest). */
function allowed(table: Map<string, FolderRule>, rule: FolderRule, target: string): boolean {
  const targetRule = table.get(target);
  if (!targetRule) return false;
  if (rule.kind === 'entry') return true;
  if (target === 'core') return true;
  if (rule.kind === 'kit') return false;
  if (rule.kind === 'feature') return targetRule.kind === 'feature' && rule.uses.includes(target);
  // A surface: the web kit where it says so, any feature, never another surface or an entry point.
  return targetRule.kind === 'feature' || (targetRule.kind === 'kit' && rule.uses.includes(target));
}

/** The graph between units: unit → the units its files import. */
function unitGraph(files: string[], unit: (file: string) => string): Map<string, string[]> {
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const from = unit(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const target of localImports(file)) if (unit(target) !== from) edges.add(unit(target));
  }
  return new Map([...graph].map(([key, edges]) => [key, [...edges]]));
}

describe('the layout of src/', () => {
  const files = sourceFiles();

  it('the cycle finder finds a cycle, type-only edges included', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycles(graph)).toEqual([['a', 'b', 'c', 'a']]);
    expect(
      findCycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
    const typeOnly = ts.preProcessFile(
      "import type { X } from './x.js';\nexport type { Y } from './y.js';",
      true,
      true,
    );
    expect(typeOnly.importedFiles.map((f) => f.fileName)).toEqual(['./x.js', './y.js']);
  });

  it('states a folder table, and lists every folder of src/ in it', () => {
    const table = folderTable();
    expect(table.get('core')?.kind).toBe('kit');
    expect(table.get('calls')?.uses).toContain('agents');
    const units = [...new Set(files.map(unitOf))].sort();
    expect(units.filter((unit) => !table.has(unit))).toEqual([]);
  });

  it('imports across folders only what the folder table allows', () => {
    const table = folderTable();
    const refused: string[] = [];
    for (const file of files) {
      const rule = table.get(unitOf(file));
      if (!rule) continue;
      for (const target of localImports(file)) {
        const to = unitOf(target);
        if (to !== unitOf(file) && !allowed(table, rule, to))
          refused.push(`${relative(file)} → ${relative(target)}`);
      }
    }
    expect(refused).toEqual([]);
  });

  it('the folder rules refuse what they should', () => {
    const table = new Map<string, FolderRule>([
      ['core', { kind: 'kit', uses: [] }],
      ['web', { kind: 'kit', uses: [] }],
      ['users', { kind: 'feature', uses: [] }],
      ['calls', { kind: 'feature', uses: ['users'] }],
      ['console', { kind: 'surface', uses: ['web'] }],
      ['portal', { kind: 'surface', uses: ['web'] }],
      ['services.ts', { kind: 'entry', uses: [] }],
    ]);
    const rule = (name: string) => table.get(name) as FolderRule;
    expect(allowed(table, rule('calls'), 'users')).toBe(true);
    expect(allowed(table, rule('users'), 'calls')).toBe(false);
    expect(allowed(table, rule('core'), 'users')).toBe(false);
    expect(allowed(table, rule('calls'), 'web')).toBe(false);
    expect(allowed(table, rule('console'), 'calls')).toBe(true);
    expect(allowed(table, rule('console'), 'portal')).toBe(false);
    expect(allowed(table, rule('console'), 'services.ts')).toBe(false);
    expect(allowed(table, rule('services.ts'), 'console')).toBe(true);
  });

  it('has no cycle between folders, nor between the subfolders of core/', () => {
    const folders = findCycles(unitGraph(files, unitOf));
    const coreFiles = files.filter((file) => unitOf(file) === 'core');
    const coreUnit = (file: string) => {
      const parts = relative(file).split(path.sep);
      return parts.length > 2 ? `core/${parts[1]}` : 'core/(flat)';
    };
    const core = findCycles(
      new Map(
        [...unitGraph(coreFiles, coreUnit)].map(([key, edges]) => [
          key,
          edges.filter((e) => e.startsWith('core')),
        ]),
      ),
    );
    expect([...folders, ...core].map((cycle) => cycle.join(' → '))).toEqual([]);
  });

  it('imports the composition root from the entry points only', () => {
    const table = folderTable();
    const importers = files
      .filter((file) => localImports(file).some((target) => relative(target) === 'services.ts'))
      .filter((file) => table.get(unitOf(file))?.kind !== 'entry')
      .map(relative);
    expect(importers).toEqual([]);
  });

  it('lists every job queue in docs/architecture.md', () => {
    const doc = fs.readFileSync(ARCHITECTURE_DOC, 'utf8');
    const queues = files.flatMap((file) =>
      [...fs.readFileSync(file, 'utf8').matchAll(/export const \w+_QUEUE = '([\w.]+)'/g)].map((m) => m[1]),
    );
    expect(queues.length).toBeGreaterThan(10);
    expect(queues.filter((queue) => !doc.includes(`\`${queue}\``))).toEqual([]);
  });

  it('has no import cycles', () => {
    const graph = new Map(files.map((file) => [file, localImports(file)]));
    const cycles = findCycles(graph).map((cycle) => cycle.map(relative).join(' → '));
    expect(cycles).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({
        file: relative(file),
        lines: fs.readFileSync(file, 'utf8').trimEnd().split('\n').length,
      }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('has no `as unknown as` casts', () => {
    const casts = files
      .filter((file) => /\bas unknown as\b/.test(fs.readFileSync(file, 'utf8')))
      .map(relative);
    expect(casts).toEqual([]);
  });
});
