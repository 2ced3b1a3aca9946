/**
 * The simulator's tool calls: each tool of an answered call's version is called once, with
 * arguments made from its parameters' schema (docs/engines.md), claimed in the dial record so an
 * attempt calls them once even when two processes ask about it.
 */
import { sql } from 'kysely';
import type { Db } from '../core/db/database.js';
import { coalesce } from '../core/jobs/batching.js';
import { type SimulatedConversation, sampleFor } from './simulated-conversation.js';
import type { ToolRunner } from './tool-paths.js';

const keyOf = (callId: string, attempt: number) => `${callId}\u0000${attempt}`;

export interface ToolsOfDial {
  call_id: string;
  attempt: number;
  conversation: SimulatedConversation | null;
}

/**
 * `start(dial, tenantId)` starts the dial's tools beside the call, as an engine calls them during a
 * conversation: the progress question that starts them does not wait for the partner's endpoints
 * (a slow tool must not hold a dispatch slot). A claim that fails (the database is away) calls
 * nothing, as an engine's lost tool request would.
 */
export function simulatedToolCalls(db: Db, runTool: ToolRunner | undefined) {
  /** Claims the tools of a turn's answered calls in one statement: each claimed once per attempt. */
  const claimTools = coalesce(async (keys: { callId: string; attempt: number }[]) => {
    const claimed = await db
      .updateTable('telephony_simulated_dials')
      .set({ conversation: sql`conversation || '{"toolsCalled": true}'::jsonb` })
      .where((eb) =>
        eb(
          eb.refTuple('call_id', 'attempt'),
          'in',
          keys.map((key) => eb.tuple(key.callId, key.attempt)),
        ),
      )
      .where(sql<boolean>`NOT (conversation ? 'toolsCalled')`)
      .returning([
        'call_id',
        'attempt',
        sql<{ name: string; parameters: unknown }[]>`coalesce(conversation -> 'tools', '[]'::jsonb)`.as(
          'tools',
        ),
      ])
      .execute();
    const byKey = new Map(claimed.map((row) => [keyOf(row.call_id, row.attempt), row.tools]));
    return keys.map((key) => byKey.get(keyOf(key.callId, key.attempt)) ?? []);
  });

  return function start(dial: ToolsOfDial, tenantId: string): void {
    const conversation = dial.conversation;
    if (!runTool || !conversation?.tools?.length || conversation.toolsCalled) return;
    conversation.toolsCalled = true;
    void (async () => {
      const tools = await claimTools({ callId: dial.call_id, attempt: dial.attempt });
      for (const tool of tools) {
        await runTool({
          tenantId,
          callId: dial.call_id,
          name: tool.name,
          arguments: sampleFor(tool.parameters),
        });
      }
    })().catch(() => {});
  };
}
