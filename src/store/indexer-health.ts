/** Table `indexer_health`: each chain's indexer's last report about itself (for API processes without one). */
import type { ChainHealthReport } from "../model/index.js";
import type { Queryable } from "./db.js";
import { columnsOf, setExcluded, unnest } from "./unnest.js";

/** A stored report with its ages by the database's clock, so that no two machines' clocks are compared. */
export type StoredIndexerHealth = ChainHealthReport & {
  /** Seconds since the node last answered the head. */
  headAgeSeconds: number;
  /** Seconds since the indexer last reported (a dead indexer stops reporting). */
  reportAgeSeconds: number;
};

const COLUMNS = columnsOf<ChainHealthReport>({
  chain_id: ["int", (r) => r.chainId],
  phase: ["text", (r) => r.phase],
  head_block: ["bigint", (r) => r.headBlock],
  head_seen_at: ["timestamptz", (r) => r.headSeenAt],
  stopped_at: ["timestamptz", (r) => r.stoppedAt],
  error: ["text", (r) => r.error],
  eta_seconds: ["float8", (r) => r.etaSeconds],
});

/** Upserts the reports of chains the database knows (a chain's row is created by its indexer first). */
export async function saveIndexerHealth(db: Queryable, reports: readonly ChainHealthReport[]): Promise<void> {
  if (reports.length === 0) return;
  const r = unnest("r", COLUMNS, reports, 1);
  const names = Object.keys(COLUMNS);
  // reported_at: the database's clock, the one the readers measure ages with.
  await db.query(
    `INSERT INTO indexer_health (${names.join(", ")}, reported_at)
     SELECT r.*, now() FROM ${r.sql} WHERE EXISTS (SELECT 1 FROM chains c WHERE c.chain_id = r.chain_id)
     ON CONFLICT (chain_id) DO UPDATE SET ${setExcluded(...names.filter((name) => name !== "chain_id"), "reported_at")}`,
    r.params,
  );
}

/** Every chain's last report, with its ages measured by the database's clock. */
export async function loadIndexerHealth(db: Queryable): Promise<StoredIndexerHealth[]> {
  const { rows } = await db.query<{
    chain_id: number;
    phase: string;
    head_block: string | number | null;
    head_seen_at: Date;
    stopped_at: Date | null;
    error: string | null;
    eta_seconds: number | null;
    head_age: number;
    report_age: number;
  }>(
    `SELECT chain_id, phase, head_block, head_seen_at, stopped_at, error, eta_seconds,
       greatest(0, extract(epoch FROM now() - head_seen_at))::float8 AS head_age,
       greatest(0, extract(epoch FROM now() - reported_at))::float8 AS report_age
     FROM indexer_health ORDER BY chain_id`,
  );
  return rows.map((r) => ({
    chainId: r.chain_id,
    phase: r.phase,
    headBlock: r.head_block === null ? null : Number(r.head_block),
    headSeenAt: r.head_seen_at,
    stoppedAt: r.stopped_at,
    error: r.error,
    etaSeconds: r.eta_seconds,
    headAgeSeconds: r.head_age,
    reportAgeSeconds: r.report_age,
  }));
}
