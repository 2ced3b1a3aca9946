/**
 * What a call came to, for the console's and the portal's call pages: who answered, the
 * transfer, the recording player, the transcript as turns, the analysis (summary, success, data
 * as a table) and the tool calls of the timeline. Each part is read from the call when present
 * and left out when absent, so a call from before these fields (or still running) renders too.
 */
import { type Html, html } from './html.js';

/** The fields read here, all optional: the call's own type carries them when they exist. */
export interface CallOutcome {
  transcript?: string | null;
  recording_url?: string | null;
  answered_by?: string | null;
  transferred_to?: string | null;
  analysis?: {
    summary?: string | null;
    successful?: boolean | null;
    data?: Record<string, unknown> | null;
  } | null;
  events?: { status: string; at: string; detail: Record<string, unknown> }[];
}

/** The call's own object, read through the optional shape above (no cast: every field is checked). */
export function outcomeOf(call: object): CallOutcome {
  const get = (key: string): unknown => (key in call ? Reflect.get(call, key) : undefined);
  const str = (key: string) => {
    const value = get(key);
    return typeof value === 'string' ? value : null;
  };
  const analysis = get('analysis');
  const events = get('events');
  return {
    transcript: str('transcript'),
    recording_url: str('recording_url'),
    answered_by: str('answered_by'),
    transferred_to: str('transferred_to'),
    analysis:
      analysis && typeof analysis === 'object'
        ? {
            summary:
              typeof Reflect.get(analysis, 'summary') === 'string' ? Reflect.get(analysis, 'summary') : null,
            successful:
              typeof Reflect.get(analysis, 'successful') === 'boolean'
                ? Reflect.get(analysis, 'successful')
                : null,
            data: (() => {
              const data = Reflect.get(analysis, 'data');
              return data && typeof data === 'object' && !Array.isArray(data) ? { ...data } : null;
            })(),
          }
        : null,
    events: Array.isArray(events) ? events : [],
  };
}

/** An http(s) URL, or undefined (a `javascript:` or `data:` URL is never put in a link or player). */
export function playableUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:' ? url : undefined;
  } catch {
    return undefined;
  }
}

export const ANSWERED_BY: Record<string, string> = {
  human: 'A person',
  voicemail: 'Voicemail',
  unknown: 'Not known',
};

/** A recording player with a download link beside it; a URL that is not http(s) is shown as text. */
export function recordingPlayer(url: string | null | undefined): Html {
  if (!url) return html``;
  let playable = playableUrl(url);
  if (!playable) return html`<p>Recording: <span class="mono">${url}</span></p>`;
  // The simulator's recordings are served by this server: played from the page's own origin (the
  // Content Security Policy allows it, and a white-label page never names the platform's host).
  const path = new URL(playable).pathname;
  if (path.startsWith('/simulator/recordings/')) playable = path;
  return html`<div class="recording">
  <audio controls preload="none" src="${playable}" aria-label="Call recording"></audio>
  <a class="subtle" href="${playable}" rel="noreferrer noopener" download>Download the recording</a>
</div>`;
}

