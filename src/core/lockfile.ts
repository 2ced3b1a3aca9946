/**
 * A lock file that keeps a second process from opening the same embedded data directory
 * (PGlite would let it, and the two would corrupt the files).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface DirectoryLock {
  release(): void;
}

export class DirectoryLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The data directory ${dir} is in use by process ${pid}; stop it or set another DATA_DIR. ` +
        `(If no voiceplane process is running, process ${pid} is another program that reused the id: delete ${path.join(dir, 'voiceplane.lock')}.)`,
    );
    this.name = 'DirectoryLockedError';
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates the lock holding our pid in one step: it is never seen empty or half written. */
function createLock(lockPath: string): boolean {
  const draft = `${lockPath}.${process.pid}.${crypto.randomBytes(6).toString('hex')}`;
  fs.writeFileSync(draft, String(process.pid));
  try {
    fs.linkSync(draft, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(draft, { force: true });
  }
}

function readLock(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Moves a stale lock (its process is gone) out of the way. Two processes may find the same stale
 * lock at once: the move is atomic, and a process that finds it moved a live lock instead (the
 * other one's, just created) puts it back and reports it.
 */
function removeStaleLock(dir: string, lockPath: string, stale: string): void {
  const aside = `${lockPath}.stale.${process.pid}.${crypto.randomBytes(6).toString('hex')}`;
  try {
    fs.renameSync(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readLock(aside);
  if (moved !== stale) {
    try {
      fs.linkSync(aside, lockPath);
    } catch {}
    fs.rmSync(aside, { force: true });
    throw new DirectoryLockedError(dir, Number(moved));
  }
  fs.rmSync(aside, { force: true });
}

export function acquireDirectoryLock(dir: string): DirectoryLock {
  const lockPath = path.join(dir, 'voiceplane.lock');
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createLock(lockPath)) {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        try {
          if (fs.readFileSync(lockPath, 'utf8') === String(process.pid)) fs.unlinkSync(lockPath);
        } catch {}
        process.removeListener('exit', release);
      };
      process.on('exit', release);
      return { release };
    }
    const holder = readLock(lockPath);
    if (holder === undefined) continue;
    const pid = Number(holder);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processIsAlive(pid)) {
      throw new DirectoryLockedError(dir, pid);
    }
    // A stale lock from a process that died (kill -9): take it over.
    removeStaleLock(dir, lockPath, holder);
  }
  throw new Error(`Could not lock ${dir}`);
}
