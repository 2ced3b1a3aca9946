/**
 * A two-node PostgreSQL HA cluster on loopback ports, in a temporary directory, for the failover
 * test (test/failover/failover.test.ts): one etcd, two Patroni nodes in synchronous mode, and
 * HAProxy routing to whichever node Patroni's REST API calls the primary. It installs nothing:
 * `haPrerequisites()` says what is missing, and the test skips with that message.
 *
 * The settings are the reference configuration of docs/operations.md ("A highly available
 * PostgreSQL"): Patroni `ttl 10, loop_wait 2, retry_timeout 3`, `synchronous_mode: true`;
 * HAProxy `option httpchk OPTIONS /primary`, `http-check expect status 200`,
 * `default-server inter 500 fall 1 rise 1 on-marked-down shutdown-sessions`.
 *
 * PostgreSQL refuses to run as root: as root, Patroni (and so PostgreSQL) runs as the `postgres`
 * user through `runuser`; as anyone else, as that user.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../support/server-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Patroni's dynamic settings (the DCS part), shared by both nodes: docs/operations.md's reference. */
export const PATRONI_DCS = {
  ttl: 10,
  loop_wait: 2,
  retry_timeout: 3,
  maximum_lag_on_failover: 1_048_576,
  synchronous_mode: true,
  primary_start_timeout: 0,
  postgresql: {
    use_pg_rewind: true,
    use_slots: true,
    parameters: {
      wal_level: 'replica',
      hot_standby: 'on',
      max_wal_senders: 10,
      max_replication_slots: 10,
      wal_log_hints: 'on',
      max_connections: 100,
    },
  },
};

function which(command: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The newest PostgreSQL server binaries of the Debian layout, or of PATH. */
function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (fs.existsSync(root)) {
    const versions = fs
      .readdirSync(root)
      .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return path.join(root, versions[0], 'bin');
  }
  const postgres = which('postgres');
  return postgres ? path.dirname(postgres) : undefined;
}

export interface Prerequisites {
  /** Set when the cluster cannot run here: why (the test's skip message). */
  missing?: string;
  binDir: string;
  /** The user Patroni and PostgreSQL run as: `postgres` when this process is root. */
  runAs?: { user: string; uid: number; gid: number };
}

export function haPrerequisites(): Prerequisites {
  const absent = ['patroni', 'etcd', 'haproxy'].filter((command) => !which(command));
  const binDir = postgresBinDir() ?? '';
  if (absent.length > 0) {
    return {
      binDir,
      missing: `${absent.join(', ')} not installed (Debian: apt-get install -y patroni etcd-server etcd-client python3-etcd haproxy)`,
    };
  }
  if (!binDir || !fs.existsSync(path.join(binDir, 'initdb'))) {
    return { binDir, missing: 'no PostgreSQL server binaries (initdb, postgres) found' };
  }
  if (process.getuid?.() !== 0) return { binDir };
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    if (!which('runuser')) return { binDir, missing: 'running as root without runuser' };
    return { binDir, runAs: { user: 'postgres', uid, gid } };
  } catch {
    return { binDir, missing: 'running as root and there is no postgres user to run PostgreSQL as' };
  }
}

export interface Node {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
}

export interface Member {
  name: string;
  role: 'leader' | 'replica' | 'sync_standby' | 'standby_leader' | string;
  state: string;
  lag?: number | string;
}

export interface HaCluster {
  /** postgres://… through HAProxy: always the primary, whichever node it is. */
  url: string;
  nodes: Node[];
  dir: string;
  /** Patroni's view of the members. */
  members(): Promise<Member[]>;
  /** Waits until one node leads, the other streams as its synchronous standby, and HAProxy routes writes. */
  waitHealthy(timeoutMs?: number): Promise<{ leader: Node; standby: Node }>;
  /** A planned switchover to the standby (Patroni REST `POST /switchover`); `at`: when it was asked for. */
  switchover(): Promise<{ from: Node; to: Node; at: number }>;
  /** SIGKILL of the primary's postmaster; `at`: when it was sent. */
  crashPrimary(): Promise<{ node: Node; at: number }>;
  /**
   * The primary's node lost (a host that stops answering): its Patroni and PostgreSQL are frozen
   * (SIGSTOP) until `thaw()`, so nothing refuses anything: connections and checks time out.
   */
  losePrimary(): Promise<{ node: Node; at: number; thaw(): void }>;
  /** The tail of every process's output, for a failure message. */
  logs(): string;
  stop(): Promise<void>;
}

