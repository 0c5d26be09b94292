import { decodePoolLog } from "../decode/pool-events.js";
import { priceFromReserves, priceFromSqrtPriceX96 } from "../decode/price.js";
import type { Hex, PoolEvent, RawLog } from "../decode/types.js";
import { BaseError } from "../internal/errors.js";
import type { BatchPoolEvent, BatchSwap, PoolEventKind, PoolState, Token } from "../model/index.js";
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
 * Turns a range's logs into swap and pool-event rows, tracking each pool's state through them.
 * Pure: everything it needs is in the input.
 *
 * - V2: a Sync followed, in the same transaction, by the pool's Swap gives that swap its
 *   reserves and is not stored on its own; any other Sync is a `sync` pool event. Mint and Burn
 *   carry the reserves of the Sync before them.
 * - V3: balances move with Mint (+), Collect and CollectProtocol (−), Flash (+ fees paid) and
 *   Swap (± signed amounts); they stay null when the base balances are unknown. Active liquidity
 *   moves with Mint/Burn whose range holds the current tick, and is set by each Swap.
 */
export function buildBatch(input: BuildBatchInput): BuiltBatch {
  const swaps: BatchSwap[] = [];
  const poolEvents: BatchPoolEvent[] = [];
  const states = new Map<Hex, PoolState>();
  const pendingSyncs = new Map<Hex, PendingSync>();

  const facts = (pool: Pool) => ({
    pool: pool.address,
    dex: pool.dex,
    protocol: pool.protocol,
    token0: pool.token0,
    token1: pool.token1,
    decimals0: input.tokens.get(pool.token0)?.decimals ?? null,
    decimals1: input.tokens.get(pool.token1)?.decimals ?? null,
  });

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
    fields: Partial<
      Pick<BatchPoolEvent, "amount0" | "amount1" | "liquidityDelta" | "tickLower" | "tickUpper">
    >,
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
    const pool = input.pools.get(log.address);
    if (!pool || log.blockNumber < pool.createdBlock) continue;
    const event = decodePoolLog(log, pool.protocol, pool.swapEvent);
    if (!event) continue;
    const before = states.get(pool.address) ?? pool.state;
    const state = nextState(before, event, log);
    states.set(pool.address, state);

    const pending = pendingSyncs.get(pool.address);
    if (event.type === "v2-sync") {
      flushSync(pool.address);
      pendingSyncs.set(pool.address, { log, pool, state });
      continue;
    }
    if (pending) {
      // The Sync that a V2 swap emits right before its Swap belongs to the swap.
      if (event.type === "v2-swap" && pending.log.transactionHash === log.transactionHash)
        pendingSyncs.delete(pool.address);
      else flushSync(pool.address);
    }

    switch (event.type) {
      case "v2-swap":
      case "v3-swap":
        swaps.push(swapRow(log, pool, event, state));
        break;
      case "v2-mint":
        pushEvent(log, pool, state, "mint", { amount0: event.amount0, amount1: event.amount1 });
        break;
      case "v2-burn":
        pushEvent(log, pool, state, "burn", { amount0: event.amount0, amount1: event.amount1 });
        break;
      case "v3-initialize":
        pushEvent(log, pool, state, "initialize", {});
        break;
      case "v3-mint":
        pushEvent(log, pool, state, "mint", {
          amount0: event.amount0,
          amount1: event.amount1,
          liquidityDelta: event.amount,
          tickLower: event.tickLower,
          tickUpper: event.tickUpper,
        });
        break;
      case "v3-burn":
        pushEvent(log, pool, state, "burn", {
          amount0: event.amount0,
          amount1: event.amount1,
          liquidityDelta: -event.amount,
          tickLower: event.tickLower,
          tickUpper: event.tickUpper,
        });
        break;
      case "v3-collect":
        pushEvent(log, pool, state, "collect", {
          amount0: event.amount0,
          amount1: event.amount1,
          tickLower: event.tickLower,
          tickUpper: event.tickUpper,
        });
        break;
      case "v3-collect-protocol":
        pushEvent(log, pool, state, "collect", { amount0: event.amount0, amount1: event.amount1 });
        break;
      case "v3-flash":
        pushEvent(log, pool, state, "flash", { amount0: event.paid0, amount1: event.paid1 });
        break;
    }
  }
  for (const address of [...pendingSyncs.keys()]) flushSync(address);
  poolEvents.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return { swaps, poolEvents, states };

  function swapRow(
    log: RawLog,
    pool: Pool,
    event: PoolEvent & { type: "v2-swap" | "v3-swap" },
    state: PoolState,
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
    const known = decimals0 !== null && decimals1 !== null;
    let amount0In: bigint;
    let amount1In: bigint;
    let amount0Out: bigint;
    let amount1Out: bigint;
    let price: number | null = null;
    if (event.type === "v2-swap") {
      ({ amount0In, amount1In, amount0Out, amount1Out } = event);
      if (known && state.reserve0 !== null && state.reserve1 !== null) {
        price = priceFromReserves(state.reserve0, state.reserve1, decimals0, decimals1);
      }
    } else {
      amount0In = event.amount0 > 0n ? event.amount0 : 0n;
      amount1In = event.amount1 > 0n ? event.amount1 : 0n;
      amount0Out = event.amount0 < 0n ? -event.amount0 : 0n;
      amount1Out = event.amount1 < 0n ? -event.amount1 : 0n;
      if (known) price = priceFromSqrtPriceX96(event.sqrtPriceX96, decimals0, decimals1);
    }
    const v3 = event.type === "v3-swap";
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
      sender: event.sender,
      recipient: v3 ? event.recipient : event.to,
      amount0In,
      amount1In,
      amount0Out,
      amount1Out,
      reserve0: state.reserve0,
      reserve1: state.reserve1,
      sqrtPriceX96: v3 ? event.sqrtPriceX96 : null,
      liquidity: v3 ? event.liquidity : null,
      tick: v3 ? event.tick : null,
      price,
    };
  }
}

