/** Empty PostgreSQL databases for the operations suites (servers migrate them on start). */
import { emptyPostgresDatabase, POSTGRES_URL, postgresAnswers } from '../support/databases.js';

export const postgresAvailable = await postgresAnswers();

/** Warns once per file that a suite is skipped for want of PostgreSQL. */
export function warnWithoutPostgres(file: string): void {
  if (!postgresAvailable)
    console.warn(`${file}: skipped the PostgreSQL suite: no PostgreSQL answers at ${POSTGRES_URL}`);
}

export { emptyPostgresDatabase };
