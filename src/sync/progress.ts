import type { MultiBar, SingleBar } from "cli-progress";
import { formatDuration } from "../internal/duration.js";
import type { Logger } from "../internal/logger.js";
import {
  type ChainHealthReport,
  type ChainProgress,
  type Checkpoint,
  lagOf,
  type SyncFigures,
} from "../model/index.js";
import type { FactoryScanProgress } from "./factory-scan.js";

/** `standby`: another process holds the chain's writer lock; this one waits to take over. */
export type ChainPhase =
  | "standby"
  | "starting"
  | "scanning-factories"
  | "backfill"
  | "following"
  | "stopped"
  | "failed";

/**
 * What the indexer knows about one chain right now: its progress (blocks and swaps per second over
 * the last `rateWindowMs` of batches, null before the first) and its health report.
 */
export type ChainStatus = ChainProgress &
  ChainHealthReport & {
    phase: ChainPhase;
    /** Null before the first checkpoint is known. */
    indexedBlock: number | null;
    swapsIngested: number;
    /**
     * The node's answers contradict each other (unlinked headers…) and the indexer is backing off:
     * since when, how many times in a row, the last one in words. Null once an answer is consistent.
     */
    inconsistent: { since: Date; count: number; message: string } | null;
    /** While the factories are scanned for older pools (phase "scanning-factories"); null otherwise. */
    factoryScan: FactoryScanProgress | null;
  };

export type Progress = {
  status(): ChainStatus;
  phase(phase: ChainPhase, error?: string | null): void;
  checkpoint(checkpoint: Checkpoint): void;
  head(block: number, timestamp: number): void;
  /** One more inconsistent answer in a row. */
  inconsistent(message: string): void;
  /** The node's answers are consistent again. */
  consistent(): void;
  /** Where the factory scan stands; null once it is over. */
  factoryScan(progress: FactoryScanProgress | null): void;
  batch(batch: { blocks: number; swaps: number; events: number; elapsedMs: number }): void;
  figures(): SyncFigures;
  stop(): void;
};

/**
 * Tracks a chain's progress: rates over a sliding window, an info log line every
 * `logIntervalMs` (snake_case fields; `logger` carries the chain id), and a progress bar when
 * one is given (TTY only).
 */
/** Phases a chain passes through on its way back after a failure (its last error is kept). */
const restarting: ReadonlySet<ChainPhase> = new Set(["starting", "scanning-factories"]);

