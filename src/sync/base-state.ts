import type { Hex } from "../decode/types.js";
import type { PoolState } from "../model/index.js";
import { familyOf } from "../protocols/index.js";
import type { RpcClient } from "../rpc/client.js";
import type { Pool } from "./pools.js";

/**
 * Reads the base state of pools that predate the indexed range, at their base block, with the
 * calls each pool's family names (V2: getReserves(); V3: balanceOf(pool) of both tokens, slot0()
 * and liquidity()). Unanswered fields stay null (unknown).
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
    const perPool = group.map((pool) => familyOf(pool.protocol).baseStateCalls(pool));
    const calls = perPool.flat();
    // Pools inside a manager (V4) have nothing to read: no call at all for a group of only them.
    const results = calls.length === 0 ? [] : await rpc.calls(calls, block);
    let i = 0;
    group.forEach((pool, k) => {
      const n = (perPool[k] as unknown[]).length;
      out.set(pool.address, familyOf(pool.protocol).baseState(results.slice(i, i + n), block));
      i += n;
    });
  }
  return out;
}
