/**
 * A reporter that ends a run with its slowest test files (the time of their tests and hooks), so
 * a run that got slower says where: `.ci/run` prints it for each pass.
 */
import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 15;

export default class SlowestFiles implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules
      .map((module) => ({ file: module.relativeModuleId, seconds: module.diagnostic().duration / 1000 }))
      .sort((a, b) => b.seconds - a.seconds);
    const total = rows.reduce((sum, row) => sum + row.seconds, 0);
    const lines = rows.slice(0, SHOWN).map((row) => `  ${row.seconds.toFixed(1).padStart(6)} s  ${row.file}`);
    process.stdout.write(
      `\nslowest test files (tests and hooks; ${total.toFixed(0)} s over ${rows.length} files):\n${lines.join('\n')}\n`,
    );
  }
}
