/** runPrepared: hot statements sent as named prepared statements, under the name written where they run, on both engines. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, type Executor, runPrepared } from '../../src/core/db/database.js';
import { createTestDatabase } from '../support/databases.js';
import { recordStatements } from '../support/statements.js';

let database: Database;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ database, drop } = await createTestDatabase());
  await sql`CREATE TABLE things (id text PRIMARY KEY, kind text NOT NULL, size integer NOT NULL)`.execute(
    database.db,
  );
  await sql`INSERT INTO things VALUES ('a', 'box', 1), ('b', 'box', 2), ('c', 'bag', 3), ('d', 'box', 4)`.execute(
    database.db,
  );
});
afterAll(() => drop());

describe('runPrepared', () => {
  // A literal in the text ('box') stays a constant; a value may be used twice.
  const boxesBetween = async (db: Executor, from: number, to: number) =>
    runPrepared<{ id: string }>(db, {
      name: 'test_boxes_between',
      text: `SELECT id FROM things WHERE kind = 'box' AND size >= $1 AND size <= $2 AND size <> $2 + 100 ORDER BY id`,
      values: [from, to],
    });

  it('answers each run with its own values and keeps literals constant', async () => {
    expect(await boxesBetween(database.db, 1, 2)).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(await boxesBetween(database.db, 2, 4)).toEqual([{ id: 'b' }, { id: 'd' }]);
    expect(await boxesBetween(database.db, 3, 3)).toEqual([]);
  });

  it('runs inside a transaction on its connection, seeing its uncommitted rows', async () => {
    await database.db
      .transaction()
      .execute(async (tx) => {
        await sql`INSERT INTO things VALUES ('e', 'box', 5)`.execute(tx);
        expect(await boxesBetween(tx, 5, 5)).toEqual([{ id: 'e' }]);
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await boxesBetween(database.db, 5, 5)).toEqual([]);
  });

  it('sends one named statement, under the name written where it runs, on every run', async () => {
    const sent = await recordStatements(async () => {
      await boxesBetween(database.db, 1, 4);
      await boxesBetween(database.db, 2, 2);
    });
    expect(sent).toHaveLength(2);
    expect(sent[0].name).toBe('test_boxes_between');
    expect(sent[1]).toEqual(sent[0]);
    // Any other query goes through unnamed, as before.
    const plain = await recordStatements(() => sql`SELECT 1`.execute(database.db));
    expect(plain).toEqual([{ text: 'SELECT 1' }]);
  });

  it('prepares each shape of a query under its name: the first keeps it, the next are numbered', async () => {
    const bySize = (db: Executor, order: 'ASC' | 'DESC') =>
      runPrepared<{ id: string }>(db, {
        name: 'test_things_by_size',
        text: `SELECT id FROM things WHERE size <= $1 ORDER BY size ${order}`,
        values: [2],
      });
    const sent = await recordStatements(async () => {
      expect(await bySize(database.db, 'ASC')).toEqual([{ id: 'a' }, { id: 'b' }]);
      expect(await bySize(database.db, 'DESC')).toEqual([{ id: 'b' }, { id: 'a' }]);
      expect(await bySize(database.db, 'ASC')).toEqual([{ id: 'a' }, { id: 'b' }]);
    });
    expect(sent.map((s) => s.name)).toEqual([
      'test_things_by_size',
      'test_things_by_size/2',
      'test_things_by_size',
    ]);
  });
});
