import type { Hex } from "../decode/types.js";
import type { Logger } from "../internal/logger.js";
import type { Token } from "../model/index.js";
import { getChainRow, initSyncState, insertChainRow, loadCheckpoint } from "../store/chain-state.js";
import type { Db } from "../store/db.js";
import { loadPools } from "../store/pools.js";
import { loadTokens } from "../store/tokens.js";
import { buildBatch } from "../sync/batch.js";
import { commitBatch } from "../sync/commit.js";
import type { DerivedData } from "../sync/derived.js";
import { type Pool, unknownState } from "../sync/pools.js";
import { type Fixture, readFixture } from "./fixture.js";

/** Genesis hashes of chains a fixture may come from (the chains row needs one). */
const knownGenesis: Record<number, Hex> = {
  1: "0xd4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3",
};

export type ReplayResult = {
  swaps: number;
  poolEvents: number;
  batches: number;
  lastBlock: number | null;
  elapsedMs: number;
};

/**
 * Replays a recorded-log fixture through the indexer's own decode-and-store path (buildBatch,
 * commitBatch, the derived-data seam): the pool and its tokens come from the manifest, block
 * times from the CSV; maker and exchange are null (no transaction sender recorded) and so are the
 * V3 balances (no balance at the start). Batches of `blocksPerBatch` blocks, each committed with
 * its checkpoint, so an interrupted replay resumes. Do not replay into a chain that a live
 * indexer writes: they would share its checkpoint.
 */
export async function replayFixture(args: {
  db: Db;
  dir: string;
  derived: DerivedData;
  logger: Logger;
  /** Shown as the pool's DEX (factory_name). */
  dexName?: string;
  blocksPerBatch?: number;
  genesisHash?: Hex;
  fixture?: Fixture;
}): Promise<ReplayResult> {
  const startedAt = performance.now();
  const { db, derived } = args;
  const { manifest, logs } = args.fixture ?? readFixture(args.dir);
  const chainId = manifest.chainId;
  const logger = args.logger.child({ chain_id: chainId, source: "replay" });
  const protocol = manifest.protocol.endsWith("v2") ? "v2" : "v3";
  const swapEvent = manifest.protocol.startsWith("pancake") ? "pancake" : "uniswap";

  if (!(await getChainRow(db, chainId))) {
    const genesisHash = args.genesisHash ?? knownGenesis[chainId];
    if (!genesisHash) throw new Error(`replay: no genesis hash known for chain ${chainId}; pass genesisHash`);
    await insertChainRow(db, { chainId, name: `chain ${chainId}`, genesisHash, devnet: false });
  }
  const firstBlock = logs[0]?.blockNumber ?? 0;
  await initSyncState(db, chainId, firstBlock);
  const checkpoint = await loadCheckpoint(db, chainId);
  let previous = checkpoint?.block ?? firstBlock - 1;

  const stored = (await loadPools(db, chainId)).find((p) => p.address === manifest.pool);
  const pool: Pool = stored
    ? { ...stored, swapEvent, baseBlock: stored.base?.block ?? stored.createdBlock }
    : {
        address: manifest.pool,
        dex:
          args.dexName ??
          (protocol === "v2" ? "Uniswap V2" : swapEvent === "pancake" ? "PancakeSwap V3" : "Uniswap V3"),
        protocol,
        swapEvent,
        factory: manifest.factory,
        token0: manifest.token0.address.toLowerCase() as Hex,
        token1: manifest.token1.address.toLowerCase() as Hex,
        fee: manifest.fee ?? null,
        tickSpacing: null,
        // Unknown to the recording unless the manifest says; 0 keeps the pool below any rollback.
        createdBlock: manifest.createdBlock ?? 0,
        createdLogIndex: 0,
        baseBlock: firstBlock - 1,
        base: null,
        state: unknownState,
      };
  const storedTokens = new Map((await loadTokens(db, chainId)).map((t) => [t.address, t]));
  const manifestTokens: Token[] = [manifest.token0, manifest.token1].map((t) => ({
    address: t.address.toLowerCase() as Hex,
    name: t.name ?? null,
    symbol: t.symbol ?? null,
    decimals: t.decimals ?? null,
    totalSupply: null,
  }));
  const tokens = new Map(manifestTokens.map((t) => [t.address, storedTokens.get(t.address) ?? t]));
  let newPools: Pool[] = stored ? [] : [pool];
  let newTokens = manifestTokens.filter((t) => !storedTokens.has(t.address));
  let state = pool.state;

  const pending = logs.filter((l) => l.blockNumber > previous);
  const blocksPerBatch = args.blocksPerBatch ?? 1000;
  const result: ReplayResult = {
    swaps: 0,
    poolEvents: 0,
    batches: 0,
    lastBlock: checkpoint?.block ?? null,
    elapsedMs: 0,
  };
  for (let i = 0; i < pending.length; ) {
    const first = pending[i]?.blockNumber as number;
    let j = i;
    while (j < pending.length && (pending[j]?.blockNumber as number) < first + blocksPerBatch) j++;
    const chunk = pending.slice(i, j);
    i = j;
    const last = chunk[chunk.length - 1];
    if (!last) break;
    const blocks = new Map(chunk.map((l) => [l.blockNumber, { hash: null, timestamp: l.blockTimestamp }]));
    const current = { ...pool, state };
    const built = buildBatch({
      logs: chunk,
      pools: new Map([[pool.address, current]]),
      tokens,
      blocks,
      transactions: null,
    });
    await commitBatch(db, derived, {
      chainId,
      source: "replay",
      fromBlock: previous + 1,
      previous,
      checkpoint: { block: last.blockNumber, hash: null, time: new Date(last.blockTimestamp * 1000) },
      newPools,
      basedPools: [],
      newTokens,
      built,
      blocks: [],
      keepBlocksAbove: null,
    });
    newPools = [];
    newTokens = [];
    state = built.states.get(pool.address) ?? state;
    previous = last.blockNumber;
    result.swaps += built.swaps.length;
    result.poolEvents += built.poolEvents.length;
    result.batches++;
    result.lastBlock = last.blockNumber;
  }
  result.elapsedMs = performance.now() - startedAt;
  logger.info(
    {
      swaps: result.swaps,
      pool_events: result.poolEvents,
      batches: result.batches,
      elapsed_ms: Math.round(result.elapsedMs),
    },
    "fixture replayed",
  );
  return result;
}
