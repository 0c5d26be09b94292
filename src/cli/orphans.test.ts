import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startEnv } from "../_test/start-env.js";

const projectRoot = path.resolve(import.meta.dirname, "../..");
/** Kill moments: every 100 ms of the first 2 s after the start. */
const MOMENTS_MS = Array.from({ length: 20 }, (_, i) => i * 100);

type Proc = { pid: number; cmdline: string };

/**
 * The live processes of this test's service: any process carrying the run's marker in its
 * environment (the launcher, its heap-limited child, the devnet node and their helpers inherit
 * it), and any process working in the data directory (the postmaster chdirs there, and so does
 * every backend and auxiliary process it forks; their environment is a clean one).
 */
function processesOf(marker: string, dataDir: string): Proc[] {
  const found: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state === "Z" || state === "X") continue;
      let ours = readFileSync(`/proc/${name}/environ`, "utf8").includes(marker);
      if (!ours) {
        try {
          ours = readlinkSync(`/proc/${name}/cwd`).startsWith(dataDir);
        } catch {
          // not allowed or gone
        }
      }
      if (ours) {
        const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
        found.push({ pid: Number(name), cmdline });
      }
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return found;
}

/**
 * A supervisor kills the process it started (systemd, Kubernetes, a shell's `kill -9`): whenever
 * that happens during start-up, nothing of the service may stay running, and the next start must
 * succeed. `tokenmarket start` runs itself again as a heap-limited child which starts the embedded
 * Postgres and the devnet node; the launcher is SIGKILLed at 20 moments of its first 2 s.
 */
describe("SIGKILL to tokenmarket start during its start-up", { timeout: 40 * 60_000 }, () => {
  const root = mkdtempSync(path.join(tmpdir(), "tokenmarket-orphans-"));
  // Run as root, Postgres runs as another user, who must reach the folder (else it is relocated).
  chmodSync(root, 0o755);
  const dataDir = path.join(root, "postgres");
  const marker = `TOKENMARKET_TEST_RUN=${randomUUID()}`;
  const started: ChildProcess[] = [];
  after(() => {
    // Should a try fail half way: nothing of it may outlive the test either.
    for (const p of processesOf(marker, root)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    rmSync(root, { recursive: true, force: true });
  });

  const env = async (historyDays = "0"): Promise<NodeJS.ProcessEnv> => {
    const [name, value] = marker.split("=") as [string, string];
    const { env: out } = await startEnv(dataDir, {
      [name]: value,
      // No simulated history by default: the devnet is ready once the market is deployed.
      TOKENMARKET__devnet__historyDays: historyDays,
    });
    delete out.TOKENMARKET_HEAP_MB;
    return out;
  };

  /** `tokenmarket start` as a supervisor starts it: the command itself, no npm or shell between. */
  const start = async (historyDays?: string) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "start"], {
      cwd: projectRoot,
      env: await env(historyDays),
      stdio: ["ignore", "pipe", "pipe"],
    });
    started.push(child);
    let output = "";
    const keep = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    return { child, exited, output: () => output };
  };

  /** Waits until no process of the service is left (a fast shutdown of Postgres takes a moment). */
  const assertNothingLeft = async (what: string, output: string) => {
    const deadline = Date.now() + 60_000;
    let left = processesOf(marker, root);
    while (left.length > 0 && Date.now() < deadline) {
      await sleep(100);
      left = processesOf(marker, root);
    }
    assert.deepEqual(
      left.map((p) => `${p.pid} ${p.cmdline}`),
      [],
      `${what}: processes left 60 s later\n${output.slice(-3000)}`,
    );
    const pidFile = path.join(dataDir, "postmaster.pid");
    assert.equal(existsSync(pidFile), false, `${what}: a postmaster.pid is left (an unclean stop)`);
  };

  it(`leaves nothing running and the next start succeeds, at ${MOMENTS_MS.length} moments of the first 2 s`, async (t) => {
    for (const moment of MOMENTS_MS) {
      const killed = await start();
      await sleep(moment);
      assert.ok(killed.child.pid !== undefined);
      // What ran at that moment, for the record: the launcher, its child, Postgres and its processes, the devnet.
      const running = processesOf(marker, root);
      killed.child.kill("SIGKILL");
      await killed.exited;
      await assertNothingLeft(`SIGKILL at ${moment} ms`, killed.output());

      const normal = await start();
      const began = Date.now();
      while (!normal.output().includes("tokenmarket is running")) {
        assert.ok(
          normal.child.exitCode === null && normal.child.signalCode === null,
          `the start after a SIGKILL at ${moment} ms exited:\n${normal.output().slice(-3000)}`,
        );
        assert.ok(
          Date.now() - began < 120_000,
          `the start after a SIGKILL at ${moment} ms is not running after 120 s:\n${normal.output().slice(-3000)}`,
        );
        await sleep(100);
      }
      normal.child.kill("SIGTERM");
      await normal.exited;
      await assertNothingLeft(
        `stop after the start that followed a SIGKILL at ${moment} ms`,
        normal.output(),
      );
      const postgres = running.filter(
        (p) => p.cmdline.startsWith("postgres") || p.cmdline.includes("bin/postgres"),
      );
      t.diagnostic(
        `SIGKILL at ${moment} ms (${running.length} processes running, ${postgres.length} of Postgres): nothing left; the next start ran and stopped in ${Date.now() - began} ms`,
      );
    }
  });

  it("leaves nothing running when killed while the devnet's history process writes a new chain", async () => {
    // A new chain (a kept one would be continued in the service's own process).
    rmSync(path.join(root, "devnet"), { recursive: true, force: true });
    const killed = await start("7");
    const began = Date.now();
    const writing = () => processesOf(marker, root).some((p) => p.cmdline.includes("devnet-history"));
    while (!writing()) {
      assert.ok(killed.child.exitCode === null, `the start exited:\n${killed.output().slice(-3000)}`);
      assert.ok(
        Date.now() - began < 120_000,
        `no history process within 120 s:\n${killed.output().slice(-3000)}`,
      );
      await sleep(100);
    }
    killed.child.kill("SIGKILL");
    await killed.exited;
    await assertNothingLeft("SIGKILL while the history is written", killed.output());
  });
});
