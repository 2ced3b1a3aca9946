/**
 * The partner document read as partners' tools read it: openapi-typescript generates types from
 * the served /api/v1/openapi.json, tsc type-checks the tour written against them with openapi-fetch
 * (test/fixtures/openapi-client/tour.ts), the tour runs against the server, and Redocly's
 * `recommended` ruleset finds nothing to report. The operator document is linted too.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlan, createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { TMP_DIR } from '../support/databases.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const bin = (relative: string) => path.join(ROOT, 'node_modules', relative);

let t: TestApp;
let a: TestTenant;
let dir: string;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp();
  a = await createTenant(t);
  await createPlan(t, a.id, { name: 'Starter', provider: 'agency' });
  baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  dir = fs.mkdtempSync(path.join(TMP_DIR, 'openapi-client-'));
  for (const [url, file] of [
    ['/api/v1/openapi.json', 'partner.json'],
    ['/admin/v1/openapi.json', 'operator.json'],
  ]) {
    const response = await fetch(`${baseUrl}${url}`);
    expect(response.status).toBe(200);
    fs.writeFileSync(path.join(dir, file), await response.text());
  }
});
afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Redocly's findings as { errors, warnings, messages }. */
async function redoclyLint(file: string) {
  const output = path.join(dir, `${path.basename(file)}.lint.json`);
  // Exit code 1 means errors were found; the JSON report says which.
  await run(
    process.execPath,
    [bin('@redocly/cli/bin/cli.js'), 'lint', '--extends', 'recommended', '--format', 'json', file],
    { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
  ).then(
    ({ stdout }) => fs.writeFileSync(output, stdout),
    (error: { stdout?: string }) => fs.writeFileSync(output, error.stdout ?? ''),
  );
  const report = JSON.parse(fs.readFileSync(output, 'utf8')) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  return {
    ...report.totals,
    messages: report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`),
  };
}

describe('a client generated from the partner document', () => {
  // Generating and type-checking takes a few seconds, more on a loaded machine.
  it('type-checks the tour (optional parameters optional, enums as unions, errors narrowed by code)', {
    timeout: 120_000,
  }, async () => {
    await run(process.execPath, [
      bin('openapi-typescript/bin/cli.js'),
      path.join(dir, 'partner.json'),
      '--output',
      path.join(dir, 'api.d.ts'),
    ]);
    fs.copyFileSync(path.join(ROOT, 'test/fixtures/openapi-client/tour.ts'), path.join(dir, 'tour.ts'));
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'DOM'],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['tour.ts'],
      }),
    );
    const checked = await run(process.execPath, [bin('typescript/bin/tsc'), '-p', dir]).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked).toBe('');
  });

  it('the tour runs against the server with that client', async () => {
    const { tour } = await import(path.join(dir, 'tour.ts'));
    const result = await tour(baseUrl, a.key, 'ada.tour@example.com');
    expect(result.createdStatus).toBe(201);
    expect(result.plans.map((p: { name: string }) => p.name)).toContain('Starter');
    expect(result.user.email).toBe('ada.tour@example.com');
    expect(result.duplicateCode).toBe('conflict');
    expect(result.invalidFields).toEqual(expect.arrayContaining(['email', 'name', 'password']));
    expect(result.subscription.status).toMatch(/^(active|trialing)$/);
  });
});

describe('Redocly recommended ruleset', () => {
  it('finds no error and no warning in the partner document', async () => {
    const report = await redoclyLint(path.join(dir, 'partner.json'));
    expect(report.messages).toEqual([]);
    expect(report.errors).toBe(0);
  });

  it('finds no error and no warning in the operator document', async () => {
    const report = await redoclyLint(path.join(dir, 'operator.json'));
    expect(report.messages).toEqual([]);
    expect(report.errors).toBe(0);
  });
});
