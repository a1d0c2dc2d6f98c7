/**
 * Load from a process of its own: wrk (Debian's package, C, one event loop per thread), never a
 * loop sharing the server's cores. Every run records the CPU the generator, and each process
 * under test, spent, so a report can say which one was the limit.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds a process has used (user + system), from /proc; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), counted from state (field 3).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Every process whose command name is `comm` (e.g. all of PostgreSQL's backends). */
export function pidsNamed(comm: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** CPU seconds the whole machine has spent busy (not idle, not waiting for I/O), from /proc/stat. */
function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  return (
    ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) /
    CLOCK_TICKS_PER_SECOND
  );
}

export type CpuUse = Record<string, { seconds: number; cores: number }>;

/**
 * CPU meters started now: `stop()` gives each one's CPU seconds and share of one core since, and
 * `machine`, everything the machine's cores did meanwhile (other processes and the kernel too).
 * The process sets are sampled every second, so a process that starts during the run (a new
 * PostgreSQL backend) counts from its start, and one that ends counts up to its last sample.
 */
export function meterCpu(processes: Record<string, () => number[]>) {
  const started = performance.now();
  const machineBefore = machineBusySeconds();
  const seen = new Map<string, Map<number, { first: number; last: number }>>();
  const sample = (initial: boolean) => {
    for (const [name, pids] of Object.entries(processes)) {
      const group = seen.get(name) ?? new Map<number, { first: number; last: number }>();
      seen.set(name, group);
      for (const pid of pids()) {
        const now = cpuSeconds(pid);
        if (now === 0) continue;
        const known = group.get(pid);
        if (known) known.last = now;
        else group.set(pid, { first: initial ? now : 0, last: now });
      }
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), 1000);
  timer.unref();
  return {
    stop(): CpuUse {
      clearInterval(timer);
      sample(false);
      const wall = (performance.now() - started) / 1000;
      const use: CpuUse = {};
      for (const [name, group] of seen) {
        let seconds = 0;
        for (const { first, last } of group.values()) seconds += last - first;
        use[name] = { seconds, cores: seconds / wall };
      }
      const machine = machineBusySeconds() - machineBefore;
      use.machine = { seconds: machine, cores: machine / wall };
      return use;
    },
  };
}

/**
 * Which resource bounded a run, from its CPU use: the machine's cores when nearly all were busy
 * (naming the largest users), else one process's single core (Node runs JavaScript on one
 * thread), else none: the run was bound by latency, not by a saturated CPU.
 */
export function cpuLimit(use: CpuUse, cores: number): string {
  const processes = Object.entries(use)
    .filter(([name]) => name !== 'machine')
    .sort(([, a], [, b]) => b.cores - a.cores);
  const top = processes
    .slice(0, 3)
    .map(([name, { cores: c }]) => `${name} ${c.toFixed(2)}`)
    .join(', ');
  const busy = use.machine?.cores ?? 0;
  if (busy >= 0.9 * cores)
    return `the machine's CPU (${busy.toFixed(2)} of ${cores} cores busy; most: ${top})`;
  const [name, single] = processes[0] ?? [];
  if (name && single && single.cores >= 0.8)
    return `the ${name} process (${single.cores.toFixed(2)} cores: its one JavaScript thread)`;
  return `no CPU saturated (${busy.toFixed(2)} of ${cores} cores busy; most: ${top}): latency-bound`;
}

export interface WrkResult {
  requests: number;
  durationSeconds: number;
  /** Responses outside 2xx/3xx. */
  non2xx: number;
  socketErrors: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU seconds wrk itself used, and its share of one core over the run. */
  generatorCpuSeconds: number;
  generatorCores: number;
}

/**
 * Runs wrk with a Lua script (its `done` prints one WRK_RESULT line of JSON) and reads its CPU
 * from the shell that waited for it (cutime/cstime count waited-for children).
 */
export function runWrk(options: {
  url: string;
  script: string;
  connections: number;
  threads?: number;
  seconds: number;
  env?: Record<string, string>;
}): Promise<WrkResult> {
  const wrk = process.env.WRK ?? 'wrk';
  const args = [
    `-t${options.threads ?? 1}`,
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    options.script,
    options.url,
  ];
  const quoted = [wrk, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `${quoted}; status=$?; cat /proc/$$/stat >&2; exit $status`], {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('WRK_RESULT '));
      if (code !== 0 || !line) {
        reject(new Error(`wrk failed (exit ${code}):\n${out}\n${err}`));
        return;
      }
      const r = JSON.parse(line.slice('WRK_RESULT '.length)) as {
        requests: number;
        duration_us: number;
        non2xx: number;
        socket_errors: number;
        p50_us: number;
        p99_us: number;
      };
      const stat = err.trim().split('\n').at(-1) ?? '';
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // cutime and cstime: fields 16 and 17, i.e. 13 and 14 after the state field.
      const generatorCpuSeconds =
        (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND;
      const durationSeconds = r.duration_us / 1e6;
      resolve({
        requests: r.requests,
        durationSeconds,
        non2xx: r.non2xx,
        socketErrors: r.socket_errors,
        p50Ms: r.p50_us / 1000,
        p99Ms: r.p99_us / 1000,
        generatorCpuSeconds,
        generatorCores: generatorCpuSeconds / durationSeconds,
      });
    });
  });
}

/** The `done` hook every script ends with: one machine-readable line. */
export const WRK_DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration_us":%d,"non2xx":%d,"socket_errors":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
