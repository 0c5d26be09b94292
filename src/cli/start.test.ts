import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startEnv } from "../_test/start-env.js";

const projectRoot = path.resolve(import.meta.dirname, "../..");
const RUNS = 5;

type Proc = { pid: number; pgrp: number; state: string; cmdline: string };

/** Every live process (zombies left out: they are gone, only not yet reaped). */
function processes(): Proc[] {
  const found: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const state = fields[0] ?? "";
      if (state === "Z" || state === "X") continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      found.push({ pid: Number(name), pgrp: Number(fields[2]), state, cmdline });
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** The processes of the service: its process group, the Postgres server's group, and the pids seen running. */
function leftovers(groups: number[], pids: number[]): Proc[] {
  return processes().filter((p) => groups.includes(p.pgrp) || pids.includes(p.pid));
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Ctrl-C in a terminal: `npm start` in a process group of its own (as a shell's job), SIGINT to
 * the whole group. npm forwards its copy to the service too, so the service sees two signals at
 * once; it must take them as one request, stop gracefully and leave nothing behind: no Node
 * process, no devnet node, no Postgres (which runs in a group of its own).
 */
describe("Ctrl-C on npm start", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "tokenmarket-ctrl-c-"));
  // Run as root, Postgres runs as another user, who must reach the folder (else it is relocated).
  chmodSync(dataDir, 0o755);
  const started: ChildProcess[] = [];
  const postmasters: number[] = [];
  after(() => {
    // Should a run fail half way: nothing of it may outlive the test either.
    for (const pid of postmasters) {
      try {
        process.kill(pid, "SIGINT");
      } catch {
        // gone
      }
    }
    for (const child of started) {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`stops everything, ${RUNS} times out of ${RUNS}`, async () => {
    // One data directory for every run: after the first, Postgres starts without initdb.
    const { env } = await startEnv(path.join(dataDir, "postgres"), {
      // No simulated history: the devnet is ready once the market is deployed.
      TOKENMARKET__devnet__historyDays: "0",
    });

    for (let run = 1; run <= RUNS; run++) {
      const child = spawn("npm", ["start", "--silent"], {
        cwd: projectRoot,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      started.push(child);
      let output = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      const group = child.pid;
      assert.ok(group !== undefined, "npm started");

      const deadline = Date.now() + 90_000;
      while (!output.includes("tokenmarket is running")) {
        assert.ok(
          child.exitCode === null && child.signalCode === null,
          `run ${run}: exited early:\n${output}`,
        );
        assert.ok(Date.now() < deadline, `run ${run}: not running after 90 s:\n${output}`);
        await sleep(100);
      }

      // From the log: as root, the data directory may have been relocated (see src/postgres/).
      const postmaster = Number(
        /"postgres_pid":(\d+)[^\n]*"msg":"(embedded Postgres started|reusing the embedded Postgres)/.exec(
          output,
        )?.[1],
      );
      assert.ok(postmaster > 0, `run ${run}: the Postgres pid is logged:\n${output}`);
      postmasters.push(postmaster);
      const running = leftovers([group, postmaster], [postmaster]);
      assert.ok(
        running.some((p) => p.pid === postmaster),
        `run ${run}: the Postgres server ${postmaster} runs`,
      );
      // The devnet node (anvil) runs in a group of its own, so that Ctrl-C reaches the service
      // first; it is known by its state file inside this run's data folder.
      const nodes = processes().filter((p) => p.cmdline.includes("anvil") && p.cmdline.includes(dataDir));
      assert.equal(
        nodes.length,
        1,
        `run ${run}: one devnet node runs:\n${processes()
          .map((p) => p.cmdline)
          .filter((c) => c.includes("anvil"))
          .join("\n")}`,
      );
      assert.ok(
        running.some((p) => p.pgrp === group && p.cmdline.includes("bin/tokenmarket.js start")),
        `run ${run}: the service runs in the group`,
      );
      const pids = [...running, ...nodes].map((p) => p.pid);

      process.kill(-group, "SIGINT");
      assert.ok(await waitForExit(child, 30_000), `run ${run}: npm start still runs 30 s after SIGINT`);
      // What exited last may still be going away (a backend, a reparented child): a moment.
      let left = leftovers([group, postmaster], pids);
      for (let i = 0; i < 50 && left.length > 0; i++) {
        await sleep(100);
        left = leftovers([group, postmaster], pids);
      }
      assert.deepEqual(
        left.map((p) => `${p.pid} ${p.state} ${p.cmdline}`),
        [],
        `run ${run}: processes left after Ctrl-C`,
      );
      assert.match(output, /"msg":"shutting down"/, `run ${run}: a graceful stop`);
      assert.doesNotMatch(output, /exiting now|took too long/, `run ${run}: no forced exit:\n${output}`);
    }
  });
});

/**
 * The devnet starts beside the database: when the database cannot open, the devnet's start is
 * aborted at once (its week of history is never written) and its node does not outlive the
 * command.
 */
describe("npm start with the embedded Postgres' port taken", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "tokenmarket-pg-taken-"));
  chmodSync(dataDir, 0o755);
  const blocker = createServer();
  after(() => {
    blocker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("fails naming the port, and stops the devnet that was starting beside it", async () => {
    const { env, ports } = await startEnv(path.join(dataDir, "postgres"));
    const { pg: pgPort, devnet: devnetPort } = ports;
    await new Promise<void>((resolve) => blocker.listen(pgPort, "127.0.0.1", resolve));
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "start"], {
      cwd: projectRoot,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    assert.equal(code, 1, output);
    assert.match(output, new RegExp(`port ${pgPort} on 127\\.0\\.0\\.1 is taken`));
    // Seven days of history take the node far longer than a refused port takes the database.
    assert.doesNotMatch(output, /devnet history written/, "the devnet's start was aborted");
    const anvil = processes().filter((p) => p.cmdline.includes(`--port ${devnetPort} `));
    assert.deepEqual(anvil, [], "no devnet node is left");
  });
});
