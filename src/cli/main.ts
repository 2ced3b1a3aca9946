/**
 * The `voiceplane` command (`npx voiceplane …` runs scripts/voiceplane.mjs, which builds dist/ when
 * stale and then runs this file; `node dist/cli/main.js …` where dist/ is shipped). See run.ts for
 * the exit codes and docs/cli.md for the commands.
 */
import { runCli } from './run.js';

// `voiceplane tenants list | head -1`: a reader that stops early is not a failure worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const code = await runCli(process.argv.slice(2));
process.exitCode = code;
// Everything the command opened is closed by now, so the process ends by itself. Should a library
// still hold a handle open, a one-shot command must not hang a script: leave anyway, shortly.
setTimeout(() => process.exit(code), 2_000).unref();
