/** compileOnce: hot queries compiled once and sent as named prepared statements, on both engines. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileOnce, type Database } from '../../src/core/db.js';
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

describe('compileOnce', () => {
  // A literal in the builder ('box') stays a constant; the arguments go where their placeholders are,
  // even when one is used twice and in another order than declared.
  const boxesBetween = compileOnce(2, (db, from: number, to: number) =>
    db
      .selectFrom('things' as never)
      .select(['id' as never])
      .where('kind' as never, '=', 'box' as never)
      .where(sql`size`, '>=', from)
      .where(sql`size`, '<=', to)
      .where(sql`size`, '<>', sql`${to} + 100`)
      .orderBy('id' as never)
      .compile(),
  );

  it('answers each run with its own arguments and keeps literals constant', async () => {
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

  it('sends one named statement, the same name on every run', async () => {
    const sent = await recordStatements(async () => {
      await boxesBetween(database.db, 1, 4);
      await boxesBetween(database.db, 2, 2);
    });
    expect(sent).toHaveLength(2);
    expect(sent[0].name).toMatch(/^vp_\d+$/);
    expect(sent[1]).toEqual(sent[0]);
    // Any other query goes through unnamed, as before.
    const plain = await recordStatements(() => sql`SELECT 1`.execute(database.db));
    expect(plain).toEqual([{ text: 'SELECT 1' }]);
  });

  it('refuses a build that does not use an argument (a value derived from a placeholder)', async () => {
    const broken = compileOnce(1, (db, size: number) =>
      db
        .selectFrom('things' as never)
        .select(['id' as never])
        .where(sql`size`, '=', Number(size) + 1)
        .compile(),
    );
    await expect(broken(database.db, 1)).rejects.toThrow(/argument 0 .* is never used/);
  });
});