export function createProgress(args: {
  chainId: number;
  name: string;
  startBlock: number;
  logger: Logger;
  logIntervalMs: number;
  bars: MultiBar | null;
  rateWindowMs?: number;
}): Progress {
  const { logger } = args;
  const windowMs = args.rateWindowMs ?? 30_000;
  const samples: { at: number; blocks: number; swaps: number; ms: number }[] = [];
  let bar: SingleBar | null = null;
  let lastLog = 0;
  const s: ChainStatus = {
    chainId: args.chainId,
    name: args.name,
    phase: "starting",
    indexedBlock: null,
    indexedBlockTime: null,
    headBlock: null,
    headBlockTime: null,
    lagBlocks: null,
    lagSeconds: null,
    blocksPerSecond: null,
    swapsPerSecond: null,
    swapsIngested: 0,
    error: null,
    headSeenAt: new Date(),
    stoppedAt: null,
    etaSeconds: null,
    inconsistent: null,
    factoryScan: null,
  };

  const refresh = () => {
    ({ lagBlocks: s.lagBlocks, lagSeconds: s.lagSeconds } = lagOf(s));
    const now = Date.now();
    while (samples.length > 0 && (samples[0]?.at ?? now) < now - windowMs) samples.shift();
    if (samples.length > 0) {
      // Rates over the time spent in batches and between them, from the first sample's start.
      const first = samples[0] as (typeof samples)[number];
      const span = Math.max(now - (first.at - first.ms), 1) / 1000;
      s.blocksPerSecond = samples.reduce((a, x) => a + x.blocks, 0) / span;
      s.swapsPerSecond = samples.reduce((a, x) => a + x.swaps, 0) / span;
    }
    s.etaSeconds =
      s.phase === "backfill" && s.lagBlocks !== null && s.blocksPerSecond !== null && s.blocksPerSecond > 0
        ? s.lagBlocks / s.blocksPerSecond
        : null;
    if (args.bars && s.headBlock !== null && s.indexedBlock !== null && s.phase === "backfill") {
      const total = Math.max(1, s.headBlock - args.startBlock + 1);
      const value = Math.min(total, Math.max(0, s.indexedBlock - args.startBlock + 1));
      const payload = {
        chain: s.name,
        bps: (s.blocksPerSecond ?? 0).toFixed(0),
        sps: (s.swapsPerSecond ?? 0).toFixed(0),
        lag: s.lagBlocks ?? "?",
        eta: formatDuration(s.etaSeconds),
      };
      if (!bar) bar = args.bars.create(total, value, payload);
      else {
        bar.setTotal(total);
        bar.update(value, payload);
      }
    }
  };

  const logLine = (force: boolean) => {
    const now = Date.now();
    // Following the head at no lag, a line every few seconds says nothing: a heartbeat is enough.
    const interval =
      s.phase === "following" && (s.lagBlocks ?? 0) === 0
        ? args.logIntervalMs * FOLLOWING_LOG_FACTOR
        : args.logIntervalMs;
    if (!force && now - lastLog < interval) return;
    lastLog = now;
    logger.info(
      {
        phase: s.phase,
        indexed_block: s.indexedBlock,
        head_block: s.headBlock,
        lag_blocks: s.lagBlocks,
        lag_seconds: s.lagSeconds,
        eta_seconds: s.etaSeconds === null ? null : Math.round(s.etaSeconds),
        eta: s.etaSeconds === null ? null : formatDuration(s.etaSeconds),
        blocks_per_second: round(s.blocksPerSecond),
        swaps_per_second: round(s.swapsPerSecond),
        swaps_ingested: s.swapsIngested,
      },
      "indexing progress",
    );
  };

  return {
    status: () => {
      refresh();
      return { ...s };
    },
    phase(phase, error) {
      const changed = phase !== s.phase;
      s.phase = phase;
      // A restart keeps the last failure's reason until the chain gets going again: a chain that
      // fails at every start (a dead node) says why at every moment, not only between attempts.
      s.error = error !== undefined ? error : restarting.has(phase) ? s.error : null;
      if (phase === "failed") s.stoppedAt ??= new Date();
      refresh();
      if (changed && (phase === "following" || phase === "backfill")) logLine(true);
      if (phase !== "backfill" && bar) {
        bar.stop();
        args.bars?.remove(bar);
        bar = null;
      }
    },
    checkpoint(checkpoint) {
      s.indexedBlock = checkpoint.block;
      s.indexedBlockTime = checkpoint.time;
      refresh();
    },
    head(block, timestamp) {
      s.headSeenAt = new Date();
      s.headBlock = block;
      s.headBlockTime = new Date(timestamp * 1000);
      refresh();
    },
    inconsistent(message) {
      const since = s.inconsistent?.since ?? new Date();
      s.inconsistent = { since, count: (s.inconsistent?.count ?? 0) + 1, message };
    },
    consistent() {
      s.inconsistent = null;
    },
    factoryScan(progress) {
      s.factoryScan = progress;
    },
    batch(batch) {
      samples.push({ at: Date.now(), blocks: batch.blocks, swaps: batch.swaps, ms: batch.elapsedMs });
      s.swapsIngested += batch.swaps;
      refresh();
      logLine(false);
    },
    figures: () => {
      refresh();
      return {
        headBlock: s.headBlock,
        headBlockTime: s.headBlockTime,
        blocksPerSecond: s.blocksPerSecond,
        swapsPerSecond: s.swapsPerSecond,
      };
    },
    stop() {
      if (bar) {
        bar.stop();
        args.bars?.remove(bar);
        bar = null;
      }
    },
  };
}

/** While following at no lag, progress is logged this many times less often than during a backfill. */
const FOLLOWING_LOG_FACTOR = 30;

const round = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
