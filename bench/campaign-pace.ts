/**
 * campaign_pace (PostgreSQL only), in a service process of its own after the main one stopped,
 * with SIMULATED_CALL_SECONDS=2 and SIMULATED_REALTIME=true (the main service ends calls at once, and every process claims
 * jobs from the same queue, so they cannot share the database while this runs):
 *
 * 1. a 10,000-row CSV campaign upload (multipart, `POST /api/v1/campaigns`, left a draft): the
 *    time to its 201 and the process's peak RSS (VmHWM) right after it;
 * 2. a campaign capped at CAMPAIGN_CAP calls of 2 seconds, started: its calls dialling or in
 *    progress are sampled every 100 ms over the measured seconds (after the warm-up), and the
 *    sustained concurrency is their mean over the cap.
 */
import pg from 'pg';
import { heapLimitArgv } from '../src/core/config/memory.js';
import { freePort } from '../test/support/server-process.js';
import { serviceEnv } from './environment.js';
import { DIST_SERVER, log } from './harness.js';
import type { LoadResult } from './load.js';
import type { BenchOptions } from './options.js';
import { startProcess } from './processes.js';
import { setupAgent } from './requests.js';
import type { CompoundResult, ScenarioContext } from './scenario-types.js';
import { startToolReceiver } from './tool-receiver.js';

/** The campaign's cap (max_concurrent_calls): the target is a sustained ≥ 95 % of it. */
export const CAMPAIGN_CAP = 20;
export const CAMPAIGN_PACE_MIN = 0.95;
const CALL_SECONDS = 2;
export const CSV_ROWS = 10_000;
export const CSV_SECONDS_MAX = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Numbers the simulator always answers (those ending 0000 or 9999 it does not). */
const number = (n: number) => `+1415${String(2_000_001 + n).padStart(7, '0')}`;

function csvFile(rows: number): string {
  const lines = ['phone,name,email'];
  for (let i = 0; i < rows; i++) lines.push(`${number(i)},Recipient ${i},recipient.${i}@bench.example`);
  return `${lines.join('\n')}\n`;
}

