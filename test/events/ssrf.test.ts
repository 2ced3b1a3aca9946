/**
 * The SSRF guard: webhook URLs pointing at loopback, private, link-local or metadata addresses
 * (literal or through a name) are refused at creation and on PATCH, and an attempt to a name that
 * now resolves to one fails without connecting; WEBHOOK_ALLOW_PRIVATE=true allows them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import {
  isForbiddenAddress,
  RESOLVE_TIMEOUT_MS,
  type ResolvedAddress,
} from '../../src/core/security/outbound-addresses.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectInvalidFields } from '../support/expect.js';

const names: Record<string, ResolvedAddress[]> = {
  'public.example': [{ address: '93.184.215.14', family: 4 }],
  'loopback.example': [{ address: '127.0.0.1', family: 4 }],
  'private.example': [
    { address: '93.184.215.14', family: 4 },
    { address: '10.0.0.1', family: 4 },
  ],
  'metadata.example': [{ address: '169.254.169.254', family: 4 }],
  'v6loopback.example': [{ address: '::1', family: 6 }],
  'mapped.example': [{ address: '::ffff:127.0.0.1', family: 6 }],
};
const resolveHost = async (host: string) => {
  // A name whose DNS never answers.
  if (host === 'silent-dns.example') return new Promise<never>(() => {});
  const found = names[host];
  if (!found) throw new Error(`ENOTFOUND ${host}`);
  return found;
};

const clock = new ManualClock(new Date());
let guarded: TestApp;
let open: TestApp;
let a: TestTenant;
let b: TestTenant;

beforeAll(async () => {
  guarded = await startTestApp({ clock, adapters: () => ({ resolveHost }) });
  open = await startTestApp({
    clock,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    adapters: () => ({ resolveHost }),
  });
  a = await createTenant(guarded, { name: 'Guarded' });
  b = await createTenant(open, { name: 'Open' });
});
afterAll(async () => {
  await guarded.close();
  await open.close();
});

const REFUSED = [
  'https://127.0.0.1/hook',
  'https://10.0.0.1/hook',
  'https://169.254.169.254/latest/meta-data',
  'https://[::1]/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://[fd00:ec2::254]/hook',
  'https://0.0.0.0/hook',
  'https://loopback.example/hook',
  'https://private.example/hook',
  'https://metadata.example/hook',
  'https://v6loopback.example/hook',
  'https://mapped.example/hook',
  'http://public.example/hook',
  'https://nowhere.example/hook',
];

describe('SSRF guard', () => {
  it.each(REFUSED)('refuses %s at creation (422 on url), nothing stored', async (url) => {
    expectInvalidFields(await a.request('POST', '/api/v1/webhook-endpoints', { url, events: ['*'] }), [
      'url',
    ]);
    expect((await a.request('GET', '/api/v1/webhook-endpoints')).body.pagination.total).toBe(0);
  });

  it('refuses them on PATCH too, and keeps the old url', async () => {
    const created = await a.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://public.example/hook',
      events: ['*'],
    });
    expect(created.status, created.raw).toBe(201);
    const id = created.body.data.id;
    expectInvalidFields(
      await a.request('PATCH', `/api/v1/webhook-endpoints/${id}`, { url: 'https://loopback.example/x' }),
      ['url'],
    );
    expect((await a.request('GET', `/api/v1/webhook-endpoints/${id}`)).body.data.url).toBe(
      'https://public.example/hook',
    );
    expect((await a.request('DELETE', `/api/v1/webhook-endpoints/${id}`)).status).toBe(200);
  });

  it('an attempt to a name that now resolves to loopback fails without connecting', async () => {
    let connections = 0;
    const server = http
      .createServer((_request, response) => response.end())
      .on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      names['rebinding.example'] = [{ address: '93.184.215.14', family: 4 }];
      const created = await a.request('POST', '/api/v1/webhook-endpoints', {
        url: `https://rebinding.example:${port}/hook`,
        events: ['user.created'],
      });
      expect(created.status, created.raw).toBe(201);
      names['rebinding.example'] = [{ address: '127.0.0.1', family: 4 }];
      await createUser(a);
      await guarded.services.jobRunner.drain();
      const log = await a.request('GET', `/api/v1/webhook-endpoints/${created.body.data.id}/deliveries`);
      expect(log.body.data[0]).toMatchObject({ status: 'pending', attempts: 1, last_response_code: null });
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  });

  it('gives up on a name whose DNS never answers after RESOLVE_TIMEOUT_MS: 422 on url, nothing stored', async () => {
    const tenant = await createTenant(guarded, { name: 'Silent DNS' });
    const started = Date.now();
    const response = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://silent-dns.example/hook',
      events: ['*'],
    });
    expectInvalidFields(response, ['url']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(RESOLVE_TIMEOUT_MS - 50);
    expect((await tenant.request('GET', '/api/v1/webhook-endpoints')).body.pagination.total).toBe(0);
  });

  it('WEBHOOK_ALLOW_PRIVATE=true allows them (and http)', async () => {
    for (const url of REFUSED.filter((u) => !u.includes('nowhere'))) {
      const response = await b.request('POST', '/api/v1/webhook-endpoints', { url, events: ['*'] });
      expect(response.status, `${url}: ${response.raw}`).toBe(201);
    }
  });

  it('classifies addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      'not an address',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
    for (const address of [
      '93.184.215.14',
      '8.8.8.8',
      '172.32.0.1',
      '2606:2800:220:1::1',
      '::ffff:8.8.8.8',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(false);
    }
  });
});
