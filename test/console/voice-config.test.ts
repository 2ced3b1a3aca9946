/**
 * The agent editor and the call page in a browser: every configuration field has a labelled
 * control; a tool whose parameters are not JSON is refused beside that field with what was typed
 * kept; the greeting preview fills placeholders with sample values; Publish is offered only when
 * the draft differs from the published version; a finished call shows its conversation and
 * analysis panels. Each page passes axe at 1366 and 390 px wide, without sideways scrolling, and
 * is photographed under test-results/console/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/app.js';
import {
  BROWSER_WALK,
  type ConsoleFixture,
  expectAccessible,
  hasChromium,
  launchBrowser,
  screenshot,
  signedIn,
  startConsole,
  warnWithoutChromium,
} from './helpers.js';

warnWithoutChromium('console/voice-config');

let f: ConsoleFixture;
let browser: Browser | undefined;
let agentId: string;

beforeAll(async () => {
  f = await startConsole({ env: { SIMULATED_REALTIME: 'true', SIMULATED_CALL_SECONDS: '2' } });
  f.t.services.jobRunner.start();
  const owner = await createUser(f.tenant, { name: 'Ada Lovelace', email: `ada-${Date.now()}@example.com` });
  const credits = await f.t.admin('POST', `/admin/v1/users/${owner.id}/credits`, { minutes: 100 });
  expect(credits.status).toBe(201);
  const created = await f.tenant.request('POST', '/api/v1/agents', {
    user_id: owner.id,
    name: 'Dental reception',
    phone_number: '+14155550100',
    prompt: 'You book dental appointments for {name} at {clinic}.',
    welcome_message: 'Hello {name}, this is {clinic}. Is now a good time?',
  });
  expect(created.status).toBe(201);
  agentId = created.body.data.id;
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

/** The page is no wider than the window: nothing scrolls sideways but a table's own region. */
async function expectNoSidewaysScroll(page: Page) {
  const wider = await page.evaluate(() => {
    const { document: doc, getComputedStyle } = globalThis as unknown as {
      document: any;
      getComputedStyle: any;
    };
    const width = doc.documentElement.clientWidth;
    if (doc.documentElement.scrollWidth <= width) return [];
    const whole = `document ${doc.documentElement.scrollWidth}px wide`;
    // The elements that stick out (outside any scrolling region), to say what to fix.
    const sticking = [...doc.querySelectorAll('body *')]
      .filter((el: any) => {
        if (el.getBoundingClientRect().right <= width + 1) return false;
        for (let up = el.parentElement; up; up = up.parentElement) {
          if (['auto', 'scroll'].includes(getComputedStyle(up).overflowX)) return false;
        }
        return true;
      })
      .slice(0, 5)
      .map(
        (el: any) =>
          `${el.tagName.toLowerCase()}#${el.id}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`,
      );
    return [whole, ...sticking];
  });
  expect(wider).toEqual([]);
}

async function publish(page: Page, label: string) {
  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', { name: label }).click();
  await page.getByText(/^Published version \d+\.$/).waitFor();
}

