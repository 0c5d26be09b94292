import type { Hex, RawLog } from "../decode/types.js";
import { BaseError } from "../internal/errors.js";
import {
  type BatchPoolEvent,
  type BatchSwap,
  type PoolEventKind,
  type PoolState,
  poolFactsOf,
  type Token,
} from "../model/index.js";
import { familyOf, type PoolEventFields, type SwapTrade } from "../protocols/index.js";
import type { TransactionInfo } from "../rpc/types.js";
import type { Pool } from "./pools.js";

export type BlockInfo = { hash: Hex | null; timestamp: number };

/** Read access to pools or tokens by address (a Map, or a Map with an overlay). */
export type Lookup<T> = { get(address: Hex): T | undefined };

export type BuildBatchInput = {
  /** Every log of the range, ascending by (blockNumber, logIndex); logs of unknown addresses are skipped. */
  logs: readonly RawLog[];
  /** Known pools, those created inside the range included, with their state before the range. */
  pools: Lookup<Pool>;
  tokens: Lookup<Token>;
  /** Hash and time of every block that holds a pool log. */
  blocks: ReadonlyMap<number, BlockInfo>;
  /** The swaps' transactions (for maker and exchange); null when the source has none (replay). */
  transactions: ReadonlyMap<Hex, TransactionInfo> | null;
};

export type BuiltBatch = {
  swaps: BatchSwap[];
  poolEvents: BatchPoolEvent[];
  /** The state after the range of every pool that had an event in it. */
  states: Map<Hex, PoolState>;
};

/** The range's data is incomplete (a block or transaction the source did not give): fetch again. */
export class IncompleteRangeError extends BaseError {
  override name = "IncompleteRangeError";
  constructor(message: string) {
    super(message, { retryable: true });
  }
}

type PendingSync = { log: RawLog; pool: Pool; state: PoolState };

/**
 * The pool a log belongs to: the pool at its address, or a pool that lives inside the manager
 * that emitted it (Uniswap V4), named by its 32-byte id in the first topic.
 */
export function poolOfLog(pools: Lookup<Pool>, log: Pick<RawLog, "address" | "topics">): Pool | undefined {
  const own = pools.get(log.address);
  if (own) return own;
  const id = log.topics[1];
  if (id === undefined) return undefined;
  const inside = pools.get(id);
  return inside && inside.factory === log.address ? inside : undefined;
}

/**
 * Turns a range's logs into swap and pool-event rows, tracking each pool's state through them.
 * Pure: everything it needs is in the input.
 *
 * Each pool's family (src/protocols) decodes its logs, moves its state and tells the row each
 * event makes: a swap, a pool event, or a state-only event held until the pool's next event (a
 * V2 Sync: a swap of the same transaction that joins it takes it over, else it is stored as a
 * `sync` pool event).
 */
export function buildBatch(input: BuildBatchInput): BuiltBatch {
  const swaps: BatchSwap[] = [];
  const poolEvents: BatchPoolEvent[] = [];
  const states = new Map<Hex, PoolState>();
  const pendingSyncs = new Map<Hex, PendingSync>();

  const facts = (pool: Pool) => poolFactsOf(pool, input.tokens);

  const blockOf = (log: RawLog): BlockInfo => {
    const block = input.blocks.get(log.blockNumber);
    if (!block) throw new IncompleteRangeError(`no header for block ${log.blockNumber}`);
    return block;
  };

  const pushEvent = (
    log: RawLog,
    pool: Pool,
    state: PoolState,
    kind: PoolEventKind,
    fields: PoolEventFields,
  ) => {
    const f = facts(pool);
    poolEvents.push({
      pool: f.pool,
      dex: f.dex,
      protocol: f.protocol,
      token0: f.token0,
      token1: f.token1,
      decimals0: f.decimals0,
      decimals1: f.decimals1,
      blockNumber: log.blockNumber,
      logIndex: log.logIndex,
      blockTime: new Date(blockOf(log).timestamp * 1000),
      txHash: log.transactionHash,
      kind,
      amount0: fields.amount0 ?? null,
      amount1: fields.amount1 ?? null,
      liquidityDelta: fields.liquidityDelta ?? null,
      tickLower: fields.tickLower ?? null,
      tickUpper: fields.tickUpper ?? null,
      reserve0: state.reserve0,
      reserve1: state.reserve1,
      liquidity: state.liquidity,
      sqrtPriceX96: state.sqrtPriceX96,
      tick: state.tick,
    });
  };

  const flushSync = (address: Hex) => {
    const pending = pendingSyncs.get(address);
    if (!pending) return;
    pendingSyncs.delete(address);
    pushEvent(pending.log, pending.pool, pending.state, "sync", {});
  };

  for (const log of input.logs) {
    const pool = poolOfLog(input.pools, log);
    if (!pool || log.blockNumber < pool.createdBlock) continue;
    const family = familyOf(pool.protocol);
    const event = family.decodeLog(log, pool.swapEvent);
    if (event === null) continue;
    const before = states.get(pool.address) ?? pool.state;
    const state = family.nextState(before, event, log);
    states.set(pool.address, state);
    const record = family.record(event, before);

    const pending = pendingSyncs.get(pool.address);
    if (record.role === "pending") {
      flushSync(pool.address);
      pendingSyncs.set(pool.address, { log, pool, state });
      continue;
    }
    if (pending) {
      // The Sync that a V2 swap emits right before its Swap belongs to the swap.
      if (
        record.role === "swap" &&
        record.joinsPending &&
        pending.log.transactionHash === log.transactionHash
      )
        pendingSyncs.delete(pool.address);
      else flushSync(pool.address);
    }

    if (record.role === "swap") {
      const { decimals0, decimals1 } = facts(pool);
      const price =
        decimals0 !== null && decimals1 !== null
          ? family.swapPrice(event, state, decimals0, decimals1, pool)
          : null;
      swaps.push(swapRow(log, pool, record.trade, state, price));
    } else pushEvent(log, pool, state, record.kind, record.fields);
  }
  for (const address of [...pendingSyncs.keys()]) flushSync(address);
  poolEvents.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return { swaps, poolEvents, states };

  function swapRow(
    log: RawLog,
    pool: Pool,
    trade: SwapTrade,
    state: PoolState,
    price: number | null,
  ): BatchSwap {
    const block = blockOf(log);
    let maker: Hex | null = null;
    let exchange: Hex | null = null;
    if (input.transactions) {
      const tx = input.transactions.get(log.transactionHash);
      if (!tx) throw new IncompleteRangeError(`no transaction ${log.transactionHash}`);
      maker = tx.from;
      exchange = tx.to;
    }
    const { decimals0, decimals1 } = facts(pool);
    // Built property by property in one literal (no spreads), so that every row has the same shape.
    return {
      pool: pool.address,
      dex: pool.dex,
      protocol: pool.protocol,
      token0: pool.token0,
      token1: pool.token1,
      decimals0,
      decimals1,
      blockNumber: log.blockNumber,
      logIndex: log.logIndex,
      blockHash: block.hash ?? log.blockHash,
      blockTime: new Date(block.timestamp * 1000),
      txHash: log.transactionHash,
      txIndex: log.transactionIndex,
      maker,
      exchange,
      sender: trade.sender,
      recipient: trade.recipient,
      amount0In: trade.amount0In,
      amount1In: trade.amount1In,
      amount0Out: trade.amount0Out,
      amount1Out: trade.amount1Out,
      reserve0: state.reserve0,
      reserve1: state.reserve1,
      sqrtPriceX96: trade.sqrtPriceX96,
      liquidity: trade.liquidity,
      tick: trade.tick,
      price,
    };
  }
}
