/**
 * Coalesces calls made in the same turn of the event loop into one batch. The job worker runs a
 * claimed batch's jobs together, so their steps arrive together: with `coalesce`, ten calls'
 * "queued → dialing" become one statement instead of ten, and so on for each step. A step taken
 * alone (a retry, a single job) is a batch of one.
 *
 * `run` gets the inputs queued before the next `setImmediate` (at most `maxBatch`, the rest go in
 * further batches) and answers one result per input, in order. When it fails, every caller of that
 * batch gets the error; steps must therefore be safe to repeat, as every dispatch step is.
 */
export function coalesce<In, Out>(
  run: (inputs: In[]) => Promise<Out[]>,
  maxBatch = 100,
): (input: In) => Promise<Out> {
  const queued: { input: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];

  function flush(): void {
    const batch = queued.splice(0, maxBatch);
    if (queued.length > 0) setImmediate(flush);
    run(batch.map((entry) => entry.input)).then(
      (outputs) => {
        if (outputs.length !== batch.length) {
          const error = new Error(`coalesce: ${outputs.length} results for ${batch.length} inputs`);
          for (const entry of batch) entry.reject(error);
          return;
        }
        for (const [i, entry] of batch.entries()) entry.resolve(outputs[i] as Out);
      },
      (error) => {
        for (const entry of batch) entry.reject(error);
      },
    );
  }

  return (input) =>
    new Promise<Out>((resolve, reject) => {
      if (queued.length === 0) setImmediate(flush);
      queued.push({ input, resolve, reject });
    });
}