/** A turn's opening `Speaker:` (a role or a first name, a few words at most). */
const SPEAKER = /^([A-Za-z][\w .'-]{0,39}?)\s*:\s+/;
const AGENT_WORDS = ['agent', 'assistant', 'ai', 'bot'];

/** The transcript split into turns at each `Speaker:` line; text before any speaker is one turn of its own. */
export function transcriptTurns(
  transcript: string,
): { speaker: 'agent' | 'callee' | 'other'; text: string }[] {
  const turns: { speaker: 'agent' | 'callee' | 'other'; text: string }[] = [];
  for (const line of transcript.split(/\r?\n/)) {
    const match = SPEAKER.exec(line.trim());
    if (match) {
      const who = match[1].toLowerCase();
      const speaker = AGENT_WORDS.includes(who) ? 'agent' : 'callee';
      turns.push({ speaker, text: line.trim().slice(match[0].length) });
    } else if (line.trim()) {
      const last = turns.at(-1);
      if (last) last.text += `\n${line.trim()}`;
      else turns.push({ speaker: 'other', text: line.trim() });
    }
  }
  return turns;
}

export function transcriptView(transcript: string, labels: { agent: string; callee: string }): Html {
  const turns = transcriptTurns(transcript);
  return html`<ol class="turns" aria-label="Transcript">
  ${turns.map(
    (turn) =>
      html`<li class="turn turn-${turn.speaker}"><span class="turn-speaker">${
        turn.speaker === 'agent' ? labels.agent : turn.speaker === 'callee' ? labels.callee : 'Note'
      }</span><p class="turn-text">${turn.text}</p></li>`,
  )}
</ol>`;
}

function valueText(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="subtle">—</span>`;
  if (typeof value === 'boolean') return html`${value ? 'Yes' : 'No'}`;
  if (typeof value === 'object') return html`<span class="mono">${JSON.stringify(value)}</span>`;
  return html`${String(value)}`;
}

/** Summary, success and the extracted data as a table; a note while the analysis is not in. */
export function analysisView(analysis: CallOutcome['analysis'], final: boolean): Html {
  const data = analysis?.data ? Object.entries(analysis.data) : [];
  if (!analysis || (analysis.summary == null && analysis.successful == null && data.length === 0)) {
    return html`<p class="subtle">${final ? 'No analysis was reported for this call.' : 'The analysis appears here after the call ends.'}</p>`;
  }
  return html`${
    analysis.successful !== null && analysis.successful !== undefined
      ? html`<p class="call-status-line">${
          analysis.successful
            ? html`<span class="badge badge-success">Successful</span>`
            : html`<span class="badge badge-danger">Not successful</span>`
        }</p>`
      : ''
  }
${analysis.summary && html`<p class="summary">${analysis.summary}</p>`}
${
  data.length > 0 &&
  html`<div class="table-wrap" role="region" aria-label="Extracted data" tabindex="0"><table class="data-table">
  <thead><tr><th scope="col">Field</th><th scope="col">Value</th></tr></thead>
  <tbody>${data.map(([key, value]) => html`<tr><th scope="row" class="mono">${key}</th><td>${valueText(value)}</td></tr>`)}</tbody>
</table></div>`
}`;
}

/** The tool calls of the timeline: name, outcome, duration (the arguments are never stored). */
export function toolCallsView(events: CallOutcome['events']): Html {
  const calls = (events ?? []).filter((event) => event.status === 'tool_call');
  if (calls.length === 0) return html``;
  return html`<div class="table-wrap" role="region" aria-label="Tool calls" tabindex="0"><table>
  <thead><tr><th scope="col">Tool</th><th scope="col">Outcome</th><th scope="col">Duration</th><th scope="col">At</th></tr></thead>
  <tbody>${calls.map((event) => {
    const name = event.detail.name;
    const outcome = event.detail.outcome ?? event.detail.status;
    const ms = event.detail.duration_ms;
    const ok = outcome === 'ok' || outcome === 'succeeded' || outcome === 'success';
    return html`<tr>
    <td class="mono">${typeof name === 'string' ? name : '—'}</td>
    <td>${typeof outcome === 'string' ? html`<span class="badge ${ok ? 'badge-success' : 'badge-warning'}">${outcome.replace(/_/g, ' ')}</span>` : html`<span class="subtle">—</span>`}</td>
    <td>${typeof ms === 'number' ? `${ms} ms` : '—'}</td>
    <td><time datetime="${event.at}">${event.at.replace('T', ' ').slice(11, 19)} UTC</time></td>
  </tr>`;
  })}</tbody>
</table></div>`;
}

/** Who answered and where the call was transferred, as `<dt>/<dd>` pairs for a details list. */
export function answerDetails(outcome: CallOutcome): Html {
  return html`${outcome.answered_by && html`<dt>Answered by</dt><dd>${ANSWERED_BY[outcome.answered_by] ?? outcome.answered_by}</dd>`}
${outcome.transferred_to && html`<dt>Transferred to</dt><dd class="mono">${outcome.transferred_to}</dd>`}`;
}
