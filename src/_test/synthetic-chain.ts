/**
 * A synthetic chain for the pricing's database tests and the benchmark: tokens, constant-product
 * pools (V2, and concentrated-liquidity-like ones priced by sqrtPriceX96), mints and swaps, block by block, ingested
 * through the indexer's own commit path (src/sync/commit.ts) in batches of any size, and rolled
 * back through its own rollback. No node: the maths is that of a full-range pool.
 */
import type { Hex } from "../decode/types.js";
import type { BatchPoolEvent, BatchSwap, PoolEventKind, PoolState, Token } from "../model/index.js";
import { poolFactsOf } from "../model/index.js";
import { familyOf, type ProtocolName, uniswapV2 } from "../protocols/index.js";
import { initSyncState, insertChainRow, loadCheckpoint } from "../store/chain-state.js";
import { type Db, withTransaction } from "../store/db.js";
import { rollbackAbove } from "../store/rollback.js";
import { commitBatch } from "../sync/commit.js";
import type { DerivedData } from "../sync/derived.js";
import type { Pool } from "../sync/pools.js";

const Q96 = 1n << 96n;

type SyntheticPool = {
  address: Hex;
  dex: string;
  protocol: ProtocolName;
  /** A family that tracks active liquidity (V3-like): priced by its sqrt price. */
  concentrated: boolean;
  token0: Hex;
  token1: Hex;
  /** Fee in millionths (3000 = 0.3 %). */
  fee: number;
  reserve0: bigint;
  reserve1: bigint;
  sqrtPriceX96: bigint | null;
};

export type SyntheticBlock = {
  number: number;
  hash: Hex;
  parentHash: Hex;
  /** Seconds since the epoch. */
  timestamp: number;
  newTokens: Token[];
  newPools: Pool[];
  swaps: BatchSwap[];
  poolEvents: BatchPoolEvent[];
};

type ChainData = {
  chainId: number;
  fork: number;
  forks: number;
  counter: number;
  tokens: Map<Hex, Token>;
  pools: Map<Hex, SyntheticPool>;
  blocks: SyntheticBlock[];
  current: SyntheticBlock;
  logIndex: number;
};

export type SyntheticChain = {
  readonly chainId: number;
  /** Closed blocks (mined), ascending. */
  readonly blocks: readonly SyntheticBlock[];
  /** The block being filled. */
  readonly currentBlock: number;
  token(symbol: string, decimals: number | null): Hex;
  /** A pool of two tokens (sorted by address like the factories do). */
  pool(tokenA: Hex, tokenB: Hex, options?: { protocol?: ProtocolName; dex?: string; fee?: number }): Hex;
  /** Adds liquidity (raw amounts of tokenA and tokenB as passed to pool()). */
  mint(pool: Hex, amounts: Record<Hex, bigint>): void;
  /** Pays `amountIn` of `tokenIn` into the pool; returns the raw amount out. */
  swap(pool: Hex, tokenIn: Hex, amountIn: bigint): bigint;
  /** The pool's balances, raw. */
  reserves(pool: Hex): { reserve0: bigint; reserve1: bigint; token0: Hex; token1: Hex };
  /** Closes the current block; the next one is `seconds` later. Returns the closed block's number. */
  mine(seconds?: number): number;
  /** An independent copy from this point on (a competing branch for reorg tests). */
  fork(): SyntheticChain;
};

/** A new synthetic chain whose first block is `startBlock` at `startTime` (seconds). */
export function createSyntheticChain(options: {
  chainId: number;
  startBlock?: number;
  startTime: number;
}): SyntheticChain {
  const startBlock = options.startBlock ?? 1;
  const data: ChainData = {
    chainId: options.chainId,
    fork: 0,
    forks: 0,
    counter: 0,
    tokens: new Map(),
    pools: new Map(),
    blocks: [],
    current: emptyBlock(0, startBlock, options.startTime, hashOf(0, startBlock - 1)),
    logIndex: 0,
  };
  return wrap(data);
}

function hashOf(fork: number, number: number): Hex {
  return `0x${fork.toString(16).padStart(8, "0")}${number.toString(16).padStart(56, "0")}`;
}

function emptyBlock(fork: number, number: number, timestamp: number, parentHash: Hex): SyntheticBlock {
  return {
    number,
    hash: hashOf(fork, number),
    parentHash,
    timestamp,
    newTokens: [],
    newPools: [],
    swaps: [],
    poolEvents: [],
  };
}

function isqrt(value: bigint): bigint {
  if (value < 2n) return value;
  let x = BigInt(Math.floor(Math.sqrt(Number(value))));
  for (;;) {
    const y = (x + value / x) >> 1n;
    if (y >= x && x * x <= value && (x + 1n) * (x + 1n) > value) return x;
    x = y;
  }
}

