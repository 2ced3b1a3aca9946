/**
 * A lock file that keeps a second process from opening the same embedded data directory
 * (PGlite would let it, and the two would corrupt the files).
 *
 * The lock is a chain of numbered files, `voiceplane.lock.<n>`; the highest number is the lock, and
 * holds the pid of its holder, or `released`. A process takes the directory by creating the next
 * number with an exclusive create (a hard link of a fully written file: never seen empty or half
 * written), and only when the highest one is free: released, or held by a process that no longer
 * runs (killed, crashed). No file that may be the lock is ever renamed, rewritten or deleted by
 * anyone but its holder, so two processes that find the same stale lock at once cannot undo each
 * other's work; exactly one of them creates the next number. Older numbers are deleted by the
 * winner. (`voiceplane.lock`, the lock of earlier versions, counts as number 0.)
 *
 * Why a number can be taken only once: a process creates n+1 after reading n free; n cannot be
 * free while its creator runs, and a number is only deleted once a higher one exists, which stays.
 * A process that created a number and then sees a higher one has lost and removes its own.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface DirectoryLock {
  release(): void;
}

export class DirectoryLockedError extends Error {
  constructor(dir: string, pid: number, lockFile: string) {
    super(
      `The data directory ${dir} is in use by process ${pid}; stop it or set another DATA_DIR. ` +
        `(If no voiceplane process is running, process ${pid} is another program that reused the id: delete ${lockFile}.)`,
    );
    this.name = 'DirectoryLockedError';
  }
}

const LEGACY = 'voiceplane.lock';
const NUMBERED = /^voiceplane\.lock\.(\d+)$/;
const RELEASED = 'released';

const lockName = (generation: number) => (generation === 0 ? LEGACY : `${LEGACY}.${generation}`);

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The lock numbers present in `dir`, highest first. */
function generations(dir: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync(dir)) {
    if (name === LEGACY) found.push(0);
    const match = NUMBERED.exec(name);
    if (match) found.push(Number(match[1]));
  }
  return found.sort((a, b) => b - a);
}

function readLock(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Creates `file` holding `content` only if it does not exist yet; false if it does. */
function createExclusive(file: string, content: string): boolean {
  const draft = `${path.dirname(file)}/.${path.basename(file)}.draft-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  fs.writeFileSync(draft, content);
  try {
    fs.linkSync(draft, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(draft, { force: true });
  }
}

/** Replaces `file`'s content in one step (a rename over it). */
function replaceContent(file: string, content: string): void {
  const draft = `${path.dirname(file)}/.${path.basename(file)}.draft-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  fs.writeFileSync(draft, content);
  fs.renameSync(draft, file);
}

/** The pid holding a lock with this content, or undefined when the lock is free. */
function liveHolder(content: string): number | undefined {
  if (content === RELEASED) return undefined;
  const pid = Number(content);
  // Our own pid in the lock is a previous life of this process id (containers start at pid 1).
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  return processIsAlive(pid) ? pid : undefined;
}

/** What the lock of `dir` holds now: its holder's pid, `released`, or undefined when there is none. */
export function readDirectoryLock(dir: string): string | undefined {
  for (const generation of generations(dir)) {
    const content = readLock(path.join(dir, lockName(generation)));
    if (content !== undefined) return content;
  }
  return undefined;
}

export function acquireDirectoryLock(dir: string): DirectoryLock {
  for (let attempt = 0; attempt < 20; attempt++) {
    const latest = generations(dir)[0] ?? 0;
    const latestFile = path.join(dir, lockName(latest));
    const content = latest === 0 && !fs.existsSync(latestFile) ? RELEASED : readLock(latestFile);
    // Deleted meanwhile: a newer number exists now; look again.
    if (content === undefined) continue;
    const holder = liveHolder(content);
    if (holder !== undefined) throw new DirectoryLockedError(dir, holder, latestFile);

    const mine = latest + 1;
    const file = path.join(dir, lockName(mine));
    if (!createExclusive(file, String(process.pid))) continue;
    const newer = generations(dir).filter((generation) => generation > mine);
    if (newer.length > 0) {
      // Created from an outdated view: a number past ours was taken first. Ours was never the lock.
      fs.rmSync(file, { force: true });
      continue;
    }
    for (const older of generations(dir).filter((generation) => generation < mine)) {
      fs.rmSync(path.join(dir, lockName(older)), { force: true });
    }

    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      try {
        if (readLock(file) === String(process.pid)) replaceContent(file, RELEASED);
      } catch {}
      process.removeListener('exit', release);
    };
    process.on('exit', release);
    return { release };
  }
  throw new Error(`Could not lock ${dir}: too many processes starting at once`);
}
