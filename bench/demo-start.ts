/**
 * `npm run bench:demo`: how fast `npm start` (the demo) is ready, and what it holds in memory.
 *
 * Runs `npm start` (its page-build check, then `tokenmarket start` with the default configuration,
 * config/devnet.json) on a fresh data folder, then again on the data the first run left (the
 * database and the devnet's chain), and for each start measures:
 * - `readyMs`: from the spawn of `npm start` to the first `/readyz` 200 (polled every 100 ms);
 * - `bannerMs`: from the spawn to the "is running" banner, and the figure the banner prints;
 * - the resident memory (RSS, from /proc) of every process of the demo once ready, 10 s later,
 *   and the largest total seen before it was ready: npm itself (the launcher: npm's process and
 *   its shell, reported apart from the demo's total), the service (Node, and the devnet's history
 *   process while it runs), the devnet node (anvil), the embedded Postgres (its processes
 *   summed; they share their buffers, so the sum counts the shared pages once per process that
 *   touched them) and the total; the total's proportional set size (PSS: each shared page
 *   divided among the processes that map it, so the sum is the memory the demo holds, each page
 *   counted once); and the CPU time each running part used so far (comparable on a loaded
 *   machine; the history process's own is gone with it);
 * - the machine's load average at the spawn and once ready (the 2 cores may be shared).
 * Baseline, in the same run before each start: the same command line loading the CLI only
 * (`tokenmarket help`: Node, the launcher and the command's entry), from the spawn to its exit.
 * Ports are taken from BENCH_DEMO_PORT_BASE (default 18080: API, +1 devnet, +2 Postgres) so that
 * it runs beside a demo on the default ports. BENCH_DEMO_LATER sets how many later starts are
 * measured (default 2). Writes bench/results/demo-start.json.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import * as path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const portBase = Number(process.env.BENCH_DEMO_PORT_BASE ?? 18080);
const laterStarts = Number(process.env.BENCH_DEMO_LATER ?? 2);

type Memory = {
  serviceMb: number;
  /** `npm start` itself (npm and the shell it runs the script in): not part of the demo's total. */
  launcherMb: number;
  devnetMb: number;
  postgresMb: number;
  totalMb: number;
  /** The total's proportional set size: shared pages counted once. */
  totalPssMb: number;
  processes: number;
  /** CPU time (user + system, s) the processes used so far: comparable on a loaded machine. */
  cpuSeconds: { service: number; devnet: number; postgres: number };
};
type StartFigures = {
  kind: "first" | "later";
  /** Baseline: `tokenmarket help` through the same launcher, spawn to exit, just before. */
  helpMs: number;
  readyMs: number;
  /** Load average (1, 5, 15 min) at the spawn and once ready. */
  loadAtStart: number[];
  loadAtReady: number[];
  bannerMs: number | null;
  bannerSeconds: number | null;
  memoryAtReady: Memory;
  memoryAfter10s: Memory;
  /** The memory when its total RSS was largest while waiting for readiness (sampled every ~100 ms). */
  peakBeforeReady: Memory | undefined;
};

function children(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command may hold spaces and parentheses: fields follow the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid) out.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

function rssKb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function pssKb(pid: number): number {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    return Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** CPU time (user + system, in clock ticks) a process used so far. */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

function loadAverage(): number[] {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).map(Number);
}

function command(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** Every process of the demo: the service's descendants, and anvil's own group (detached). */
function demoProcesses(servicePid: number): number[] {
  const seen = new Set<number>([servicePid]);
  const queue = [servicePid];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const child of children(pid)) {
      if (seen.has(child)) continue;
      seen.add(child);
      queue.push(child);
    }
  }
  return [...seen];
}

function memory(servicePid: number): Memory {
  const kb = { service: 0, launcher: 0, devnet: 0, postgres: 0, pss: 0 };
  const ticks = { service: 0, devnet: 0, postgres: 0 };
  const pids = demoProcesses(servicePid);
  // npm, and the shell it runs the start script in.
  const launcher = new Set([
    servicePid,
    ...children(servicePid).filter((pid) => command(pid).startsWith("sh -c")),
  ]);
  for (const pid of pids) {
    const cmd = command(pid);
    const rss = rssKb(pid);
    if (launcher.has(pid)) {
      kb.launcher += rss;
      continue;
    }
    kb.pss += pssKb(pid);
    const part = /anvil|hardhat/.test(cmd) ? "devnet" : /postgres/.test(cmd) ? "postgres" : "service";
    kb[part] += rss;
    ticks[part] += cpuTicks(pid);
  }
  const mb = (x: number) => Math.round(x / 1024);
  return {
    serviceMb: mb(kb.service),
    launcherMb: mb(kb.launcher),
    devnetMb: mb(kb.devnet),
    postgresMb: mb(kb.postgres),
    totalMb: mb(kb.service + kb.devnet + kb.postgres),
    totalPssMb: mb(kb.pss),
    processes: pids.length,
    // Linux reports CPU times in USER_HZ ticks, 100 per second.
    cpuSeconds: {
      service: ticks.service / 100,
      devnet: ticks.devnet / 100,
      postgres: ticks.postgres / 100,
    },
  };
}