function wrap(data: ChainData): SyntheticChain {
  const nextAddress = (): Hex => {
    data.counter += 1;
    return `0x${data.counter.toString(16).padStart(40, "0")}`;
  };
  const txHash = (): Hex => {
    data.counter += 1;
    return `0x${data.fork.toString(16).padStart(8, "0")}${data.counter.toString(16).padStart(56, "0")}`;
  };
  const facts = (p: SyntheticPool) => poolFactsOf(p, data.tokens);
  const sqrtOf = (p: SyntheticPool) =>
    p.reserve0 === 0n ? null : isqrt((p.reserve1 * Q96 * Q96) / p.reserve0);
  const poolEvent = (
    p: SyntheticPool,
    kind: PoolEventKind,
    amount0: bigint | null,
    amount1: bigint | null,
  ) => {
    const block = data.current;
    block.poolEvents.push({
      ...facts(p),
      blockNumber: block.number,
      logIndex: data.logIndex++,
      blockTime: new Date(block.timestamp * 1000),
      txHash: txHash(),
      kind,
      amount0,
      amount1,
      liquidityDelta: null,
      tickLower: null,
      tickUpper: null,
      reserve0: p.reserve0,
      reserve1: p.reserve1,
      liquidity: null,
      sqrtPriceX96: p.concentrated ? p.sqrtPriceX96 : null,
      tick: null,
    });
  };
  const get = (pool: Hex) => {
    const p = data.pools.get(pool);
    if (!p) throw new Error(`unknown pool ${pool}`);
    return p;
  };

  return {
    get chainId() {
      return data.chainId;
    },
    get blocks() {
      return data.blocks;
    },
    get currentBlock() {
      return data.current.number;
    },
    token(symbol, decimals) {
      const address = nextAddress();
      const token: Token = { address, name: symbol, symbol, decimals, totalSupply: 10n ** 30n };
      data.tokens.set(address, token);
      data.current.newTokens.push(token);
      return address;
    },
    pool(tokenA, tokenB, options = {}) {
      const address = nextAddress();
      const [token0, token1] = tokenA < tokenB ? [tokenA, tokenB] : [tokenB, tokenA];
      const family = familyOf(options.protocol ?? uniswapV2.name);
      const protocol = family.name;
      const block = data.current;
      const base: PoolState = family.createdState(block.number);
      const concentrated = base.liquidity !== null;
      const p: SyntheticPool = {
        address,
        dex: options.dex ?? family.variants[0]?.dexName ?? protocol,
        protocol,
        concentrated,
        token0,
        token1,
        fee: options.fee ?? (concentrated ? 500 : 3000),
        reserve0: 0n,
        reserve1: 0n,
        sqrtPriceX96: null,
      };
      data.pools.set(address, p);
      block.newPools.push({
        address,
        dex: p.dex,
        protocol,
        swapEvent: "uniswap",
        factory: "0x00000000000000000000000000000000000000fa",
        token0,
        token1,
        fee: p.fee,
        tickSpacing: concentrated ? 10 : null,
        createdBlock: block.number,
        createdLogIndex: data.logIndex++,
        baseBlock: block.number,
        base,
        state: base,
      });
      return address;
    },
    mint(pool, amounts) {
      const p = get(pool);
      const amount0 = amounts[p.token0] ?? 0n;
      const amount1 = amounts[p.token1] ?? 0n;
      const first = p.reserve0 === 0n && p.reserve1 === 0n;
      p.reserve0 += amount0;
      p.reserve1 += amount1;
      if (p.concentrated) {
        if (first) {
          p.sqrtPriceX96 = sqrtOf(p);
          const [r0, r1] = [p.reserve0, p.reserve1];
          p.reserve0 = 0n;
          p.reserve1 = 0n;
          poolEvent(p, "initialize", null, null);
          p.reserve0 = r0;
          p.reserve1 = r1;
        }
        poolEvent(p, "mint", amount0, amount1);
      } else {
        poolEvent(p, "mint", amount0, amount1);
      }
    },
    swap(pool, tokenIn, amountIn) {
      const p = get(pool);
      const zeroForOne = tokenIn === p.token0;
      if (!zeroForOne && tokenIn !== p.token1) throw new Error(`token ${tokenIn} is not in pool ${pool}`);
      const [rIn, rOut] = zeroForOne ? [p.reserve0, p.reserve1] : [p.reserve1, p.reserve0];
      const withFee = amountIn * BigInt(1_000_000 - p.fee);
      const amountOut = (withFee * rOut) / (rIn * 1_000_000n + withFee);
      const amounts = {
        amount0In: zeroForOne ? amountIn : 0n,
        amount1In: zeroForOne ? 0n : amountIn,
        amount0Out: zeroForOne ? 0n : amountOut,
        amount1Out: zeroForOne ? amountOut : 0n,
      };
      p.reserve0 += amounts.amount0In - amounts.amount0Out;
      p.reserve1 += amounts.amount1In - amounts.amount1Out;
      if (p.concentrated) p.sqrtPriceX96 = sqrtOf(p);
      const block = data.current;
      block.swaps.push({
        ...facts(p),
        blockNumber: block.number,
        logIndex: data.logIndex++,
        blockHash: block.hash,
        blockTime: new Date(block.timestamp * 1000),
        txHash: txHash(),
        txIndex: 0,
        maker: "0x00000000000000000000000000000000000000aa",
        exchange: "0x00000000000000000000000000000000000000bb",
        sender: "0x00000000000000000000000000000000000000bb",
        recipient: "0x00000000000000000000000000000000000000aa",
        ...amounts,
        reserve0: p.reserve0,
        reserve1: p.reserve1,
        sqrtPriceX96: p.concentrated ? p.sqrtPriceX96 : null,
        liquidity: null,
        tick: null,
        price: null,
      });
      return amountOut;
    },
    reserves(pool) {
      const p = get(pool);
      return { reserve0: p.reserve0, reserve1: p.reserve1, token0: p.token0, token1: p.token1 };
    },
    mine(seconds = 12) {
      const closed = data.current;
      data.blocks.push(closed);
      data.current = emptyBlock(data.fork, closed.number + 1, closed.timestamp + seconds, closed.hash);
      data.logIndex = 0;
      return closed.number;
    },
    fork() {
      data.forks += 1;
      const copy = structuredClone(data);
      copy.fork = data.fork * 256 + data.forks;
      copy.forks = 0;
      copy.current.hash = hashOf(copy.fork, copy.current.number);
      return wrap(copy);
    },
  };
}

