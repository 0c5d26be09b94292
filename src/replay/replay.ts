import type { Hex } from "../decode/types.js";
import { BaseError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { PoolState, Token } from "../model/index.js";
import { type FamilyVariant, type ProtocolFamily, variants } from "../protocols/index.js";
import { getChainRow, initSyncState, insertChainRow, loadCheckpoint } from "../store/chain-state.js";
import type { Db } from "../store/db.js";
import { firstStoredEventBlock, loadPools } from "../store/pools.js";
import { loadTokens } from "../store/tokens.js";
import { buildBatch } from "../sync/batch.js";
import { commitBatch } from "../sync/commit.js";
import type { DerivedData } from "../sync/derived.js";
import { type Pool, unknownState } from "../sync/pools.js";
import { type Fixture, type RecordedLog, readFixture } from "./fixture.js";

/** Genesis hashes of the chains a recording may come from without naming its own (the chains row needs one). */
export const knownGenesis: Readonly<Record<number, Hex>> = {
  1: "0xd4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3",
  56: "0x0d21840abff46b96c84b2ac9e10e4f5cdaeb5693cb665db62a2f3b02d2d57b5b",
  137: "0xa9c28ce2141b56c474f1dc504bee9b01eb1bd7d1a507580d5519d4437a97de1b",
};

const knownNames: Readonly<Record<number, string>> = { 1: "Ethereum", 56: "BNB Chain", 137: "Polygon" };

/** A recording cannot be replayed as asked (out of order, unknown genesis, conflicting manifests). */
export class ReplayError extends BaseError {
  override name = "ReplayError";
}

export type ReplayResult = {
  swaps: number;
  poolEvents: number;
  batches: number;
  lastBlock: number | null;
  elapsedMs: number;
};

type ReplayOptions = {
  db: Db;
  derived: DerivedData;
  logger: Logger;
  blocksPerBatch?: number;
  /** Genesis hash of the chain when neither the manifest nor knownGenesis has it. */
  genesisHash?: Hex;
};

/** Replays one recorded-log fixture folder (see replayFixtures). */
export async function replayFixture(
  args: ReplayOptions & { dir: string; fixture?: Fixture; dexName?: string },
): Promise<ReplayResult> {
  const fixture = args.fixture ?? readFixture(args.dir);
  const withDex = args.dexName
    ? { ...fixture, manifest: { ...fixture.manifest, dex: args.dexName } }
    : fixture;
  return replayFixtures({ ...args, fixtures: [withDex] });
}

/**
 * Replays recorded-log fixtures through the indexer's own decode-and-store path (buildBatch,
 * commitBatch, the derived-data seam, so pricing too): pools and tokens come from the manifests,
 * block times from the CSVs; maker and exchange are null (no transaction sender recorded), and
 * so are V3 balances unless the manifest gives the pool's starting `balances`. The logs of all
 * fixtures of one chain are merged in block order, so several pools and several days replay
 * together in any order of the arguments. Batches of `blocksPerBatch` blocks, each committed
 * with its checkpoint, so an interrupted replay resumes where it stopped. A recording older than
 * what the chain already holds is refused with a ReplayError (the checkpoint only moves forward),
 * never skipped in silence. Do not replay into a chain that a live indexer writes.
 */
export async function replayFixtures(
  args: ReplayOptions & { fixtures: readonly Fixture[] },
): Promise<ReplayResult> {
  const startedAt = performance.now();
  const total: ReplayResult = { swaps: 0, poolEvents: 0, batches: 0, lastBlock: null, elapsedMs: 0 };
  const byChain = new Map<number, Fixture[]>();
  for (const f of args.fixtures)
    byChain.set(f.manifest.chainId, [...(byChain.get(f.manifest.chainId) ?? []), f]);
  for (const [chainId, fixtures] of byChain) {
    const result = await replayChain({ ...args, chainId, fixtures });
    total.swaps += result.swaps;
    total.poolEvents += result.poolEvents;
    total.batches += result.batches;
    total.lastBlock = result.lastBlock;
  }
  total.elapsedMs = performance.now() - startedAt;
  return total;
}

async function replayChain(
  args: ReplayOptions & { chainId: number; fixtures: readonly Fixture[] },
): Promise<ReplayResult> {
  const startedAt = performance.now();
  const { db, derived, chainId, fixtures } = args;
  const logger = args.logger.child({ chain_id: chainId, source: "replay" });

  const logs = mergeLogs(fixtures);
  const firstBlock = logs[0]?.blockNumber;
  if (firstBlock === undefined) {
    throw new ReplayError(`replay: ${fixtures.map((f) => f.dir).join(", ")}: no logs to replay`);
  }
  if (!(await getChainRow(db, chainId))) {
    const genesisHash =
      fixtures.find((f) => f.manifest.genesisHash)?.manifest.genesisHash ??
      args.genesisHash ??
      knownGenesis[chainId];
    if (!genesisHash) {
      throw new ReplayError(
        `replay: chain ${chainId} has no known genesis hash: add "genesisHash" to ${fixtures[0]?.dir}/manifest.json`,
      );
    }
    await insertChainRow(db, {
      chainId,
      name: knownNames[chainId] ?? `chain ${chainId}`,
      genesisHash,
      devnet: false,
    });
  }
  await initSyncState(db, chainId, firstBlock);
  const checkpoint = (await loadCheckpoint(db, chainId))?.block ?? firstBlock - 1;

  const storedPools = new Map((await loadPools(db, chainId)).map((p) => [p.address, p]));
  const storedTokens = new Map((await loadTokens(db, chainId)).map((t) => [t.address, t]));
  const pools = new Map<Hex, Pool>();
  const newPools: Pool[] = [];
  const tokens = new Map<Hex, Token>();
  const newTokens: Token[] = [];
  for (const f of fixtures) {
    const m = f.manifest;
    const first = f.logs[0]?.blockNumber ?? firstBlock;
    const stored = storedPools.get(m.pool);
    // The checkpoint only moves forward: logs at or below it that were never stored would be skipped.
    if (first <= checkpoint) {
      // Replayed before (an interrupted or repeated run) when the pool's stored events begin by `first`.
      const storedFrom = stored ? await firstStoredEventBlock(db, chainId, m.pool) : null;
      if (storedFrom === null || storedFrom > first)
        throw new ReplayError(
          `replay: ${f.dir} starts at block ${first}, at or below block ${checkpoint} that chain ${chainId} is already replayed to: replay recordings oldest first (give them all in one command to have them ordered), or into an empty database`,
        );
    }
    // The manifest's protocol is checked against the registry's variants when it is read.
    const variant = variants.get(m.protocol) as FamilyVariant & { family: ProtocolFamily };
    const protocol = variant.family.name;
    const swapEvent = variant.layout;
    if (pools.has(m.pool)) {
      const known = pools.get(m.pool) as Pool;
      if (known.token0 !== m.token0.address || known.token1 !== m.token1.address)
        throw new ReplayError(`replay: ${f.dir}: pool ${m.pool} has other tokens than in another recording`);
      continue;
    }
    let pool: Pool;
    if (stored) {
      pool = { ...stored, swapEvent, baseBlock: stored.base?.block ?? stored.createdBlock };
    } else {
      const base: PoolState | null = m.balances
        ? { ...unknownState, reserve0: m.balances.reserve0, reserve1: m.balances.reserve1, block: first - 1 }
        : null;
      pool = {
        address: m.pool,
        dex: m.dex ?? variant.dexName,
        protocol,
        swapEvent,
        factory: m.factory,
        token0: m.token0.address,
        token1: m.token1.address,
        fee: m.fee ?? null,
        tickSpacing: null,
        // Unknown to the recording unless the manifest says; 0 keeps the pool below any rollback.
        createdBlock: m.createdBlock ?? 0,
        createdLogIndex: 0,
        baseBlock: first - 1,
        base,
        state: base ?? unknownState,
      };
      newPools.push(pool);
    }
    pools.set(m.pool, pool);
    for (const t of [m.token0, m.token1]) {
      if (tokens.has(t.address)) continue;
      const token = storedTokens.get(t.address) ?? {
        address: t.address,
        name: t.name ?? null,
        symbol: t.symbol ?? null,
        decimals: t.decimals ?? null,
        totalSupply: null,
      };
      tokens.set(t.address, token);
      if (!storedTokens.has(t.address)) newTokens.push(token);
    }
  }

  const pending = logs.filter((l) => l.blockNumber > checkpoint);
  if (pending.length === 0) {
    logger.info({ checkpoint }, "replay: every log of these recordings is already stored");
  }
  const blocksPerBatch = args.blocksPerBatch ?? 1000;
  const result: ReplayResult = { swaps: 0, poolEvents: 0, batches: 0, lastBlock: checkpoint, elapsedMs: 0 };
  let previous = checkpoint;
  let pendingPools = newPools;
  let pendingTokens = newTokens;
  for (let i = 0; i < pending.length; ) {
    const first = pending[i]?.blockNumber as number;
    let j = i;
    while (j < pending.length && (pending[j]?.blockNumber as number) < first + blocksPerBatch) j++;
    const chunk = pending.slice(i, j);
    i = j;
    const last = chunk[chunk.length - 1];
    if (!last) break;
    const blocks = new Map(chunk.map((l) => [l.blockNumber, { hash: null, timestamp: l.blockTimestamp }]));
    const built = buildBatch({ logs: chunk, pools, tokens, blocks, transactions: null });
    await commitBatch(db, derived, {
      chainId,
      source: "replay",
      fromBlock: previous + 1,
      previous,
      checkpoint: { block: last.blockNumber, hash: null, time: new Date(last.blockTimestamp * 1000) },
      newPools: pendingPools,
      basedPools: [],
      newTokens: pendingTokens,
      built,
      blocks: [],
      keepBlocksAbove: null,
    });
    pendingPools = [];
    pendingTokens = [];
    for (const [address, state] of built.states) {
      const pool = pools.get(address);
      if (pool) pools.set(address, { ...pool, state });
    }
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
    "recorded logs replayed",
  );
  return result;
}

/** The logs of several recordings in (block, log index) order; a log recorded twice is kept once. */
function mergeLogs(fixtures: readonly Fixture[]): RecordedLog[] {
  const all = fixtures.flatMap((f) => f.logs);
  all.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return all.filter((l, i) => {
    const prev = all[i - 1];
    return !prev || prev.blockNumber !== l.blockNumber || prev.logIndex !== l.logIndex;
  });
}
