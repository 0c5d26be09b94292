import type { Hex } from "viem";
import type { DeployedPool } from "./deploy.js";
import { devnetFamilyOf } from "./families/index.js";
import {
  type ConcentratedState,
  concentratedState,
  type ReservesState,
  reservesState,
} from "./families/states.js";
import type { RpcCall } from "./rpc.js";

/**
 * The state of a pool that the simulator steers by: a V2 pair's reserves, or concentrated
 * liquidity (V3's, which V4 and Algebra pools share: the same math, read from the PoolManager's or
 * the pool's storage). Each family reads its pools' state from the storage slots of its contracts
 * (reading storage costs the node a trie lookup, where a view call runs a traced EVM execution:
 * 2.7 ms for the 34 slots of all pools against 4 ms for one multicall-style eth_call).
 */
export type PoolState = ReservesState | ConcentratedState;

/** eth_getStorageAt calls that read the pools' state at the latest block (their families' slots). */
export function poolStateCalls(pools: readonly DeployedPool[]): RpcCall[] {
  return pools.flatMap((pool) => devnetFamilyOf(pool.protocol).stateCalls(pool));
}

/** Decodes the answers of poolStateCalls (same pools, same order). */
export function decodePoolStates(
  pools: readonly DeployedPool[],
  words: readonly Hex[],
): Map<string, PoolState> {
  const states = new Map<string, PoolState>();
  let i = 0;
  const next = () => BigInt(words[i++] ?? "0x0");
  for (const pool of pools) states.set(pool.key, devnetFamilyOf(pool.protocol).decodeState(pool, next));
  return states;
}

/** The pool's raw price: token1 units per token0 unit. */
export function poolRawPrice(state: PoolState): number {
  if ("reserve0" in state) return Number(state.reserve1) / Number(state.reserve0);
  const sqrt = Number(state.sqrtPriceX96) / 2 ** 96;
  return sqrt * sqrt;
}

/**
 * The state after an exact-input swap, and its output, estimated locally so that the simulator
 * need not read the chain after every block. V2 is exact (the pair's own integer formula); V3
 * assumes the active liquidity stays the same (no tick crossed), which is close for the small
 * moves of one trade and is corrected by the next read.
 */
export function applySwap(
  state: PoolState,
  fee: number,
  zeroForOne: boolean,
  amountIn: bigint,
): { state: PoolState; amountOut: bigint } {
  if (amountIn <= 0n) return { state, amountOut: 0n };
  if ("reserve0" in state) {
    const [reserveIn, reserveOut] = zeroForOne
      ? [state.reserve0, state.reserve1]
      : [state.reserve1, state.reserve0];
    const inWithFee = amountIn * 997n;
    const amountOut = (inWithFee * reserveOut) / (reserveIn * 1000n + inWithFee);
    const newIn = reserveIn + amountIn;
    const newOut = reserveOut - amountOut;
    return {
      state: zeroForOne ? reservesState(newIn, newOut) : reservesState(newOut, newIn),
      amountOut,
    };
  }
  const liquidity = Number(state.liquidity);
  if (liquidity === 0) return { state, amountOut: 0n };
  const sqrt = Number(state.sqrtPriceX96) / 2 ** 96;
  const effectiveIn = Number(amountIn) * (1 - fee / 1_000_000);
  let next: number;
  let amountOut: number;
  if (zeroForOne) {
    next = 1 / (1 / sqrt + effectiveIn / liquidity);
    amountOut = liquidity * (sqrt - next);
  } else {
    next = sqrt + effectiveIn / liquidity;
    amountOut = liquidity * (1 / sqrt - 1 / next);
  }
  return {
    state: concentratedState(BigInt(Math.floor(next * 2 ** 96)), state.liquidity),
    amountOut: BigInt(Math.max(0, Math.floor(amountOut))),
  };
}
