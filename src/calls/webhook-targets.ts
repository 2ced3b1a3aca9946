/**
 * Webhook targets, cached per webhook id and process, so that a trigger for a known webhook is
 * one database round trip (the guarded insert) instead of two (a read, then the insert).
 *
 * An entry holds only what the insert needs and what cannot change while it stays true: the
 * agent, its tenant and owner (an agent's owner is fixed at creation), the published version's
 * number and that version's prompt, welcome message and phone number (agent_versions rows are
 * only ever inserted). The owner's status, balance and deletion, and the tenant's wallet, are
 * never cached.
 *
 * No TTL is needed for correctness: the guarded insert re-checks, in the same statement, that the
 * webhook id still names this agent at this published version and that the owner may call, and
 * stores nothing otherwise. The caller then forgets the entry and answers from a fresh read, so a
 * rotation, publish, block, deletion or exhausted balance is seen by the very next request, in
 * this process or any other sharing the database.
 */

import type { WebhookTarget } from '../agents/repository.js';
import { BoundedMap } from '../core/bounded-map.js';

/** What the guarded insert needs about a webhook's agent, immutable per published version. */
export interface CachedWebhookTarget {
  agent_id: string;
  tenant_id: string;
  user_id: string;
  published_version: number;
  prompt: string;
  welcome_message: string;
  phone_number: string;
}

export interface WebhookTargetCache {
  get(webhookId: string): CachedWebhookTarget | undefined;
  /** Remembers a target the guarded insert has just accepted. */
  set(webhookId: string, target: CachedWebhookTarget): void;
  /** Forgets `stale` (the guarded insert refused it), unless another request replaced it since. */
  forget(webhookId: string, stale: CachedWebhookTarget): void;
}

const MAX_ENTRIES = 10_000;
/** Prompts may be 20,000 characters: bound the memory too, not only the count (~16 MB at most). */
const MAX_CHARS = 8_000_000;

function sizeOf(target: CachedWebhookTarget): number {
  return target.prompt.length + target.welcome_message.length;
}

export function createWebhookTargetCache(
  options: { maxEntries?: number; maxChars?: number } = {},
): WebhookTargetCache {
  const entries = new BoundedMap<string, CachedWebhookTarget>({
    maxEntries: options.maxEntries ?? MAX_ENTRIES,
    maxSize: options.maxChars ?? MAX_CHARS,
    sizeOf,
  });
  return {
    get: (webhookId) => entries.get(webhookId),
    set(webhookId, target) {
      entries.set(webhookId, target);
    },
    forget(webhookId, stale) {
      if (entries.get(webhookId) === stale) entries.delete(webhookId);
    },
  };
}

/** The immutable part of a target the guarded insert accepted, to cache. */
export function cacheable(found: WebhookTarget): CachedWebhookTarget {
  return {
    agent_id: found.agent_id,
    tenant_id: found.tenant_id,
    user_id: found.user_id,
    published_version: found.published_version as number,
    prompt: found.prompt as string,
    welcome_message: found.welcome_message as string,
    phone_number: found.phone_number as string,
  };
}
