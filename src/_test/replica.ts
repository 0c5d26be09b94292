/**
 * A Postgres primary and a streaming hot standby on loopback, both from the embedded binaries
 * (which have no pg_basebackup): the standby is made with the low-level backup API, by copying
 * the primary's data directory between pg_backup_start and pg_backup_stop.
 */
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import pg from "pg";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../embedded-postgres/index.js";
import { createSilentLogger, type Logger } from "../internal/logger.js";
import { freePort } from "./free-port.js";

export type ReplicaPair = {
  primary: EmbeddedPostgres;
  replica: EmbeddedPostgres;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** Stops both servers and removes their folders. */
  stop(): Promise<void>;
};

const SLOT = "tokenmarket_test_replica";

/** Files of a running data directory that a base backup leaves out (see "Making a Base Backup Using the Low Level API"). */
const EXCLUDED = new Set(["postmaster.pid", "postmaster.opts", "tokenmarket.launcher.json"]);
/** Folders whose contents are left out (the folders themselves must exist). */
const EMPTIED = new Set([
  "pg_wal",
  "pg_replslot",
  "pg_stat_tmp",
  "pg_dynshmem",
  "pg_notify",
  "pg_serial",
  "pg_snapshots",
  "pg_subtrans",
]);

/**
 * Starts a primary (its `database` prepared by `prepare`, e.g. migrated) and a standby that
 * streams from it through a physical replication slot.
 */
export async function startReplicaPair(options: {
  database?: string;
  logger?: Logger;
  prepare?: (primaryUrl: string) => Promise<void>;
}): Promise<ReplicaPair> {
  const logger = options.logger ?? createSilentLogger();
  const database = options.database ?? "tokenmarket";
  const root = mkdtempSync(path.join(tmpdir(), "tokenmarket-replica-"));
  chmodSync(root, 0o755);
  const servers: EmbeddedPostgres[] = [];
  const stop = async () => {
    for (const s of servers.reverse()) await s.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const primary = await startEmbeddedPostgres({
      dataDir: path.join(root, "primary"),
      port: await freePort(),
      logger,
      database,
      ephemeral: true,
    });
    servers.push(primary);
    await options.prepare?.(primary.url);

    const replicaDir = path.join(root, "replica");
    const admin = new pg.Client({ connectionString: primary.adminUrl });
    admin.on("error", () => {});
    await admin.connect();
    try {
      // The slot keeps the WAL from the backup's start until the standby has streamed it.
      await admin.query("SELECT pg_create_physical_replication_slot($1, true)", [SLOT]);
      await admin.query("SELECT pg_backup_start('tokenmarket-test-replica', true)");
      copyDataDir(primary.dataDir, replicaDir);
      const { rows } = await admin.query<{ labelfile: string }>(
        "SELECT labelfile FROM pg_backup_stop(false)",
      );
      writeFileSync(path.join(replicaDir, "backup_label"), rows[0]?.labelfile ?? "", { mode: 0o600 });
    } finally {
      await admin.end().catch(() => {});
    }
    const url = new URL(primary.url);
    const conninfo = `host=127.0.0.1 port=${primary.port} user=${decodeURIComponent(url.username)} password=${decodeURIComponent(url.password)} application_name=replica`;
    writeFileSync(path.join(replicaDir, "standby.signal"), "");
    appendFileSync(
      path.join(replicaDir, "postgresql.auto.conf"),
      `\nprimary_conninfo = '${conninfo.replaceAll("'", "''")}'\nprimary_slot_name = '${SLOT}'\n`,
    );
    if (process.getuid?.() === 0) {
      const owner = lstatSync(primary.dataDir);
      for (const f of ["backup_label", "standby.signal", "postgresql.auto.conf"])
        chownSync(path.join(replicaDir, f), owner.uid, owner.gid);
    }
    const replica = await startEmbeddedPostgres({
      dataDir: replicaDir,
      port: await freePort(),
      logger,
      database,
      ephemeral: true,
    });
    servers.push(replica);

    const caughtUp = async (timeoutMs = 30_000) => {
      const p = new pg.Client({ connectionString: primary.adminUrl });
      p.on("error", () => {});
      await p.connect();
      try {
        const deadline = Date.now() + timeoutMs;
        const target = (await p.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0]
          ?.lsn;
        for (;;) {
          const { rows } = await p.query<{ behind: string | null }>(
            "SELECT pg_wal_lsn_diff($1::pg_lsn, replay_lsn)::text AS behind FROM pg_stat_replication WHERE application_name = 'replica' AND state = 'streaming'",
            [target],
          );
          const behind = rows[0]?.behind;
          if (behind !== undefined && behind !== null && Number(behind) <= 0) return;
          if (Date.now() > deadline) throw new Error(`the replica did not catch up in ${timeoutMs} ms`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await p.end().catch(() => {});
      }
    };
    await caughtUp();
    return { primary, replica, caughtUp, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Copies a running data directory, skipping what a base backup omits and files that vanish meanwhile. */
function copyDataDir(from: string, to: string) {
  // As root the server runs as another user: the copy belongs to whoever owns the original.
  const owner = lstatSync(from);
  const own = (p: string) => {
    if (process.getuid?.() === 0) chownSync(p, owner.uid, owner.gid);
  };
  mkdirSync(to, { mode: 0o700 });
  own(to);
  const walk = (source: string, target: string, top: boolean) => {
    for (const name of readdirSync(source)) {
      if (top && EXCLUDED.has(name)) continue;
      if (name.startsWith(".s.PGSQL.")) continue; // the socket and its lock
      const s = path.join(source, name);
      const t = path.join(target, name);
      let stat: ReturnType<typeof lstatSync>;
      try {
        stat = lstatSync(s);
      } catch {
        continue; // removed while we copy (a temporary file): the WAL replay recreates what matters
      }
      if (stat.isDirectory()) {
        mkdirSync(t, { mode: 0o700 });
        own(t);
        if (top && EMPTIED.has(name)) {
          if (name === "pg_wal") {
            for (const sub of ["archive_status", "summaries"]) {
              mkdirSync(path.join(t, sub), { mode: 0o700 });
              own(path.join(t, sub));
            }
          }
          continue;
        }
        walk(s, t, false);
      } else if (stat.isFile()) {
        try {
          copyFileSync(s, t);
          own(t);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }
    }
  };
  walk(from, to, true);
}