const add = (a: bigint | null, b: bigint): bigint | null => (a === null ? null : a + b);

/** The pool's state after one event. */
function nextState(
  before: PoolState,
  event: PoolEvent,
  log: Pick<RawLog, "blockNumber" | "logIndex">,
): PoolState {
  const s: PoolState = {
    reserve0: before.reserve0,
    reserve1: before.reserve1,
    sqrtPriceX96: before.sqrtPriceX96,
    liquidity: before.liquidity,
    tick: before.tick,
    block: log.blockNumber,
    logIndex: log.logIndex,
  };
  const inRange = (lower: number, upper: number) => s.tick !== null && lower <= s.tick && s.tick < upper;
  switch (event.type) {
    case "v2-sync":
      s.reserve0 = event.reserve0;
      s.reserve1 = event.reserve1;
      break;
    case "v2-swap":
    case "v2-mint":
    case "v2-burn":
      // V2 reserves move only through Sync, which comes right before these.
      break;
    case "v3-initialize":
      s.sqrtPriceX96 = event.sqrtPriceX96;
      s.tick = event.tick;
      break;
    case "v3-swap":
      s.reserve0 = add(s.reserve0, event.amount0);
      s.reserve1 = add(s.reserve1, event.amount1);
      s.sqrtPriceX96 = event.sqrtPriceX96;
      s.liquidity = event.liquidity;
      s.tick = event.tick;
      break;
    case "v3-mint":
      s.reserve0 = add(s.reserve0, event.amount0);
      s.reserve1 = add(s.reserve1, event.amount1);
      if (s.tick === null) s.liquidity = null;
      else if (inRange(event.tickLower, event.tickUpper)) s.liquidity = add(s.liquidity, event.amount);
      break;
    case "v3-burn":
      // Burn only credits the position; the tokens leave the pool with Collect.
      if (s.tick === null) s.liquidity = null;
      else if (inRange(event.tickLower, event.tickUpper)) s.liquidity = add(s.liquidity, -event.amount);
      break;
    case "v3-collect":
    case "v3-collect-protocol":
      s.reserve0 = add(s.reserve0, -event.amount0);
      s.reserve1 = add(s.reserve1, -event.amount1);
      break;
    case "v3-flash":
      s.reserve0 = add(s.reserve0, event.paid0);
      s.reserve1 = add(s.reserve1, event.paid1);
      break;
  }
  return s;
}
