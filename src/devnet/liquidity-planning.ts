import { type Address, decodeFunctionResult, encodeFunctionData, type Hex, parseAbi } from "viem";
import { positionManagerAbi, v2PairAbi } from "./abis.js";
import { algebraMintTx, algebraRemoveLiquidityTxs } from "./algebra.js";
import { type DeployedPool, v4KeyOf } from "./deploy.js";
import type { MarketEstimates } from "./market-estimates.js";
import {
  type PeripheryAddresses,
  v2AddLiquidityTx,
  v2RemoveLiquidityTx,
  v3MintTx,
  v3RemoveLiquidityTx,
} from "./periphery.js";
import { amountsForUsd, fullRangeTicks as fullRange, rangeTicks } from "./pool-math.js";
import { poolRawPrice } from "./pool-state.js";
import type { Random } from "./random.js";
import type { RpcCall } from "./rpc.js";
import type { TxRequest } from "./transactions.js";
import { liquidityForUsd, nativeCurrency, saltOf, v4DonateTx, v4ModifyLiquidityTx } from "./v4.js";

const erc721Abi = parseAbi(["function ownerOf(uint256 tokenId) view returns (address)"]);

/** A removal decided in one block, executed in a later one once its reads are back. */
export type RemovalIntent =
  | { protocol: "v2"; lp: Address; pool: DeployedPool; balanceRead: number; share: number }
  | { protocol: "v3"; lp: Address; tokenId: bigint; positionRead: number; ownerRead: number };

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

/** A liquidity provider adds to a pool, or removes (in two steps: read what it holds, then remove). */
export function planLiquidityChange(context: LiquidityContext, rng: Random, planned: LiquidityOutput): void {
  const { estimates, periphery, book } = context;
  const lp = rng.pick(context.liquidityProviders);
  const pool = context.pools[rng.weighted(context.poolWeights)];
  if (pool === undefined) return;
  const remove = rng.chance(0.35);
  if (pool.protocol === "v4") {
    planV4LiquidityChange(context, rng, planned, { lp, pool, remove });
    return;
  }
  if (pool.protocol === "algebra") {
    planAlgebraLiquidityChange(context, rng, planned, { lp, pool, remove });
    return;
  }
  if (remove && pool.protocol === "v2" && !book.busyV2Removals.has(`${lp}:${pool.key}`)) {
    book.busyV2Removals.add(`${lp}:${pool.key}`);
    planned.intents.push({
      protocol: "v2",
      lp,
      pool,
      balanceRead: planned.reads.length,
      share: 0.3 + 0.6 * rng.next(),
    });
    planned.reads.push(
      viewCall(pool.address, encodeFunctionData({ abi: v2PairAbi, functionName: "balanceOf", args: [lp] })),
    );
    return;
  }
  const own = book.lpPositions.findIndex((p) => p.owner === lp);
  if (remove && pool.protocol === "v3" && own >= 0) {
    const [position] = book.lpPositions.splice(own, 1);
    if (position === undefined) return;
    const { tokenId } = position;
    planned.intents.push({
      protocol: "v3",
      lp,
      tokenId,
      positionRead: planned.reads.length,
      ownerRead: planned.reads.length + 1,
    });
    planned.reads.push(
      viewCall(
        periphery.positionManager,
        encodeFunctionData({ abi: positionManagerAbi, functionName: "positions", args: [tokenId] }),
      ),
      viewCall(
        periphery.positionManager,
        encodeFunctionData({ abi: erc721Abi, functionName: "ownerOf", args: [tokenId] }),
      ),
    );
    return;
  }
  const state = estimates.stateOf(pool);
  const usd = pool.initialLiquidityUsd * rng.logNormal(0.02, 0.7);
  estimates.dirty.add(pool.key);
  planned.liquidityChanges++;
  if (state.protocol === "v2") {
    // At the pair's own ratio, so the router takes both amounts (nearly) whole.
    const share = usd / pool.initialLiquidityUsd;
    const amountA = BigInt(Math.floor(Number(state.reserve0) * share));
    const amountB = BigInt(Math.floor(Number(state.reserve1) * share));
    planned.txs.push(
      v2AddLiquidityTx({ periphery, from: lp, tokenA: pool.token0, tokenB: pool.token1, amountA, amountB }),
    );
    return;
  }
  const rawPrice = poolRawPrice(state);
  const widthPct = pool.fee <= 100 ? 0.1 + rng.next() * 0.9 : 2 + rng.next() * 23;
  const ticks = rangeTicks(rawPrice, widthPct, pool.tickSpacing ?? 60);
  const amounts = amountsForUsd({
    usd,
    rawPrice,
    ...ticks,
    token0: estimates.unit(pool.token0Key),
    token1: estimates.unit(pool.token1Key),
  });
  planned.txs.push(
    v3MintTx({
      periphery,
      from: lp,
      token0: pool.token0,
      token1: pool.token1,
      fee: pool.fee,
      ...ticks,
      ...amounts,
    }),
  );
  book.lpPositions.push({ tokenId: book.nextTokenId++, owner: lp });
}