interface Spawned {
  name: string;
  child: ChildProcess;
  output: string[];
}

/** Starts etcd, two Patroni nodes and HAProxy; resolves once the cluster is healthy. */
export async function startHaCluster(prerequisites: Prerequisites): Promise<HaCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vp-failover-'));
  const { runAs, binDir } = prerequisites;
  if (runAs) fs.chownSync(dir, runAs.uid, runAs.gid);
  const processes: Spawned[] = [];
  const nodes: Node[] = [];
  let stopped = false;
  let haproxyPort = 0;

  const start = (name: string, command: string, args: string[], asPostgres = false): Spawned => {
    const argv =
      asPostgres && runAs ? ['runuser', '-u', runAs.user, '--', command, ...args] : [command, ...args];
    const child = spawn(argv[0], argv.slice(1), {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${binDir}:${process.env.PATH ?? ''}` },
    });
    // Each process leads its own process group, written down for the reaper.
    fs.writeFileSync(path.join(dir, `${name.replace(/\W/g, '_')}.pgid`), String(child.pid));
    const spawned = { name, child, output: [] as string[] };
    const keep = (chunk: Buffer) => {
      spawned.output.push(chunk.toString());
      if (spawned.output.length > 400) spawned.output.splice(0, 200);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    processes.push(spawned);
    return spawned;
  };

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', killAll);
    // Patroni first (so it restarts nothing), then each node's postmaster (immediate shutdown), then the rest.
    for (const p of processes.filter((p) => p.name.startsWith('patroni'))) signalGroup(p.child, 'SIGKILL');
    for (const node of nodes) {
      const pid = postmasterPid(node);
      for (const frozen of pid ? [pid, ...childrenOf(pid)] : []) signal(frozen, 'SIGCONT');
    }
    for (const node of nodes) {
      const pid = postmasterPid(node);
      if (pid) signal(pid, 'SIGQUIT');
    }
    for (const p of processes) signalGroup(p.child, 'SIGKILL');
    await sleep(300);
    for (const node of nodes) {
      const pid = postmasterPid(node);
      if (pid) signal(pid, 'SIGKILL');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const killAll = () => {
    for (const p of processes) signalGroup(p.child, 'SIGKILL');
    for (const node of nodes) {
      const pid = postmasterPid(node);
      if (pid) signal(pid, 'SIGKILL');
    }
  };
  process.on('exit', killAll);
  startReaper(dir);

  try {
    // etcd: one member, on loopback ports of its own.
    const etcdClient = await freePort();
    const etcdPeer = await freePort();
    start('etcd', 'etcd', [
      '--name=etcd1',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=etcd1=http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster-state=new',
      // Patroni 3.0.2 (Debian 12) talks to etcd through its v2 API: its v3 client may let a primary
      // that was paused overwrite the new leader's key when it resumes (docs/operations.md).
      '--enable-v2=true',
    ]);
    await waitUntil('etcd to answer', 20_000, async () => {
      const health = await getJson(`http://127.0.0.1:${etcdClient}/health`);
      return health?.body?.health === 'true';
    });

    for (const name of ['node1', 'node2']) {
      const node = {
        name,
        pgPort: await freePort(),
        restPort: await freePort(),
        dataDir: path.join(dir, name),
      };
      nodes.push(node);
    }
    haproxyPort = await freePort();
    const scope = `vp${path.basename(dir).replace(/[^a-zA-Z0-9]/g, '')}`;
    for (const node of nodes) {
      // JSON is YAML: Patroni reads this file as its configuration.
      const config = {
        scope,
        name: node.name,
        log: { level: 'INFO' },
        restapi: {
          listen: `127.0.0.1:${node.restPort}`,
          connect_address: `127.0.0.1:${node.restPort}`,
        },
        etcd: { hosts: [`127.0.0.1:${etcdClient}`] },
        bootstrap: {
          dcs: PATRONI_DCS,
          initdb: [{ encoding: 'UTF8' }, { locale: 'C' }, 'data-checksums'],
          pg_hba: [
            'local all all trust',
            'host replication all 127.0.0.1/32 trust',
            'host all all 127.0.0.1/32 trust',
          ],
        },
        postgresql: {
          listen: `127.0.0.1:${node.pgPort}`,
          connect_address: `127.0.0.1:${node.pgPort}`,
          data_dir: node.dataDir,
          bin_dir: binDir,
          pgpass: path.join(dir, `${node.name}.pgpass`),
          authentication: {
            superuser: { username: 'postgres', password: 'postgres' },
            replication: { username: 'replicator', password: 'replicator' },
            rewind: { username: 'postgres', password: 'postgres' },
          },
          parameters: { unix_socket_directories: dir, fsync: 'on' },
          // A node that cannot rejoin by pg_rewind copies the primary afresh (a small database).
          remove_data_directory_on_rewind_failure: true,
          remove_data_directory_on_diverged_timelines: true,
        },
        tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
      };
      const file = path.join(dir, `${node.name}.yml`);
      fs.writeFileSync(file, JSON.stringify(config, null, 2));
      if (runAs) fs.chownSync(file, runAs.uid, runAs.gid);
    }

    // The first node bootstraps the cluster; the second then clones it.
    start('patroni node1', 'patroni', [path.join(dir, 'node1.yml')], true);
    await waitUntil('node1 to bootstrap as primary', 90_000, async () => {
      return (await getJson(`http://127.0.0.1:${nodes[0].restPort}/primary`))?.status === 200;
    });
    start('patroni node2', 'patroni', [path.join(dir, 'node2.yml')], true);

    const haproxyConfig = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(haproxyConfig, haproxyConfigText(haproxyPort, nodes));
    start('haproxy', 'haproxy', ['-db', '-f', haproxyConfig]);
  } catch (error) {
    const logs = processes.map((p) => `--- ${p.name}\n${p.output.join('').slice(-3_000)}`).join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\n${logs}`);
  }

  const rest = (node: Node) => `http://127.0.0.1:${node.restPort}`;
  const members = async (): Promise<Member[]> => {
    for (const node of nodes) {
      const cluster = await getJson(`${rest(node)}/cluster`);
      if (cluster?.status === 200 && Array.isArray(cluster.body?.members)) return cluster.body.members;
    }
    return [];
  };
  const byName = (name: string) => nodes.find((n) => n.name === name)!;

  const cluster: HaCluster = {
    url: `postgres://postgres@127.0.0.1:${haproxyPort}/postgres`,
    nodes,
    dir,
    members,
    async waitHealthy(timeoutMs = 90_000) {
      let found: { leader: Node; standby: Node } | undefined;
      let list: Member[] = [];
      const what = () => `a primary with a streaming synchronous standby (members: ${JSON.stringify(list)})`;
      await waitUntil(what, timeoutMs, async () => {
        list = await members();
        const leader = list.find((m) => m.role === 'leader' && m.state === 'running');
        // Patroni 3.0 calls a streaming standby `running`; later versions `streaming`.
        const standby = list.find((m) => m.role === 'sync_standby' && /^(running|streaming)$/.test(m.state));
        if (!leader || !standby) return false;
        // HAProxy routes to the leader once its check passes.
        if (!(await writable(haproxyPort))) return false;
        found = { leader: byName(leader.name), standby: byName(standby.name) };
        return true;
      });
      return found!;
    },
    async switchover() {
      const { leader, standby } = await cluster.waitHealthy();
      const at = Date.now();
      const answer = await fetch(`${rest(leader)}/switchover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leader: leader.name, candidate: standby.name }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await answer.text();
      if (answer.status !== 200) throw new Error(`switchover refused: ${answer.status} ${text}`);
      return { from: leader, to: standby, at };
    },
    async crashPrimary() {
      const { leader } = await cluster.waitHealthy();
      const pid = postmasterPid(leader);
      if (!pid) throw new Error(`no postmaster.pid in ${leader.dataDir}`);
      const at = Date.now();
      signal(pid, 'SIGKILL');
      return { node: leader, at };
    },
    async losePrimary() {
      const { leader } = await cluster.waitHealthy();
      const pid = postmasterPid(leader);
      const patroni = processes.find((p) => p.name === `patroni ${leader.name}`)?.child.pid;
      if (!pid || !patroni) throw new Error(`no processes found for ${leader.name}`);
      // Patroni's process group, the postmaster, and each of its processes (every backend and
      // auxiliary process of PostgreSQL is a session of its own; a stopped postmaster forks no more).
      const at = Date.now();
      signal(-patroni, 'SIGSTOP');
      signal(pid, 'SIGSTOP');
      const children = childrenOf(pid);
      for (const child of children) signal(child, 'SIGSTOP');
      return {
        node: leader,
        at,
        thaw: () => {
          for (const child of children) signal(child, 'SIGCONT');
          signal(pid, 'SIGCONT');
          signal(-patroni, 'SIGCONT');
        },
      };
    },
    logs() {
      return processes
        .map((p) => `--- ${p.name}\n${p.output.join('').slice(-(Number(process.env.HA_LOG_CHARS) || 4_000))}`)
        .join('\n');
    },
    stop,
  };
  try {
    await cluster.waitHealthy(120_000);
  } catch (error) {
    const logs = cluster.logs();
    await stop();
    throw new Error(`${(error as Error).message}\n${logs}`);
  }
  return cluster;
}

/**
 * A test process killed outright (a vitest timeout, SIGKILL) runs no exit handler: a detached
 * shell waits for this process to end and then kills what the cluster started (each process
 * group, each postmaster) and removes the directory. A normal stop() removes the directory
 * first, which ends the reaper.
 */
function startReaper(dir: string): void {
  const script = `
    while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
    [ -d "$2" ] || exit 0
    for f in "$2"/*.pgid; do [ -f "$f" ] && kill -9 -- -"$(cat "$f")" 2>/dev/null; done
    for f in "$2"/node*/postmaster.pid; do [ -f "$f" ] && kill -9 "$(head -n 1 "$f")" 2>/dev/null; done
    rm -rf "$2"`;
  spawn('sh', ['-c', script, 'reaper', String(process.pid), dir], {
    detached: true,
    stdio: 'ignore',
  }).unref();
}

export function haproxyConfigText(port: number, nodes: Node[]): string {
  return `global
  maxconn 1000

defaults
  mode tcp
  retries 0
  timeout connect 1s
  timeout client 30m
  timeout server 30m
  timeout check 1s

listen primary
  bind 127.0.0.1:${port}
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 500 fall 1 rise 1 on-marked-down shutdown-sessions
${nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} maxconn 200 check port ${n.restPort}`).join('\n')}
`;
}

/** True when a connection through HAProxy lands on a server that takes writes. */
async function writable(port: number): Promise<boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: 1_000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query('SHOW transaction_read_only');
    return rows[0]?.transaction_read_only === 'off';
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function postmasterPid(node: Node): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((child) => Number.isInteger(child) && child > 0);
  } catch {
    return [];
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {}
}

function signalGroup(child: ChildProcess, name: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, name);
  } catch {
    signal(child.pid, name);
  }
}

async function getJson(url: string): Promise<{ status: number; body: any } | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const text = await response.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, body };
  } catch {
    return undefined;
  }
}

async function waitUntil(
  what: string | (() => string),
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(200);
  }
}