export async function runCampaignPace(
  options: BenchOptions,
  location: string,
  context: ScenarioContext,
  extraEnv: Record<string, string>,
  logFile: string,
): Promise<CompoundResult & { peakRssMb: number }> {
  const port = await freePort();
  const tools = await startToolReceiver();
  const service = await startProcess({
    name: 'service-campaigns',
    args: [...heapLimitArgv([], options.env.NODE_OPTIONS), DIST_SERVER],
    env: serviceEnv(options, 'postgres', location, port, {
      ...extraEnv,
      SIMULATED_CALL_SECONDS: String(CALL_SECONDS),
      // Calls really last their seconds (the main service compresses time).
      SIMULATED_REALTIME: 'true',
    }),
    port,
    readyPath: '/readyz',
    logFile,
  });
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    const agentId =
      context.agentId ?? (await setupAgent(service.baseUrl, context.fixture, tools.url)).agentId;
    if (!agentId) throw new Error('campaign_pace: no agent');
    const auth = { authorization: `Bearer ${context.fixture.apiKey}` };

    // 1. The CSV upload.
    const form = new FormData();
    form.set('agent_id', agentId);
    form.set('name', 'Bench CSV upload');
    form.set('file', new Blob([csvFile(CSV_ROWS)], { type: 'text/csv' }), 'recipients.csv');
    const rssBefore = service.peakRssMb();
    const uploadStarted = performance.now();
    const uploaded = await fetch(`${service.baseUrl}/api/v1/campaigns`, {
      method: 'POST',
      headers: { ...auth, 'idempotency-key': `bench-csv-${Date.now()}` },
      body: form,
    });
    const uploadBody = await uploaded.text();
    const uploadSeconds = (performance.now() - uploadStarted) / 1000;
    const uploadRss = service.peakRssMb();
    if (uploaded.status !== 201)
      throw new Error(`CSV upload answered ${uploaded.status}: ${uploadBody.slice(0, 300)}`);
    const accepted = (JSON.parse(uploadBody) as { data?: { import?: { accepted?: number } } }).data?.import
      ?.accepted;
    log(
      `    CSV campaign of ${CSV_ROWS.toLocaleString('en-US')} rows: 201 in ${uploadSeconds.toFixed(2)} s, ${accepted} accepted, peak RSS ${rssBefore} → ${uploadRss} MB`,
    );

    // 2. The pace: enough recipients for the warm-up, the measured seconds and a margin.
    const seconds = options.duration;
    const recipients = Math.ceil((CAMPAIGN_CAP * (options.warmup + seconds + 10)) / CALL_SECONDS);
    const created = await fetch(`${service.baseUrl}/api/v1/campaigns`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `bench-pace-${Date.now()}` },
      body: JSON.stringify({
        agent_id: agentId,
        name: 'Bench pace',
        max_concurrent_calls: CAMPAIGN_CAP,
        recipients: Array.from({ length: recipients }, (_, i) => ({
          phone: number(CSV_ROWS + 10 + i),
          name: `Paced ${i}`,
        })),
      }),
    });
    const campaign = (JSON.parse(await created.text()) as { data?: { id?: string } }).data?.id;
    if (created.status !== 201 || !campaign) throw new Error(`campaign create answered ${created.status}`);
    const started = await fetch(`${service.baseUrl}/api/v1/campaigns/${campaign}/start`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        'idempotency-key': `bench-start-${Date.now()}`,
      },
      body: '{}',
    });
    if (started.status >= 300)
      throw new Error(`campaign start answered ${started.status}: ${await started.text()}`);
    const live = async () =>
      Number(
        (
          await client.query<{ n: string }>(
            // The campaign's own calls: the agent may hold others (inbound_answer leaves some dialing).
            `SELECT count(*) AS n FROM campaign_recipients r JOIN calls c ON c.id = r.call_id
             WHERE r.campaign_id = $1 AND c.status IN ('dialing', 'in_progress')`,
            [campaign],
          )
        ).rows[0].n,
      );
    await sleep(options.warmup * 1000);
    const samples: number[] = [];
    const until = Date.now() + seconds * 1000;
    while (Date.now() < until) {
      samples.push(await live());
      await sleep(100);
    }
    const mean = samples.reduce((sum, n) => sum + n, 0) / Math.max(1, samples.length);
    const sorted = [...samples].sort((a, b) => a - b);
    const pace = Math.floor((mean / CAMPAIGN_CAP) * 10_000) / 10_000;
    log(
      `    campaign capped at ${CAMPAIGN_CAP}, ${CALL_SECONDS}-second calls: mean ${mean.toFixed(2)} live calls over ${samples.length} samples (${(pace * 100).toFixed(1)} % of the cap), lowest ${sorted[0]}`,
    );
    await fetch(`${service.baseUrl}/api/v1/campaigns/${campaign}/cancel`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        'idempotency-key': `bench-cancel-${Date.now()}`,
      },
      body: '{}',
    }).catch(() => undefined);
    const load: LoadResult = {
      rps: Math.round((mean / CALL_SECONDS) * 10) / 10,
      p50_ms: 0,
      p99_ms: 0,
      non2xx: 0,
      errors: 0,
      statuses: { '201': 2 },
      cpu_ms_per_request: null,
    } as LoadResult;
    return {
      load,
      ratio: null,
      peakRssMb: service.peakRssMb(),
      details: {
        cap: CAMPAIGN_CAP,
        call_seconds: CALL_SECONDS,
        mean_live_calls: Math.round(mean * 100) / 100,
        lowest_live_calls: sorted[0] ?? null,
        sustained_fraction: pace,
        samples: samples.length,
        csv: {
          rows: CSV_ROWS,
          accepted,
          seconds: Math.round(uploadSeconds * 1000) / 1000,
          peak_rss_mb: uploadRss,
        },
      },
    };
  } finally {
    await client.end().catch(() => {});
    await service.stop();
    await tools.close();
  }
}
