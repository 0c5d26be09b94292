import { encodeBalanceOf } from "../decode/erc20.js";
import type { Hex } from "../decode/types.js";
import { intAt, uintAt, wordCount } from "../decode/words.js";
import type { PoolState } from "../model/index.js";
import type { RpcClient } from "../rpc/client.js";
import type { Pool } from "./pools.js";

const selectors = {
  /** V2 getReserves() → (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast) */
  getReserves: "0x0902f1ac",
  /** V3 slot0() → (uint160 sqrtPriceX96, int24 tick, …); PancakeSwap V3 starts the same way. */
  slot0: "0x3850c7bd",
  /** V3 liquidity() → uint128 */
  liquidity: "0x1a686502",
} as const;

const word = (data: Hex | null | undefined, i: number): bigint | null =>
  data && wordCount(data) > i ? uintAt(data, i) : null;

/**
 * Reads the base state of pools that predate the indexed range, at their base block: V2
 * reserves from getReserves(); V3 token balances from balanceOf(pool), price and tick from
 * slot0() and active liquidity from liquidity(). Unanswered fields stay null (unknown).
 */
export async function readBaseStates(rpc: RpcClient, pools: readonly Pool[]): Promise<Map<Hex, PoolState>> {
  const out = new Map<Hex, PoolState>();
  const byBlock = new Map<number, Pool[]>();
  for (const pool of pools) {
    const group = byBlock.get(pool.baseBlock);
    if (group) group.push(pool);
    else byBlock.set(pool.baseBlock, [pool]);
  }
  for (const [block, group] of byBlock) {
    const calls = group.flatMap((pool) =>
      pool.protocol === "v2"
        ? [{ to: pool.address, data: selectors.getReserves as Hex }]
        : [
            { to: pool.token0, data: encodeBalanceOf(pool.address) },
            { to: pool.token1, data: encodeBalanceOf(pool.address) },
            { to: pool.address, data: selectors.slot0 as Hex },
            { to: pool.address, data: selectors.liquidity as Hex },
          ],
    );
    const results = await rpc.calls(calls, block);
    let i = 0;
    for (const pool of group) {
      if (pool.protocol === "v2") {
        const reserves = results[i++];
        out.set(pool.address, {
          reserve0: word(reserves, 0),
          reserve1: word(reserves, 1),
          sqrtPriceX96: null,
          liquidity: null,
          tick: null,
          block,
          logIndex: null,
        });
      } else {
        const [balance0, balance1, slot0, liquidity] = results.slice(i, i + 4);
        i += 4;
        out.set(pool.address, {
          reserve0: word(balance0, 0),
          reserve1: word(balance1, 0),
          sqrtPriceX96: word(slot0, 0),
          liquidity: word(liquidity, 0),
          tick: slot0 && wordCount(slot0) > 1 ? Number(intAt(slot0, 1)) : null,
          block,
          logIndex: null,
        });
      }
    }
  }
  return out;
}
