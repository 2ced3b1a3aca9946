/** Command-line options of `npm run bench` (see bench/README.md). */

export const SCENARIO_NAMES = [
  'baseline_static',
  'baseline_db_read',
  'baseline_db_write',
  'baseline_hash',
  'plans_list',
  'users_search',
  'users_search_open',
  'users_create',
  'mixed_create_read',
  'subscription_get',
  'webhook_trigger',
  'call_pipeline',
  'calls_list',
  'calls_list_status',
  'calls_list_range',
  'calls_list_direction',
  'users_list',
  'console_overview',
  'console_calls',
  'console_users',
  'console_analytics',
  'calls_create',
  'event_delivery',
  'event_latency',
  'inbound_answer',
  'inbound_under_load',
  'campaign_pace',
  'webhook_trigger_no_dispatch',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export type Storage = 'postgres' | 'embedded';

export interface BenchOptions {
  storages: Storage[];
  only: ScenarioName[];
  /** Measured seconds per scenario. */
  duration: number;
  /** Seconds of load before the measurement (discarded). */
  warmup: number;
  connections: number;
  /** Processes of the multi-process run on PostgreSQL; 0 skips it. */
  cluster: number;
  users: number;
  build: boolean;
  /** Start the service under `node --cpu-prof` and summarise the profile. */
  profile: boolean;
  /** Extra environment for the service (`--env NAME=value`, repeatable). */
  env: Record<string, string>;
  /**
   * How an open-loop scenario offers its rate: `paced` spreads the requests evenly (paced.ts);
   * `burst` is autocannon's overallRate (each second's share at the start of the second).
   */
  openLoop: 'paced' | 'burst';
  /** Where to write the JSON; default bench/results/latest[-embedded].json for a full run. */
  out: string | undefined;
  /** Keep the database (PostgreSQL) or data directory (embedded) after the run. */
  keep: boolean;
  /** call_pipeline's rates (triggers/s), each tried in turn, instead of fractions of baseline_db_write. */
  callRates: number[] | undefined;
  /** Drop the PostgreSQL seed template and build it again (bench/seed-template.ts). */
  rebuildSeed: boolean;
  /** True when every scenario runs with the standard settings (the run may update latest*.json). */
  standard: boolean;
}

const HELP = `npm run bench -- [options]
  --storage postgres|embedded|both   engines to measure (default both; postgres is skipped when no server answers)
  --only a,b                         scenarios to run (${SCENARIO_NAMES.join(', ')})
  --duration S                       measured seconds per scenario (default 10; call_pipeline: 3 × S per rate)
  --warmup S                         warm-up seconds per scenario (default 3)
  --connections N                    concurrent connections (default 32)
  --cluster N                        processes of the multi-process PostgreSQL run (default 2; 0 skips it)
  --users N                          seeded users (default 100000)
  --no-build                         use the existing dist/ (skip npm run build)
  --profile                          run the service under node --cpu-prof and print where the time goes
  --open-loop paced|burst            open-loop rates evenly spaced (default) or autocannon's burst per second
  --env NAME=value                   extra environment for the service (repeatable)
  --out FILE                         JSON output (default: bench/results/latest.json / latest-embedded.json
                                     for a full standard run, bench/results/partial*.json otherwise)
  --keep                             keep the benchmark database / data directory
  --rebuild-seed                     build the PostgreSQL seed template again even when it is current
  --call-rates R1,R2                 call_pipeline: these rates (triggers/s), each tried in turn, instead of
                                     fractions of baseline_db_write (compares CPU and WAL per call between runs)`;

function positiveNumber(name: string, raw: string | undefined, min: number): number {
  const value = Number(raw);
  if (raw === undefined || !Number.isFinite(value) || value < min) {
    throw new Error(`--${name} needs a number >= ${min}, got ${raw ?? 'nothing'}`);
  }
  return value;
}

export function parseOptions(argv: string[]): BenchOptions {
  const options: BenchOptions = {
    storages: ['postgres', 'embedded'],
    only: [...SCENARIO_NAMES],
    duration: 10,
    warmup: 3,
    connections: 32,
    cluster: 2,
    users: 100_000,
    build: true,
    profile: false,
    env: {},
    openLoop: 'paced',
    out: undefined,
    keep: false,
    callRates: undefined,
    rebuildSeed: false,
    standard: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eqAt = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const [flag, inline] = eqAt > 0 ? [arg.slice(0, eqAt), arg.slice(eqAt + 1)] : [arg, undefined];
    const next = () => inline ?? argv[++i];
    switch (flag) {
      case '--help':
      case '-h':
        console.log(HELP);
        process.exit(0);
        break;
      case '--storage': {
        const value = next();
        if (value === 'both') options.storages = ['postgres', 'embedded'];
        else if (value === 'postgres' || value === 'embedded') options.storages = [value];
        else throw new Error(`--storage must be postgres, embedded or both, got ${value}`);
        break;
      }
      case '--only': {
        const names = (next() ?? '').split(',').filter(Boolean);
        for (const name of names) {
          if (!(SCENARIO_NAMES as readonly string[]).includes(name)) {
            throw new Error(`unknown scenario ${name}; known: ${SCENARIO_NAMES.join(', ')}`);
          }
        }
        options.only = names as ScenarioName[];
        options.standard = false;
        break;
      }
      case '--duration':
        options.duration = positiveNumber('duration', next(), 1);
        break;
      case '--warmup':
        options.warmup = positiveNumber('warmup', next(), 0);
        break;
      case '--connections':
        options.connections = Math.floor(positiveNumber('connections', next(), 1));
        break;
      case '--cluster':
        options.cluster = Math.floor(positiveNumber('cluster', next(), 0));
        break;
      case '--users':
        options.users = Math.floor(positiveNumber('users', next(), 1));
        break;
      case '--no-build':
        options.build = false;
        break;
      case '--profile':
        options.profile = true;
        break;
      case '--env': {
        const pair = next();
        const eq = pair?.indexOf('=') ?? -1;
        if (!pair || eq < 1) throw new Error(`--env needs NAME=value, got ${pair ?? 'nothing'}`);
        options.env[pair.slice(0, eq)] = pair.slice(eq + 1);
        break;
      }
      case '--open-loop': {
        const value = next();
        if (value !== 'paced' && value !== 'burst')
          throw new Error(`--open-loop must be paced or burst, got ${value}`);
        options.openLoop = value;
        break;
      }
      case '--out':
        options.out = next();
        break;
      case '--keep':
        options.keep = true;
        break;
      case '--rebuild-seed':
        options.rebuildSeed = true;
        break;
      case '--call-rates':
        options.callRates = (next() ?? '').split(',').map((rate) => positiveNumber('call-rates', rate, 1));
        options.standard = false;
        break;
      default:
        throw new Error(`unknown option ${arg}\n\n${HELP}`);
    }
  }
  if (
    options.duration !== 10 ||
    options.connections !== 32 ||
    options.users !== 100_000 ||
    options.profile ||
    options.openLoop !== 'paced'
  ) {
    options.standard = false;
  }
  return options;
}
