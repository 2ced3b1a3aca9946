/**
 * Jobs declared where they live: each capability exports the definitions of its queues — the
 * queue's name, the schema of its payload and the handler, typed by that schema — and the
 * composition root spreads them into one list for the job runner. A payload is checked against its
 * schema before its handler runs: one that does not match (written by a version that no longer
 * exists, or by hand) fails at once as a permanent failure instead of throwing somewhere inside
 * the handler on every retry.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type Job, type JobHandler, type JobKeyLimit, PermanentJobError } from './types.js';

/** A job of a queue whose jobs always belong to a tenant. */
export type TenantJob<P> = Job<P> & { tenantId: string };

export interface JobDefinition {
  readonly queue: string;
  readonly handle: JobHandler;
  /** A cap on this queue's jobs of one key running at once (event deliveries per endpoint). */
  readonly limit?: JobKeyLimit;
}

interface DefinitionOptions<S extends TSchema, J> {
  queue: string;
  payload: S;
  handle: (job: J) => Promise<unknown>;
  limit?: JobKeyLimit;
}

function checkerOf<S extends TSchema>(queue: string, schema: S) {
  const compiled = TypeCompiler.Compile(schema);
  return (payload: unknown): Static<S> => {
    if (compiled.Check(payload)) return payload;
    const first = compiled.Errors(payload).First();
    throw new PermanentJobError(
      `${queue}: the payload does not match its schema${first ? ` (${first.path || '/'}: ${first.message})` : ''}`,
    );
  };
}

/** A queue whose handler gets the payload its schema describes. */
export function defineJob<S extends TSchema>(options: DefinitionOptions<S, Job<Static<S>>>): JobDefinition {
  const payloadOf = checkerOf(options.queue, options.payload);
  return {
    queue: options.queue,
    limit: options.limit,
    handle: async (job) => {
      await options.handle({ ...job, payload: payloadOf(job.payload) });
    },
  };
}

/** A queue whose jobs belong to a tenant: a job without one fails at once. */
export function defineTenantJob<S extends TSchema>(
  options: DefinitionOptions<S, TenantJob<Static<S>>>,
): JobDefinition {
  const payloadOf = checkerOf(options.queue, options.payload);
  return {
    queue: options.queue,
    limit: options.limit,
    handle: async (job) => {
      const { tenantId } = job;
      if (!tenantId) throw new PermanentJobError(`${options.queue}: the job names no tenant`);
      await options.handle({ ...job, tenantId, payload: payloadOf(job.payload) });
    },
  };
}

/** The runner's handler table and per-queue limits from the definitions; a queue defined twice is a mistake. */
export function jobTable(definitions: readonly JobDefinition[]): {
  handlers: Record<string, JobHandler>;
  limits: Record<string, JobKeyLimit>;
} {
  const handlers: Record<string, JobHandler> = {};
  const limits: Record<string, JobKeyLimit> = {};
  for (const definition of definitions) {
    if (handlers[definition.queue]) throw new Error(`the job queue ${definition.queue} is defined twice`);
    handlers[definition.queue] = definition.handle;
    if (definition.limit) limits[definition.queue] = definition.limit;
  }
  return { handlers, limits };
}

/**
 * How a capability that queues a job wakes this process's job runner: the capabilities are built
 * before the runner (the runner needs all their handlers), so they ring a doorbell made first, and
 * the runner answers it once it exists.
 */
export interface Doorbell {
  ring(): void;
  answer(listener: () => void): void;
}

export function createDoorbell(): Doorbell {
  let listener: (() => void) | undefined;
  return {
    ring: () => listener?.(),
    answer(next) {
      listener = next;
    },
  };
}