/** The removals decided in an earlier block (`intents`), now that their reads (`results`) are back. */
export function planRemovals(
  context: LiquidityContext,
  pending: { intents: readonly RemovalIntent[]; results: readonly unknown[] },
  planned: LiquidityOutput,
): void {
  const { estimates, periphery, book } = context;
  const { intents, results } = pending;
  const hex = (i: number) => {
    const result = results[i];
    return typeof result === "string" && result !== "0x" ? (result as Hex) : undefined;
  };
  for (const intent of intents) {
    if (intent.protocol === "v2") {
      book.busyV2Removals.delete(`${intent.lp}:${intent.pool.key}`);
      const result = hex(intent.balanceRead);
      if (result === undefined) continue;
      const balance = decodeFunctionResult({ abi: v2PairAbi, functionName: "balanceOf", data: result });
      const liquidity = (balance * BigInt(Math.floor(intent.share * 1000))) / 1000n;
      if (liquidity === 0n) continue;
      const { pool, lp } = intent;
      planned.txs.push(
        v2RemoveLiquidityTx({ periphery, from: lp, tokenA: pool.token0, tokenB: pool.token1, liquidity }),
      );
      estimates.dirty.add(pool.key);
      planned.liquidityChanges++;
      continue;
    }
    const positionResult = hex(intent.positionRead);
    const ownerResult = hex(intent.ownerRead);
    if (positionResult === undefined || ownerResult === undefined) continue;
    const decoded = decodePosition(positionResult, ownerResult);
    // A read that does not decode as asked (not the position manager's answer) is left alone.
    if (decoded === undefined) continue;
    const { owner, position } = decoded;
    const liquidity = position[7];
    // A position that is not the provider's (an id assumption gone wrong) is left alone.
    if (owner.toLowerCase() !== intent.lp || liquidity === 0n) continue;
    planned.txs.push(v3RemoveLiquidityTx({ periphery, from: intent.lp, tokenId: intent.tokenId, liquidity }));
    const pool = estimates.deployment.pools.find(
      (p) =>
        p.protocol === "v3" &&
        p.fee === position[4] &&
        p.token0 === position[2].toLowerCase() &&
        p.token1 === position[3].toLowerCase(),
    );
    if (pool !== undefined) estimates.dirty.add(pool.key);
    planned.liquidityChanges++;
  }
}

/**
 * How a family's full-range positions change: the transactions that add `liquidity` at
 * `sqrtPrice` or remove it, and (V4) a small donation to the pool's providers.
 */
type FullRangeFamily = {
  positions: Map<string, bigint>;
  add(liquidity: bigint, sqrtPrice: number): TxRequest;
  remove(liquidity: bigint): TxRequest[];
  donate?: (sqrtPrice: number, usd: number) => TxRequest;
};

/**
 * A V4 liquidity change: a provider adds a full-range position (salted with its address), removes
 * part of what it added earlier, or (now and then) donates a little to the pool's providers.
 */
function planV4LiquidityChange(
  context: LiquidityContext,
  rng: Random,
  planned: LiquidityOutput,
  change: { lp: Address; pool: DeployedPool; remove: boolean },
): void {
  const { estimates } = context;
  const { lp, pool } = change;
  const key = v4KeyOf(pool);
  const ticks = fullRange(pool.tickSpacing ?? 60);
  const modify = (liquidityDelta: bigint, value?: bigint) =>
    v4ModifyLiquidityTx({
      router: context.v4ModifyLiquidityRouter,
      from: lp,
      key,
      ...ticks,
      liquidityDelta,
      salt: saltOf(lp),
      ...(value === undefined ? {} : { value }),
    });
  planFullRangeChange(context, rng, planned, change, {
    positions: context.book.v4Positions,
    // The coin it takes (≤ L/√P), with room for the estimate being off; the router returns the rest.
    add: (liquidity, sqrtPrice) =>
      modify(
        liquidity,
        pool.token0 === nativeCurrency ? BigInt(Math.ceil((Number(liquidity) / sqrtPrice) * 1.2)) : undefined,
      ),
    remove: (liquidity) => [modify(-liquidity)],
    donate(sqrtPrice, usd) {
      // Both sides at the pool's price.
      const amount1 = estimates.rawAmount(pool.token1Key, usd / 2);
      const amount0 = BigInt(Math.floor(Number(amount1) / sqrtPrice ** 2));
      return v4DonateTx({ router: context.v4DonateRouter, from: lp, key, amount0, amount1 });
    },
  });
}

/**
 * An Algebra liquidity change: a provider mints a full-range position of its own (through the
 * callee), or burns part of what it minted earlier and collects it (on the pool, as its owner).
 */
function planAlgebraLiquidityChange(
  context: LiquidityContext,
  rng: Random,
  planned: LiquidityOutput,
  change: { lp: Address; pool: DeployedPool; remove: boolean },
): void {
  const { lp, pool } = change;
  const ticks = fullRange(pool.tickSpacing ?? 60);
  planFullRangeChange(context, rng, planned, change, {
    positions: context.book.algebraPositions,
    add: (liquidity) =>
      algebraMintTx({ callee: context.algebraCallee, from: lp, pool: pool.address, ...ticks, liquidity }),
    remove: (liquidity) => algebraRemoveLiquidityTxs({ from: lp, pool: pool.address, ...ticks, liquidity }),
  });
}

/**
 * A provider's full-range position changes: part of what it added here is removed, or (with the
 * family's donation, now and then) a few hundred dollars are donated, or liquidity is added.
 */
function planFullRangeChange(
  context: LiquidityContext,
  rng: Random,
  planned: LiquidityOutput,
  change: { lp: Address; pool: DeployedPool; remove: boolean },
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

function decodePosition(positionResult: Hex, ownerResult: Hex) {
  try {
    return {
      owner: decodeFunctionResult({ abi: erc721Abi, functionName: "ownerOf", data: ownerResult }),
      position: decodeFunctionResult({
        abi: positionManagerAbi,
        functionName: "positions",
        data: positionResult,
      }),
    };
  } catch {
    return undefined;
  }
}

function viewCall(to: Address, data: Hex): RpcCall {
  return { method: "eth_call", params: [{ to, data }, "latest"] };
}
