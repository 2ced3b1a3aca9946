/**
 * The rules of the layout (docs/architecture.md), checked on every run: no import cycles in src/
 * (type-only imports included: they tie modules together as much as value imports do), no file a
 * newcomer cannot hold, and no double casts that silence the type checker.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');
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
