/** Child processes of the harness: start, wait until ready, measure memory, stop. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';

export interface Started {
  child: ChildProcess;
  baseUrl: string;
  /** Where the process's output goes. */
  logFile: string;
  /** The last lines the process wrote (shown when it fails). */
  tail(): string;
  /** Highest resident set size so far of the process and its children (MB). */
  peakRssMb(): number;
  /** CPU time (user + system) used so far by the process and its live children, in seconds. */
  cpuSeconds(): number;
  /**
   * Starts a new peak-memory window (Linux: writes 5 to /proc/<pid>/clear_refs); returns a
   * function giving the peak RSS (MB) since then, or null where the kernel does not allow it.
   */
  peakWindow(): () => number | null;
  stop(): Promise<void>;
}

function childPids(pid: number): number[] {
  try {
    const tasks = fs.readdirSync(`/proc/${pid}/task`);
    const children = tasks.flatMap((task) =>
      fs
        .readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
    return children.flatMap((child) => [child, ...childPids(child)]);
  } catch {
    return [];
  }
}

const SHARED_POSTGRES_WORK = /^postgres: (?:.*: )?(checkpointer|background writer|walwriter)\s*$/;

/**
 * CPU seconds used by a PostgreSQL server on this machine for one database: the backends serving
 * it and its autovacuum (by their process titles), plus the WAL writer, checkpointer and
 * background writer every database shares. Each process is read every 200 ms and its use since
 * the previous reading added, so a backend that exits (an idle pooled connection closed) keeps
 * what it used until its last reading instead of taking it away from the sum.
 */
export function startPostgresCpuMeter(database: string): { seconds(): number | null; stop(): void } {
  const lastSeen = new Map<number, number>();
  let total = 0;
  let found = false;
  // Processes already running when the meter starts count from then; later ones from their start.
  const sample = (first = false) => {
    const alive = new Set<number>();
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let title: string;
      try {
        title = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      } catch {
        continue;
      }
      if (!title.startsWith('postgres: ')) continue;
      if (
        !title.includes(` ${database} `) &&
        !title.endsWith(` ${database}`) &&
        !SHARED_POSTGRES_WORK.test(title)
      )
        continue;
      const pid = Number(entry);
      const used = cpuSecondsOf(pid);
      alive.add(pid);
      found = true;
      total += used - (lastSeen.get(pid) ?? (first ? used : 0));
      lastSeen.set(pid, used);
    }
    for (const pid of lastSeen.keys()) if (!alive.has(pid)) lastSeen.delete(pid);
  };
  sample(true);
  const timer = setInterval(sample, 200);
  timer.unref();
  return {
    seconds() {
      sample();
      return found ? total : null;
    },
    stop: () => clearInterval(timer),
  };
}

/** VmHWM (peak RSS) in kB from /proc; undefined where /proc is not available. */
function vmHwmKb(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS = (() => {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(result.stdout?.trim()) || 100;
})();

/** utime + stime of one process in seconds, from /proc/<pid>/stat; 0 where unavailable. */
function cpuSecondsOf(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/**
 * Starts `node <args>` and waits until `readyPath` answers 200. Peak memory comes from the
 * kernel's high-water mark (VmHWM), summed over the process and its children (cluster workers),
 * re-read every 250 ms so children that exit early still count.
 */
export async function startProcess(options: {
  name: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  readyPath: string;
  logFile: string;
  timeoutMs?: number;
}): Promise<Started> {
  const baseUrl = `http://127.0.0.1:${options.port}`;
  const log = fs.createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(process.execPath, options.args, {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    log.write(chunk);
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  const exitPromise = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );

  const peaks = new Map<number, number>();
  const sample = () => {
    if (!child.pid || exited) return;
    for (const pid of [child.pid, ...childPids(child.pid)]) {
      const kb = vmHwmKb(pid);
      if (kb !== undefined) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, kb));
    }
  };
  const sampler = setInterval(sample, 250);
  sampler.unref();

  const tail = () => lines.join('\n');
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopOnce());
  const stopOnce = async () => {
    sample();
    clearInterval(sampler);
    if (!exited) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exitPromise;
      clearTimeout(killer);
    }
    log.end();
  };

  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`${options.name} exited before it was ready:\n${tail()}`);
    }
    try {
      const response = await fetch(`${baseUrl}${options.readyPath}`);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `${options.name} was not ready within ${(options.timeoutMs ?? 180_000) / 1000} s:\n${tail()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  sample();
  return {
    child,
    baseUrl,
    logFile: options.logFile,
    tail,
    peakWindow: () => {
      sample();
      const pids = child.pid ? [child.pid, ...childPids(child.pid)] : [];
      let resettable = pids.length > 0;
      for (const pid of pids) {
        try {
          fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
        } catch {
          resettable = false;
        }
      }
      return () => {
        if (!resettable || exited) return null;
        sample();
        const kb = pids.reduce((sum, pid) => sum + (vmHwmKb(pid) ?? 0), 0);
        return Math.round(kb / 1024);
      };
    },
    cpuSeconds: () =>
      child.pid ? [child.pid, ...childPids(child.pid)].reduce((sum, pid) => sum + cpuSecondsOf(pid), 0) : 0,
    peakRssMb: () => {
      sample();
      return Math.round([...peaks.values()].reduce((a, b) => a + b, 0) / 1024);
    },
    stop,
  };
}
