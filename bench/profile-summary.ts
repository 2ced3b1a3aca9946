/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by function and by package,
 * so a missed target can be explained from evidence. Also usable on its own:
 *   npx tsx bench/profile-summary.ts <file.cpuprofile> [top]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where code lives: a package name, a project file, node internals, or a V8 pseudo-frame. */
function owner(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  if (url.startsWith('node:')) return 'node internals';
  const project = /\/(dist|src|bench)\/(.+)$/.exec(url);
  if (project) return `${project[1]}/${project[2].split('/')[0]}`;
  return path.basename(url);
}

function shortUrl(url: string): string {
  const modules = /node_modules\/(.+)$/.exec(url);
  if (modules) return modules[1];
  const project = /\/((?:dist|src|bench)\/.+)$/.exec(url);
  return project ? project[1] : url;
}

export function summariseProfile(file: string, top = 20): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0) || 1;
  const idle = [...selfUs.entries()]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)')
    .reduce((a, [, us]) => a + us, 0);

  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    const name = `${frame.functionName || '(anonymous)'}  ${frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const who = owner(frame.url, frame.functionName);
    byOwner.set(who, (byOwner.get(who) ?? 0) + us);
  }
  const busy = total - idle || 1;
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)} %`;
  const socketWrites = [...selfUs.entries()]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === 'writev')
    .reduce((a, [, us]) => a + us, 0);
  const lines = [
    `profile ${path.basename(file)}: ${(total / 1e6).toFixed(1)} s sampled, ${((100 * idle) / total).toFixed(0)} % idle; shares below are of the busy time`,
    `(writev, the socket writes, is ${pct(socketWrites).trim()}: on a saturated machine a write on loopback wakes the`,
    ' reader (PostgreSQL, the load generator) and the thread often waits for the CPU inside it)',
    'self time by package / area:',
    ...[...byOwner.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([who, us]) => `  ${pct(us)}  ${who}`),
    `top ${top} functions by self time:`,
    ...[...byFunction.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => `  ${pct(us)}  ${name}`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(summariseProfile(file, top ? Number(top) : 20));
}

/** The newest .cpuprofile in `dir` (node --cpu-prof names them by time). */
export function newestProfile(dir: string): string | undefined {
  if (!fs.existsSync(dir)) return undefined;
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return files[0];
}
