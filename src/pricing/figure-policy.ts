/**
 * When a batch brings the market-wide figures (token prices, liquidity, statistics) up to date,
 * and how much of them (docs/PRICING.md, *Figures deferred in a backfill* and *Figures of a large
 * chain, a share per batch*). Pure: the pricing stage asks, these answer.
 */
import type { IngestBatch } from "../model/index.js";

/** When a batch leaves the figures for later: far enough below the head, soon enough after the last refresh. */
export type DeferFigures = { minBlocks: number; maxAgeMs: number } | false;

/** A large chain's share of figures per batch: `tokens` tokens and `pools` pools, from `fromPools` pools on. */
export type FiguresPerBatch = { tokens: number; pools: number; fromPools: number };

/**
 * Whether a batch leaves the market-wide figures for a later batch: more than `minBlocks` (and
 * twice its own length) below the block the indexer heads for, and at most `maxAgeMs` after the
 * figures were last brought up to date (`sinceFiguresMs`).
 */
export function defersFigures(
  policy: DeferFigures,
  batch: Pick<IngestBatch, "fromBlock" | "toBlock" | "headBlock">,
  sinceFiguresMs: number,
): boolean {
  return (
    policy !== false &&
    batch.headBlock !== undefined &&
    batch.headBlock - batch.toBlock > Math.max(policy.minBlocks, 2 * (batch.toBlock - batch.fromBlock + 1)) &&
    sinceFiguresMs < policy.maxAgeMs
  );
}

/** Whether a chain of `pools` pools and `tokens` routed tokens refreshes a share of its figures per batch. */
export function sharesFigures(perBatch: FiguresPerBatch, pools: number, tokens: number): boolean {
  return (
    pools > perBatch.fromPools &&
    ((perBatch.tokens > 0 && tokens > perBatch.tokens) || (perBatch.pools > 0 && pools > perBatch.pools))
  );
}

/** A turn through a chain's tokens or pools: the ones of when it started, and how far it went. */
export type Turn = { items: string[]; at: number };

export const newTurn = (): Turn => ({ items: [], at: 0 });

/**
 * The next `size` items of a turn (all of them when 0); once gone through, the turn starts over
 * with the items of now (`all`).
 */
export function nextInTurn(turn: Turn, size: number, all: () => Iterable<string>): Set<string> {
  if (turn.at >= turn.items.length) {
    turn.items = [...all()];
    turn.at = 0;
  }
  const end = Math.min(turn.items.length, turn.at + (size || turn.items.length));
  const next = new Set<string>();
  for (; turn.at < end; turn.at++) next.add(turn.items[turn.at] as string);
  return next;
}
