// Preloaded (`node --require`) into every process the tests spawn through compiled.ts's nodeArgv():
// once its parent, the test worker, is gone (a worker ended on a timeout never runs its exit
// handlers), the process stops itself instead of running on and taking the CPU of the rest of the run.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
}, 1_000).unref();