/** Creates the chain's rows (chains, sync_state at startBlock − 1) unless they exist. */
export async function prepareSyntheticChain(db: Db, chainId: number, startBlock: number): Promise<void> {
  await insertChainRow(db, {
    chainId,
    name: `synthetic ${chainId}`,
    genesisHash: hashOf(0, 0),
    devnet: true,
  });
  await initSyncState(db, chainId, startBlock);
}

/**
 * Ingests the chain's mined blocks above the stored checkpoint up to `toBlock` (default: all),
 * through the indexer's commit path, in batches of `batchSize(i)` blocks.
 */
export async function ingestSyntheticChain(
  db: Db,
  derived: DerivedData,
  chain: SyntheticChain,
  options: {
    toBlock?: number;
    batchSize?: (batchIndex: number) => number;
    /** The block the indexer heads for, given with each batch (IngestBatch `headBlock`). */
    headBlock?: number;
  } = {},
): Promise<void> {
  const checkpoint = await loadCheckpoint(db, chain.chainId);
  if (!checkpoint) throw new Error(`chain ${chain.chainId} is not prepared`);
  let previous = checkpoint.block;
  const last = options.toBlock ?? chain.blocks[chain.blocks.length - 1]?.number ?? previous;
  const pending = chain.blocks.filter((b) => b.number > previous && b.number <= last);
  let index = 0;
  for (let i = 0; i < pending.length; ) {
    const size = Math.max(1, options.batchSize?.(index++) ?? pending.length);
    const blocks = pending.slice(i, i + size);
    i += blocks.length;
    const lastBlock = blocks[blocks.length - 1] as SyntheticBlock;
    const states = new Map<Hex, PoolState>();
    for (const b of blocks) {
      for (const e of [...b.swaps, ...b.poolEvents].sort((x, y) => x.logIndex - y.logIndex)) {
        states.set(e.pool, {
          reserve0: e.reserve0,
          reserve1: e.reserve1,
          sqrtPriceX96: e.sqrtPriceX96,
          liquidity: null,
          tick: null,
          block: e.blockNumber,
          logIndex: e.logIndex,
        });
      }
    }
    await commitBatch(db, derived, {
      chainId: chain.chainId,
      source: "rpc",
      fromBlock: previous + 1,
      previous,
      headBlock: options.headBlock,
      checkpoint: {
        block: lastBlock.number,
        hash: lastBlock.hash,
        time: new Date(lastBlock.timestamp * 1000),
      },
      newPools: blocks.flatMap((b) => b.newPools),
      basedPools: [],
      newTokens: blocks.flatMap((b) => b.newTokens),
      built: {
        swaps: blocks.flatMap((b) => b.swaps),
        poolEvents: blocks.flatMap((b) => b.poolEvents),
        states,
      },
      blocks: blocks.map((b) => ({
        number: b.number,
        hash: b.hash,
        parentHash: b.parentHash,
        timestamp: b.timestamp,
      })),
      keepBlocksAbove: null,
    });
    previous = lastBlock.number;
  }
}

/** Rolls the stored chain back to `ancestor` the way the indexer does on a reorg. */
export async function rollbackSyntheticChain(
  db: Db,
  derived: DerivedData,
  chain: SyntheticChain,
  ancestor: number,
): Promise<void> {
  const checkpoint = await loadCheckpoint(db, chain.chainId);
  if (!checkpoint) throw new Error(`chain ${chain.chainId} is not prepared`);
  const block = chain.blocks.find((b) => b.number === ancestor);
  if (!block) throw new Error(`block ${ancestor} is not mined`);
  await withTransaction(db, async (client) => {
    await rollbackAbove(client, chain.chainId, checkpoint.block, {
      block: ancestor,
      hash: block.hash,
      time: new Date(block.timestamp * 1000),
    });
    await derived.afterRollback(client, { chainId: chain.chainId, ancestorBlock: ancestor });
  });
}
