/** Counting what reaches the database driver (round trips, prepared statement names). */
import pg from 'pg';

export interface SentStatement {
  text: string;
  /** The prepared statement's name, when it was sent as one. */
  name: string | undefined;
}

/**
 * The statements sent to the database while `work` runs, in order: both engines go through
 * `pg`'s Client, so this counts round trips. Test apps do not start their job worker, so nothing
 * else runs meanwhile.
 */
export async function recordStatements(work: () => Promise<unknown>): Promise<SentStatement[]> {
  const original = pg.Client.prototype.query;
  const sent: SentStatement[] = [];
  pg.Client.prototype.query = function (this: unknown, ...args: any[]) {
    const config = args[0];
    sent.push({
      text: typeof config === 'string' ? config : (config?.text ?? '?'),
      name: typeof config === 'string' ? undefined : config?.name,
    });
    return (original as any).apply(this, args);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}