describe.skipIf(!hasChromium)('the agent editor in a browser', BROWSER_WALK, () => {
  it('labels every field, refuses a tool schema that is not JSON by name, previews the greeting', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner, { width: 1366, height: 900 });
    await page.goto(`/console/agents/${agentId}`);
    for (const label of [
      'Voice provider',
      'Voice id',
      'Language',
      'Model',
      'Temperature',
      'Maximum duration (seconds)',
      'Silence timeout (seconds)',
      'End-call phrases',
      'Hang up',
      'Leave a message',
      'Voicemail message',
      'Transfer 1: phone number',
      'Transfer 1: when to transfer',
      'Tool name',
      'Tool URL',
      'Tool description',
      'Timeout (seconds)',
      'Parameters (JSON Schema)',
      'Write a summary of each call',
      'Success criteria (optional)',
      'Field 1: name',
      'Field 1: type',
      'Field 1: description',
      'Field 1: values, for enum',
    ]) {
      expect(await page.getByLabel(label, { exact: true }).count(), label).toBe(1);
    }
    // The pickers list what the configured engine allows.
    expect(await page.locator('#model option').count()).toBeGreaterThan(1);
    expect(await page.locator('#voice_provider option').count()).toBeGreaterThan(1);
    expect(await page.locator('#language option').count()).toBeGreaterThan(1);
    expect(await page.getByLabel('Temperature').getAttribute('max')).toMatch(/^[12]$/);

    // The preview fills the welcome message's placeholders with sample values, and takes others.
    const preview = page.locator('#preview');
    await preview.getByText('Hello Alex Morgan, this is clinic. Is now a good time?').waitFor();
    await page.getByLabel('Sample {clinic}').fill('Bright Smiles Dental');
    await page.getByRole('button', { name: 'Preview with these values' }).click();
    await preview.getByText('Hello Alex Morgan, this is Bright Smiles Dental. Is now a good time?').waitFor();

    await expectAccessible(page);
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'agent-editor');

    // A tool whose parameters are not JSON: refused beside that field, what was typed kept.
    await page.getByLabel('Tool name').fill('book_appointment');
    await page.getByLabel('Tool URL').fill('https://tools.example.com/book');
    await page.getByLabel('Tool description').fill('Books an appointment on the given date.');
    await page.getByLabel('Timeout (seconds)', { exact: true }).fill('8');
    await page.getByLabel('Parameters (JSON Schema)').fill('{"type": "object", "properties": {');
    await page.getByLabel('Transfer 1: phone number').fill('+14155550111');
    await page.getByLabel('Transfer 1: when to transfer').fill('The caller asks for a dentist.');
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await page
      .locator('#tools_0_parameters-error')
      .getByText(/not valid JSON/)
      .waitFor();
    expect(await page.getByLabel('Tool name').first().inputValue()).toBe('book_appointment');
    expect(await page.getByLabel('Transfer 1: phone number').inputValue()).toBe('+14155550111');
    expect(await page.locator('#tools_0_parameters').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);
    await screenshot(page, 'agent-editor-refused');

    // Fixed, the whole configuration is saved to the draft and shown back.
    await page
      .locator('#tools_0_parameters')
      .fill('{"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}');
    await page.getByLabel('Leave a message').check();
    await page.getByLabel('Voicemail message').fill('Hi {name}, this is {clinic}. We will call back.');
    await page.getByLabel('End-call phrases').fill('goodbye\nhave a nice day');
    await page.getByLabel('Field 1: name').fill('appointment_booked');
    await page.getByLabel('Field 1: type').selectOption('enum');
    await page.getByLabel('Field 1: description').fill('Whether an appointment was booked.');
    await page.getByLabel('Field 1: values, for enum').fill('yes, no, maybe');
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await page.getByText('Configuration saved to the draft.').waitFor();
    const saved = await f.tenant.request('GET', `/api/v1/agents/${agentId}`);
    const config = saved.body.data.draft.config;
    expect(config.tools[0]).toMatchObject({ name: 'book_appointment', timeout_seconds: 8 });
    expect(config.tools[0].parameters.required).toEqual(['date']);
    expect(config.transfer).toEqual([
      { phone_number: '+14155550111', description: 'The caller asks for a dentist.' },
    ]);
    expect(config.voicemail).toEqual({
      action: 'leave_message',
      message: 'Hi {name}, this is {clinic}. We will call back.',
    });
    expect(config.end_call_phrases).toEqual(['goodbye', 'have a nice day']);
    expect(config.analysis.data[0]).toMatchObject({
      name: 'appointment_booked',
      type: 'enum',
      values: ['yes', 'no', 'maybe'],
    });
    // A second blank row is offered under the saved ones.
    expect(await page.getByLabel('Transfer 2: phone number').inputValue()).toBe('');
    expect(await page.locator('#tools_1_name').inputValue()).toBe('');
    await page.locator('#preview').getByText('Hi Alex Morgan, this is clinic. We will call back.').waitFor();

    // Published and unchanged: Publish is not offered.
    await publish(page, 'Publish version 1');
    expect(await page.getByRole('button', { name: /^Publish version/ }).count()).toBe(0);
    await page.getByText('Published: the draft has no changes').waitFor();

    // On a phone: one column, the wide row editors scroll in their own labelled region.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/console/agents/${agentId}`);
    await expectAccessible(page);
    await expectNoSidewaysScroll(page);
    expect(await page.getByRole('region', { name: 'Transfer targets' }).getAttribute('tabindex')).toBe('0');
    await screenshot(page, 'agent-editor-narrow');

    // The tenant's default voice and model, through the agents service.
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto('/console/agents');
    await page.getByLabel('Model', { exact: true }).selectOption({ index: 2 });
    await page.getByLabel('Temperature', { exact: true }).fill('5');
    await page.getByRole('button', { name: 'Save defaults' }).click();
    await page.locator('#default_temperature-error').waitFor();
    await page.getByLabel('Temperature', { exact: true }).fill('0.4');
    await page.getByRole('button', { name: 'Save defaults' }).click();
    await page.getByText('Default voice and model saved.').waitFor();
    const defaults = await f.tenant.request('GET', '/api/v1/agent-defaults');
    expect(defaults.body.data.model.temperature).toBe(0.4);
    await expectAccessible(page);
    await screenshot(page, 'agents-defaults');
    await context.close();
  }, 180_000);
});

describe.skipIf(!hasChromium)('the call page in a browser', BROWSER_WALK, () => {
  it('shows the conversation and the analysis of a finished call, on a laptop and a phone', async () => {
    const published = await f.tenant.request('POST', `/api/v1/agents/${agentId}/publish`);
    expect([200, 201, 409]).toContain(published.status);
    const placed = await f.tenant.request('POST', '/api/v1/calls', {
      agent_id: agentId,
      phone: '+14155550123',
      name: 'Grace Hopper',
      context: { clinic: 'Bright Smiles Dental' },
    });
    expect(placed.status).toBe(202);
    const callId: string = placed.body.data.id;
    const { context, page } = await signedIn(browser!, f.origin, f.owner, { width: 1366, height: 900 });
    await page.goto(`/console/calls/${callId}`);
    await page.locator('#call-outcome [data-final]').waitFor({ timeout: 30_000 });
    await page.getByRole('heading', { name: 'Conversation' }).waitFor();
    await page.getByRole('heading', { name: 'Analysis' }).waitFor();
    await expectAccessible(page);
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'call-page');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expectAccessible(page);
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'call-page-narrow');
    await context.close();
  }, 180_000);
});
