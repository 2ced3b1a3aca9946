/**
 * Metrics across processes (src/cluster.ts): a scrape reaches one worker, which asks the primary;
 * the primary asks every worker for its process metrics (prom-client's AggregatorRegistry, over
 * the cluster's IPC channel) and answers with all of them, each series labelled with its
 * `worker`, so any worker can be scraped and every process's requests are counted. The
 * database's gauges are read by the scraped worker alone (service.ts).
 */
import cluster from 'node:cluster';
import client from 'prom-client';

const REQUEST = 'voiceplane:metrics-request';
const ANSWER = 'voiceplane:metrics-answer';
/** Longer than prom-client's own 5 s wait for the workers, so its answer (or failure) comes first. */
const PRIMARY_TIMEOUT_MS = 6_000;

interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
}

const isAnswer = (message: unknown): message is Answer =>
  typeof message === 'object' && message !== null && (message as Answer).type === ANSWER;

export const inClusterWorker = () => cluster.isWorker && typeof process.send === 'function';

/**
 * In a worker: the process metrics of all workers, summed by the primary; this process's own,
 * marked as such, when the primary does not answer in time.
 */
export function clusterProcessMetrics(
  registries: client.Registry[],
  local: () => Promise<string>,
): () => Promise<string> {
  // Each process's series carry its worker id, so the primary's sum keeps them apart: when a
  // worker is replaced its series end and the new one's start at 0, which Prometheus reads
  // correctly, where a summed counter would drop and look like a reset of every process's count.
  for (const registry of registries) registry.setDefaultLabels({ worker: String(cluster.worker?.id ?? 0) });
  new client.AggregatorRegistry(); // answers the primary's requests for this process's metrics
  client.AggregatorRegistry.setRegistries(registries);
  let nextId = 0;
  const waiting = new Map<number, (text: string | undefined) => void>();
  process.on('message', (message) => {
    if (!isAnswer(message)) return;
    waiting.get(message.id)?.(message.text);
    waiting.delete(message.id);
  });
  return async () => {
    const id = nextId++;
    const text = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve(undefined);
      }, PRIMARY_TIMEOUT_MS);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      process.send?.({ type: REQUEST, id });
    });
    return text ?? `# The processes' metrics could not be gathered: this process's alone.\n${await local()}`;
  };
}

/** In the primary: answers each worker's request with every worker's metrics summed. */
export function serveClusterMetrics(): void {
  const aggregator = new client.AggregatorRegistry();
  cluster.on('message', (worker, message) => {
    if (message?.type !== REQUEST || typeof message.id !== 'number') return;
    const answer = (text?: string) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, text } satisfies Answer);
    };
    aggregator.clusterMetrics().then(answer, () => answer());
  });
}