async function ready(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** The baseline: the command loaded through the same launcher (bin/tokenmarket.js), doing nothing else. */
async function helpMs(): Promise<number> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, ["bin/tokenmarket.js", "help"], {
    cwd: root,
    stdio: "ignore",
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`tokenmarket help exited with ${code}`);
  return Math.round(performance.now() - startedAt);
}

async function runStart(dataDir: string, kind: "first" | "later"): Promise<StartFigures> {
  const baselineMs = await helpMs();
  const env = {
    ...process.env,
    LOG_LEVEL: "warn",
    TOKENMARKET__api__port: String(portBase),
    TOKENMARKET__devnet__port: String(portBase + 1),
    TOKENMARKET__database__embedded__port: String(portBase + 2),
    TOKENMARKET__database__embedded__dataDir: path.join(dataDir, "postgres"),
  };
  const loadAtStart = loadAverage();
  const startedAt = performance.now();
  // `npm start` as a user types it, in a process group of its own: a terminal's Ctrl-C reaches
  // the whole group, and so does the SIGINT below.
  const child: ChildProcess = spawn("npm", ["start"], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let bannerMs: number | null = null;
  let bannerSeconds: number | null = null;
  let output = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    output += chunk;
    const match = /is running \(ready in ([\d.]+) s\)|is running \(started in ([\d.]+) s\)/.exec(output);
    if (bannerMs === null && match) {
      bannerMs = performance.now() - startedAt;
      bannerSeconds = Number(match[1] ?? match[2]);
    }
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  // npm ends itself with the signal its script ended on (a clean Ctrl-C) or with the script's code.
  const exited = new Promise<number | string | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  let failed = false;
  void exited.then(() => {
    failed = true;
  });
  const readyz = `http://127.0.0.1:${portBase}/readyz`;
  let peak: Memory | undefined;
  while (!(await ready(readyz))) {
    if (failed) throw new Error(`the demo exited before it was ready:\n${stderr}\n${output}`);
    const now = memory(child.pid as number);
    if (peak === undefined || now.totalMb > peak.totalMb) peak = now;
    if (performance.now() - startedAt > 600_000) throw new Error("the demo was not ready within 10 minutes");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const readyMs = performance.now() - startedAt;
  const loadAtReady = loadAverage();
  const pid = child.pid as number;
  const memoryAtReady = memory(pid);
  // The banner follows readiness within a moment; wait for it (up to 30 s) to read its figure.
  for (let i = 0; i < 300 && bannerMs === null && !failed; i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const memoryAfter10s = memory(pid);
  process.kill(-(child.pid as number), "SIGINT");
  const code = await exited;
  if (code !== 0 && code !== "SIGINT")
    throw new Error(`the demo exited with ${code} after SIGINT:\n${stderr}`);
  return {
    kind,
    helpMs: baselineMs,
    readyMs: Math.round(readyMs),
    loadAtStart,
    loadAtReady,
    bannerMs: bannerMs === null ? null : Math.round(bannerMs),
    bannerSeconds,
    memoryAtReady,
    memoryAfter10s,
    peakBeforeReady: peak,
  };
}

const dataDir = mkdtempSync(path.join(tmpdir(), "tokenmarket-demo-bench-"));
try {
  const runs: StartFigures[] = [await runStart(dataDir, "first")];
  for (let i = 0; i < laterStarts; i++) runs.push(await runStart(dataDir, "later"));
  for (const run of runs) console.log(JSON.stringify(run));
  const result = {
    meta: {
      date: new Date().toISOString(),
      machine: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}`,
      node: process.version,
      command: "npm run bench:demo",
    },
    runs,
  };
  mkdirSync(path.join(root, "bench/results"), { recursive: true });
  writeFileSync(path.join(root, "bench/results/demo-start.json"), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
