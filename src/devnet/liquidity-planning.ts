import type { Address, Hex } from "viem";
import type { DeployedPool } from "./deploy.js";
import { devnetFamilyOf, type LiquidityChange, type RemovalData } from "./families/index.js";
import type { MarketEstimates } from "./market-estimates.js";
import type { PeripheryAddresses } from "./periphery.js";
import { type PoolState, poolRawPrice } from "./pool-state.js";
import type { Random } from "./random.js";
import type { RpcCall } from "./rpc.js";
import type { TxRequest } from "./transactions.js";
import { liquidityForUsd } from "./v4.js";

/**
 * A removal decided in one block, executed in a later one once its reads are back: `complete`
 * adds its transactions from `read(i)`, the answer of the block's read `i` (undefined when there
 * is none).
 */
export type RemovalIntent = RemovalData & {
  complete(context: LiquidityContext, read: (i: number) => Hex | undefined, planned: LiquidityOutput): void;
};

/** What the liquidity providers hold and have under way, as far as the planner knows. */
export type LiquidityBook = {
  /** The id the next V3 position will get (ids are sequential, and nobody burns positions here). */
  nextTokenId: bigint;
  /** V3 positions the liquidity providers minted here (each removed whole, once). */
  lpPositions: { tokenId: bigint; owner: Address }[];
  /** `lp:poolKey` of V2 removals waiting for their balance read. */
  busyV2Removals: Set<string>;
  /**
   * V4 liquidity each provider added here, by `lp:poolKey` (the position is the router's, salted
   * with the provider's address); removals take part of it.
   */
  v4Positions: Map<string, bigint>;
  /** Algebra liquidity each provider minted here (a full-range position of its own), by `lp:poolKey`. */
  algebraPositions: Map<string, bigint>;
};

/** The parts of a planned block that liquidity changes add to. */
export type LiquidityOutput = {
  txs: TxRequest[];
  liquidityChanges: number;
  intents: RemovalIntent[];
  /** Reads sent with the block; intents point into them by index. */
  reads: RpcCall[];
};

export type LiquidityContext = {
  estimates: MarketEstimates;
  periphery: PeripheryAddresses;
  liquidityProviders: readonly Address[];
  /** v4-core's PoolModifyLiquidityTest and PoolDonateTest, which V4 liquidity goes through. */
  v4ModifyLiquidityRouter: Address;
  v4DonateRouter: Address;
  /** The package's TestAlgebraCallee, which Algebra mints go through. */
  algebraCallee: Address;
  /** The pools whose liquidity changes here, and their activity weights in the same order. */
  pools: readonly DeployedPool[];
  poolWeights: readonly number[];
  book: LiquidityBook;
};

/** A liquidity provider adds to a pool, or removes (its family decides how: see `DevnetFamily`). */
export function planLiquidityChange(context: LiquidityContext, rng: Random, planned: LiquidityOutput): void {
  const lp = rng.pick(context.liquidityProviders);
  const pool = context.pools[rng.weighted(context.poolWeights)];
  if (pool === undefined) return;
  const remove = rng.chance(0.35);
  devnetFamilyOf(pool.protocol).planLiquidityChange(context, rng, planned, { lp, pool, remove });
}

/** The removals decided in an earlier block (`intents`), now that their reads (`results`) are back. */
export function planRemovals(
  context: LiquidityContext,
  pending: { intents: readonly RemovalIntent[]; results: readonly unknown[] },
  planned: LiquidityOutput,
): void {
  const { results } = pending;
  const read = (i: number) => {
    const result = results[i];
    return typeof result === "string" && result !== "0x" ? (result as Hex) : undefined;
  };
  for (const intent of pending.intents) intent.complete(context, read, planned);
}

/**
 * The start of an added position: the pool's estimated state and the USD the provider adds (a
 * draw); the pool is then off its estimate until the next read.
 */
export function beginLiquidityAdd(
  context: LiquidityContext,
  rng: Random,
  planned: LiquidityOutput,
  pool: DeployedPool,
): { state: PoolState; usd: number } {
  const { estimates } = context;
  const state = estimates.stateOf(pool);
  const usd = pool.initialLiquidityUsd * rng.logNormal(0.02, 0.7);
  estimates.dirty.add(pool.key);
  planned.liquidityChanges++;
  return { state, usd };
}

/**
 * How a family's full-range positions change: the transactions that add `liquidity` at
 * `sqrtPrice` or remove it, and (V4) a small donation to the pool's providers.
 */
export type FullRangeFamily = {
  positions: Map<string, bigint>;
  add(liquidity: bigint, sqrtPrice: number): TxRequest;
  remove(liquidity: bigint): TxRequest[];
  donate?: (sqrtPrice: number, usd: number) => TxRequest;
};

/**
 * A provider's full-range position changes: part of what it added here is removed, or (with the
 * family's donation, now and then) a few hundred dollars are donated, or liquidity is added.
 */
export function planFullRangeChange(
  context: LiquidityContext,
  rng: Random,
  planned: LiquidityOutput,
  change: LiquidityChange,
  family: FullRangeFamily,
): void {
  const { estimates } = context;
  const { lp, pool } = change;
  const bookKey = `${lp}:${pool.key}`;
  const held = family.positions.get(bookKey) ?? 0n;
  estimates.dirty.add(pool.key);
  planned.liquidityChanges++;
  if (change.remove && held > 0n) {
    const liquidity = (held * BigInt(300 + Math.floor(rng.next() * 700))) / 1000n;
    family.positions.set(bookKey, held - liquidity);
    planned.txs.push(...family.remove(liquidity));
    return;
  }
  const sqrtPrice = Math.sqrt(poolRawPrice(estimates.stateOf(pool)));
  if (family.donate !== undefined && rng.chance(0.15)) {
    planned.txs.push(family.donate(sqrtPrice, 50 + 450 * rng.next()));
    return;
  }
  const usd = pool.initialLiquidityUsd * rng.logNormal(0.02, 0.7);
  const liquidity = liquidityForUsd(usd, sqrtPrice, estimates.unit(pool.token1Key));
  if (liquidity <= 0n) return;
  family.positions.set(bookKey, held + liquidity);
  planned.txs.push(family.add(liquidity, sqrtPrice));
}

/** A read-only call at the latest block. */
export function viewCall(to: Address, data: Hex): RpcCall {
  return { method: "eth_call", params: [{ to, data }, "latest"] };
}
