/**
 * The SDK as it ships: its types are the ones generated from the document the service serves now
 * (`npm run sdk:generate` was run after the last schema change), and the package compiles on its
 * own (packages/sdk/tsconfig.json) into JavaScript that works against the server.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERATED_TYPES, generatedTypes, servedPartnerDocument } from '../../scripts/sdk-document.js';
import { createPlan, createTenant, startTestApp, type TestApp } from '../support/app.js';
import { TMP_DIR } from '../support/databases.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

let dir: string;
beforeAll(() => {
  fs.mkdirSync(TMP_DIR, { recursive: true });
  dir = fs.mkdtempSync(path.join(TMP_DIR, 'sdk-build-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the SDK package', () => {
  it('has the types of the document the service serves (run `npm run sdk:generate` when this fails)', {
    timeout: 60_000,
  }, async () => {
    const committed = fs.readFileSync(path.join(ROOT, GENERATED_TYPES), 'utf8');
    const fresh = await generatedTypes(await servedPartnerDocument());
    expect(committed, 'packages/sdk/src/openapi.ts is out of date: run npm run sdk:generate').toBe(fresh);
  });

  describe('built on its own', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(() => t?.close());

    it('compiles with its tsconfig and its JavaScript lists plans from the server', {
      timeout: 120_000,
    }, async () => {
      await run(process.execPath, [
        path.join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        path.join(ROOT, 'packages/sdk/tsconfig.json'),
        '--outDir',
        dir,
      ]);
      expect(fs.existsSync(path.join(dir, 'index.d.ts'))).toBe(true);
      const sdk = await import(pathToFileURL(path.join(dir, 'index.js')).href);
      const tenant = await createTenant(t);
      const plan = await createPlan(t, tenant.id, { name: 'Built' });
      const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const vp = new sdk.Voiceplane({ apiKey: tenant.key, baseUrl });
      const page = await vp.plans.list();
      expect(page.data.map((p: { id: string }) => p.id)).toEqual([plan.id]);
    });
  });
});
