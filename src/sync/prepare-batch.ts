import type { Hex } from "../decode/types.js";
import { RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { nativeCoin, PoolState, Token } from "../model/index.js";
import type { RpcClient } from "../rpc/client.js";
import { readBaseStates } from "./base-state.js";
import { type BuiltBatch, buildBatch } from "./batch.js";
import type { RangeData } from "./fetch-range.js";
import { type Pool, poolFromCreation, unknownState } from "./pools.js";
import { readTokens } from "./tokens.js";

/** A fetched range made ready to commit: its rows, and what it adds to the chain's memory. */
export type PreparedBatch = {
  /** Pools created in the range. */
  newPools: Pool[];
  /** Pools older than the range touched for the first time, with the base state just read. */
  basedPools: Pool[];
  /** Tokens of those pools not known yet, in the order they were wanted. */
  newTokens: Token[];
  /** Every pool the batch adds or changes in the chain's map of known pools, by address. */
  overlay: Map<Hex, Pool>;
  built: BuiltBatch;
};

/**
 * Prepares fetched ranges for their commit: the pools created there, the base state of older
 * pools touched for the first time (unknown, not an error, from a node without the history), the
 * metadata of tokens not known yet (read ahead with the range, or now, at the head), and the
 * batch's rows (buildBatch). Reads the node, writes nothing.
 */
export async function prepareBatch(args: {
  data: RangeData;
  pools: ReadonlyMap<Hex, Pool>;
  tokens: ReadonlyMap<Hex, Token>;
  rpc: RpcClient;
  logger: Logger;
  /** Token metadata through Multicall3. */
  multicall: boolean;
  /** The chain's native coin (a V4 pool's currency 0x0). */
  native: ReturnType<typeof nativeCoin>;
}): Promise<PreparedBatch> {
  const { data, pools, tokens, rpc, logger, multicall, native } = args;
  // Pools created in the range, and pools older than the range touched for the first time.
  const overlay = new Map<Hex, Pool>();
  const newPools = data.creations.map(({ creation, dex }) => poolFromCreation(creation, dex, null));
  for (const pool of newPools) overlay.set(pool.address, pool);
  const lookup = { get: (a: Hex) => overlay.get(a) ?? pools.get(a) };
  const touched = new Map<Hex, Pool>();
  for (const log of data.logs) {
    const pool = lookup.get(log.address);
    if (pool) touched.set(pool.address, pool);
  }
  const needBase = [...touched.values()].filter((p) => p.base === null);
  const basedPools: Pool[] = [];
  if (needBase.length > 0) {
    let bases = new Map<Hex, PoolState>();
    try {
      bases = await readBaseStates(rpc, needBase);
    } catch (error) {
      // A node without the history (not an archive node) cannot answer at startBlock − 1:
      // the balances stay unknown (null) rather than stopping the chain.
      if (error instanceof RetryableRpcError) throw error;
      logger.warn(
        {
          pools: needBase.length,
          block: needBase[0]?.baseBlock,
          error: (error as Error).message,
          rpc_host: rpc.host(),
        },
        "cannot read the state of older pools at the start block; their balances stay unknown",
      );
    }
    for (const pool of needBase) {
      const base = bases.get(pool.address) ?? { ...unknownState, block: pool.baseBlock };
      const based = { ...pool, base, state: base };
      overlay.set(pool.address, based);
      basedPools.push(based);
    }
  }
  // The native coin is answered as `native`, never as read ahead (it has no contract to call).
  const readAhead = new Map(
    (data.tokens ?? []).filter((t) => t.address !== native.address).map((t) => [t.address, t]),
  );
  const wantedTokens = new Set<Hex>();
  for (const pool of [...newPools, ...touched.values()]) {
    for (const token of [pool.token0, pool.token1]) if (!tokens.has(token)) wantedTokens.add(token);
  }
  // At the head: metadata does not change, and any node (not only an archive) answers there.
  const read = await readTokens(
    rpc,
    [...wantedTokens].filter((t) => !readAhead.has(t)),
    "latest",
    { multicall, native },
  );
  for (const token of read) readAhead.set(token.address, token);
  // In the order they were wanted, read ahead or now.
  const newTokens = [...wantedTokens].map((t) => readAhead.get(t) as Token);
  const newTokenMap = new Map(newTokens.map((t) => [t.address, t]));
  const built = buildBatch({
    logs: data.logs,
    pools: lookup,
    tokens: { get: (a: Hex) => newTokenMap.get(a) ?? tokens.get(a) },
    blocks: data.blocks,
    transactions: data.transactions,
  });
  return { newPools, basedPools, newTokens, overlay, built };
}
