import type { DexConfig } from "../config/schema.js";
import type { PoolCreation, Protocol, SwapEventLayout } from "../decode/types.js";
import type { PoolState, StoredPool } from "../model/index.js";
import { familyOf } from "../protocols/index.js";

/** A pool of a configured factory, as the indexer keeps it in memory: a stored pool and how to read it. */
export type Pool = StoredPool & {
  swapEvent: SwapEventLayout;
  /**
   * The block whose end state is the pool's base: its creation block when created inside the
   * indexed range; for a pool found by the factory scan below the range, the scan's target
   * (startBlock − 1), where its balances are read when it is first touched.
   */
  baseBlock: number;
};

export const unknownState: PoolState = {
  reserve0: null,
  reserve1: null,
  sqrtPriceX96: null,
  liquidity: null,
  tick: null,
  block: null,
  logIndex: null,
};

/** The state of a pool of the family `protocol` at its creation: empty balances, no price yet. */
export function createdState(protocol: Protocol, block: number): PoolState {
  return familyOf(protocol).createdState(block);
}

/**
 * A pool announced by a factory. Created inside the indexed range (`scanTarget` null), its base
 * state is the empty pool; found by the scan below the range, its base is read later at `scanTarget`.
 */
export function poolFromCreation(creation: PoolCreation, dex: DexConfig, scanTarget: number | null): Pool {
  const base = scanTarget === null ? createdState(dex.protocol, creation.blockNumber) : null;
  return {
    address: creation.pool,
    dex: dex.name,
    protocol: dex.protocol,
    swapEvent: dex.swapEvent,
    factory: creation.factory,
    token0: creation.token0,
    token1: creation.token1,
    // A pool that carries its own fee (V3) keeps it; one without (V2) has its DEX's configured fee.
    fee: creation.fee ?? dex.fee ?? null,
    tickSpacing: creation.tickSpacing,
    ...(creation.hooks === undefined ? {} : { hooks: creation.hooks }),
    ...(creation.parameters === undefined ? {} : { parameters: creation.parameters }),
    createdBlock: creation.blockNumber,
    createdLogIndex: creation.logIndex,
    baseBlock: scanTarget ?? creation.blockNumber,
    base,
    state: base ?? unknownState,
  };
}
