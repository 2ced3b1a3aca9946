/**
 * Retell's webhook bodies and call objects translated to EngineReports (src/telephony/retell/events.ts):
 * the outcome of every published disconnection_reason, times and durations, malformed fields.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyDisconnection, readRetellWebhook, reportOfCall } from '../../src/telephony/retell/events.js';
import { RETELL_OPENAPI_PATH } from '../support/fake-retell.js';

/** Every disconnection_reason of Retell's published enum, and what it means for our call. */
const OUTCOMES: Record<string, 'completed' | 'no_answer' | 'failed'> = {
  user_hangup: 'completed',
  agent_hangup: 'completed',
  call_transfer: 'completed',
  inactivity: 'completed',
  max_duration_reached: 'completed',
  transfer_bridged: 'completed',
  transfer_cancelled: 'completed',
  dial_no_answer: 'no_answer',
  dial_busy: 'no_answer',
  user_declined: 'no_answer',
  voicemail_reached: 'no_answer',
  ivr_reached: 'no_answer',
  dial_failed: 'failed',
  invalid_destination: 'failed',
  telephony_provider_permission_denied: 'failed',
  telephony_provider_unavailable: 'failed',
  sip_routing_error: 'failed',
  marked_as_spam: 'failed',
  concurrency_limit_reached: 'failed',
  no_valid_payment: 'failed',
  scam_detected: 'failed',
  registered_call_timeout: 'failed',
  error_user_not_joined: 'failed',
  error_llm_websocket_open: 'failed',
  error_llm_websocket_lost_connection: 'failed',
  error_llm_websocket_runtime: 'failed',
  error_llm_websocket_corrupt_payload: 'failed',
  error_no_audio_received: 'failed',
  error_asr: 'failed',
  error_retell: 'failed',
  error_unknown: 'failed',
};

describe('translating webhooks', () => {
  const receivedAt = new Date('2026-05-04T10:05:00Z');
  const start = Date.parse('2026-05-04T10:00:00Z');
  const ended = (call: Record<string, unknown>) =>
    readRetellWebhook({ event: 'call_ended', call: { call_id: 'rc_1', ...call } }, receivedAt);

  it('decides every reason of the published enum (a new one must be added to this table)', () => {
    const document = JSON.parse(fs.readFileSync(RETELL_OPENAPI_PATH, 'utf8'));
    const published: string[] = document.components.schemas.DisconnectionReason.enum;
    expect([...published].sort()).toEqual(Object.keys(OUTCOMES).sort());
  });

  it.each(Object.entries(OUTCOMES))('%s → %s', (reason, outcome) => {
    const decision = classifyDisconnection(reason);
    expect(decision.outcome).toBe(outcome);
    expect(decision.failureReason !== undefined).toBe(outcome === 'failed');
    const reading = ended({ disconnection_reason: reason, call_status: 'ended' });
    expect(reading).toMatchObject({ ok: true, report: { kind: 'ended', outcome, endedReason: reason } });
  });

  it('an unknown reason: an error_ prefix fails, a normally ended call completes, else fails', () => {
    expect(classifyDisconnection('error_new_thing', 'ended').outcome).toBe('failed');
    expect(classifyDisconnection('some_new_hangup', 'ended').outcome).toBe('completed');
    expect(classifyDisconnection('some_new_dial_problem', 'not_connected').outcome).toBe('failed');
  });

  it('an answered call carries its times, answered seconds, transcript and recording', () => {
    const reading = ended({
      call_status: 'ended',
      disconnection_reason: 'agent_hangup',
      start_timestamp: start,
      end_timestamp: start + 95_600,
      duration_ms: 95_600,
      transcript: 'Agent: Hello\nUser: Hi',
      recording_url: 'https://retell.example/rec.wav',
      metadata: { voiceplane_call_id: 'call_ours' },
    });
    expect(reading).toEqual({
      ok: true,
      event: 'call_ended',
      report: {
        kind: 'ended',
        callId: 'call_ours',
        engineCallId: 'rc_1',
        outcome: 'completed',
        endedReason: 'agent_hangup',
        startedAt: new Date(start),
        endedAt: new Date(start + 95_600),
        durationSeconds: 96,
        transcript: 'Agent: Hello\nUser: Hi',
        recordingUrl: 'https://retell.example/rec.wav',
        answeredBy: 'human',
      },
    });
  });

  it('derives the duration from the timestamps when duration_ms is missing', () => {
    const reading = ended({
      disconnection_reason: 'user_hangup',
      start_timestamp: start,
      end_timestamp: start + 30_000,
    });
    expect(reading.ok && reading.report).toMatchObject({ durationSeconds: 30 });
  });

  it('an unanswered call has no start and no duration, and no call id without metadata', () => {
    const reading = ended({
      call_status: 'not_connected',
      disconnection_reason: 'dial_no_answer',
      start_timestamp: start,
      end_timestamp: start + 20_000,
      duration_ms: 20_000,
    });
    expect(reading.ok && reading.report).toEqual({
      kind: 'ended',
      callId: undefined,
      engineCallId: 'rc_1',
      outcome: 'no_answer',
      endedReason: 'dial_no_answer',
      endedAt: new Date(start + 20_000),
    });
  });

  it('malformed fields are treated as absent, never thrown', () => {
    const reading = ended({
      disconnection_reason: 42,
      start_timestamp: 'yesterday',
      end_timestamp: -5,
      duration_ms: 'long',
      transcript: { text: 'x' },
      metadata: 'call_ours',
    });
    expect(reading.ok && reading.report).toMatchObject({
      kind: 'ended',
      callId: undefined,
      endedReason: 'unknown',
      outcome: 'failed',
      endedAt: receivedAt,
    });
    expect(reading.ok && reading.report && 'transcript' in reading.report).toBe(false);
  });

  it('call_started starts; call_analyzed and other events move nothing; non-events are refused', () => {
    expect(
      readRetellWebhook(
        { event: 'call_started', call: { call_id: 'rc_1', start_timestamp: start } },
        receivedAt,
      ),
    ).toMatchObject({ ok: true, report: { kind: 'started', startedAt: new Date(start) } });
    expect(readRetellWebhook({ event: 'call_started', data: { call_id: 'rc_1' } }, receivedAt)).toMatchObject(
      {
        ok: true,
        report: { kind: 'started', startedAt: receivedAt },
      },
    );
    expect(readRetellWebhook({ event: 'call_analyzed', call: { call_id: 'rc_1' } }, receivedAt)).toEqual({
      ok: true,
      event: 'call_analyzed',
      report: undefined,
    });
    expect(readRetellWebhook({ event: 'transcript_updated', call: {} }, receivedAt)).toMatchObject({
      ok: true,
    });
    for (const body of [
      null,
      [],
      'call_ended',
      {},
      { event: 'call_ended' },
      { event: 'call_ended', call: {} },
    ]) {
      expect(readRetellWebhook(body, receivedAt).ok).toBe(false);
    }
  });

  it('reportOfCall leaves a registered call alone', () => {
    expect(reportOfCall({ call_id: 'rc', call_status: 'registered' }, receivedAt)).toBeUndefined();
    expect(reportOfCall({ call_id: 'rc', call_status: 'error' }, receivedAt, 'call_ours')).toMatchObject({
      kind: 'ended',
      outcome: 'failed',
      callId: 'call_ours',
      endedReason: 'error',
    });
  });
});
