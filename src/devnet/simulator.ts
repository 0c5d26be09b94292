import {
  type Address,
  decodeFunctionResult,
  encodeEventTopics,
  encodeFunctionData,
  type Hex,
  numberToHex,
  parseAbi,
} from "viem";
import type { Logger } from "../internal/logger.js";
import { positionManagerAbi, v2PairAbi, v3PoolAbi } from "./abis.js";
import { type DeployedPool, type Deployment, peripheryOf } from "./deploy.js";
import { type PoolSpec, poolSpecs, type RouteSpec, routeSpecs, type TokenKey } from "./market.js";
import { createMarketModel, type MarketModel, tradingActivity } from "./market-model.js";
import {
  approveTx,
  v2AddLiquidityTx,
  v2RemoveLiquidityTx,
  v2SwapTx,
  v3MintTx,
  v3RemoveLiquidityTx,
  v3SwapTx,
} from "./periphery.js";
import {
  amountsForUsd,
  rangeTicks,
  rawPriceFromUsd,
  v2InputToReachPrice,
  v3InputToReachPrice,
} from "./pool-math.js";
import { applySwap, decodePoolStates, type PoolState, poolRawPrice, poolStateCalls } from "./pool-state.js";
import { createRandom, type Random } from "./random.js";
import { createDevnetRpc, type RpcCall, RpcCallError } from "./rpc.js";
import {
  checkSent,
  executeTransactions,
  type NonceBook,
  readNonces,
  sendTransactionCalls,
  type TxRequest,
} from "./transactions.js";

/** What writeHistory wrote. */
export type HistoryStats = {
  blocks: number;
  /** Transactions sent (trades and liquidity changes). */
  transactions: number;
  /** Swap events on chain in the history's blocks (a multi-hop trade emits one per hop). */
  swaps: number;
  /** Swap events the sent trades should have emitted; more than `swaps` means some reverted. */
  expectedSwaps: number;
  liquidityChanges: number;
  firstBlock: number;
  lastBlock: number;
  from: Date;
  to: Date;
  elapsedMs: number;
};

export type Simulator = {
  /** Writes `days` of trading up to `until` (block timestamps in that range), as fast as the node mines. */
  writeHistory(options: { days: number; until: Date }): Promise<HistoryStats>;
  /** Mines a block every ~`blockIntervalMs` (jittered) with 0–5 swaps at wall-clock time, until stop(). */
  startLive(options: { blockIntervalMs: number }): void;
  /** Stops live trading (waiting for the block in progress) and turns automining back on. */
  stop(): Promise<void>;
};

// Tuning of the simulated market. Blocks are sparse (minutes apart by day, longer at night) and
// carry a few trades each: Hardhat's EVM traces every step, so a swap costs it ~2 ms of CPU, and
// a week of history must be written in seconds.
/** Mean seconds between history blocks at activity 1 (divided by the hour's activity). */
const meanBlockGapSeconds = 300;
/** Random trades per history block beyond the first, at activity 1 (Poisson mean). */
const extraTradesPerBlock = 1.9;
/** Share of random trades that take a multi-hop route. */
const routeShare = 0.07;
/** Share of random trades that are ten times the usual size. */
const whaleShare = 0.02;
/** A random trade never exceeds this share of the pool's deployed liquidity. */
const maxTradeShareOfPool = 0.03;
/** Per block: chance of a liquidity change at activity 1. */
const liquidityChangeChance = 0.03;
/** Share of a pool's deviation from the market that one arbitrage trade removes (min, max). */
const arbFraction = [0.4, 0.8] as const;
/** A pool further than this (log of the price ratio) from the market is always arbitraged. */
const arbAlwaysAbove = 0.015;
/**
 * The pools' state is estimated locally from the trades sent (exact for V2) and read from the
 * chain every this many blocks, and after any liquidity change.
 */
const refreshEveryBlocks = 8;

const swapTopics = [
  encodeEventTopics({ abi: v2PairAbi, eventName: "Swap" })[0],
  encodeEventTopics({ abi: v3PoolAbi, eventName: "Swap" })[0],
] as Hex[];

const erc721Abi = parseAbi(["function ownerOf(uint256 tokenId) view returns (address)"]);

/** One pool crossed by a trade, and the side that goes in. */
type Hop = { pool: DeployedPool; zeroForOne: boolean };
/** An exact-input trade along one or more pools of one protocol. */
type Trade = { from: Address; hops: Hop[]; amountIn: bigint };

/** A removal decided in one block, executed in a later one once its reads are back. */
type RemovalIntent =
  | { protocol: "v2"; lp: Address; pool: DeployedPool; balanceRead: number; share: number }
  | { protocol: "v3"; lp: Address; tokenId: bigint; positionRead: number; ownerRead: number };

type PlannedBlock = {
  txs: TxRequest[];
  /** The trades in block order, replayed on a fresh read of the pools. */
  trades: Trade[];
  expectedSwaps: number;
  liquidityChanges: number;
  intents: RemovalIntent[];
  reads: RpcCall[];
  /** Whether the batch reads every pool's state first. */
  refresh: boolean;
  /** Pools known to be off when the block was planned; the read clears them. */
  readDirty: string[];
  /** The block's batch: pool reads, other reads, transactions, evm_mine. */
  calls: RpcCall[];
};

type SentBlock = { planned: PlannedBlock; results: Promise<unknown[]> };

/** Creates the market simulator of a deployment; deterministic from the seed. */
export function createSimulator(options: {
  rpcUrl: string;
  deployment: Deployment;
  seed: number;
  logger: Logger;
}): Simulator {
  const { deployment, logger } = options;
  const rpc = createDevnetRpc(options.rpcUrl);
  const random = createRandom(options.seed).fork("simulator");
  const periphery = peripheryOf(deployment);
  /** The pools' state reads: the same calls every time. */
  const poolReads = poolStateCalls(deployment.pools);
  const { traders, liquidityProviders } = deployment.accounts;
  const specOf = (pool: DeployedPool): PoolSpec => {
    const spec = poolSpecs.find((s) => s.key === pool.key);
    if (spec === undefined) throw new Error(`pool ${pool.key} is not in the market`);
    return spec;
  };
  const poolWeights = deployment.pools.map((pool) => specOf(pool).activity);
  const routes = routeSpecs.map((spec) => ({ spec, hops: routeHops(deployment, spec) }));

  let model: MarketModel | undefined;
  let nonces: NonceBook = new Map();
  /** Local estimates of every pool's state (see refreshEveryBlocks). */
  let states = new Map<string, PoolState>();
  /** Pools whose estimate is known to be off (a liquidity change): read them with the next block. */
  const dirty = new Set<string>();
  let lastTimestamp = 0;
  let blockIndex = 0;
  let nextTokenId = 1n;
  let approved = false;
  /** V3 positions the liquidity providers minted here (each removed whole, once). */
  const lpPositions: { tokenId: bigint; owner: Address }[] = [];
  let pendingRemovals: { intents: RemovalIntent[]; results: unknown[] } = { intents: [], results: [] };
  const busyV2Removals = new Set<string>();
  let live: { stopped: boolean; timer?: NodeJS.Timeout; inFlight?: Promise<void> } | undefined;

  /**
   * Reads what the simulator keeps (nonces, pools, the next position id) and approves once. The
   * market starts at `timestamp` (the history's start), not at the latest block, whose time
   * depends on how long the deployment took: the history must depend on the seed alone.
   */
  const prepare = async (timestamp: number) => {
    const latest = await rpc.request<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    lastTimestamp = Number(latest.timestamp);
    model ??= createMarketModel({
      tokens: deployment.tokens,
      random: random.fork("market"),
      startTimestamp: timestamp,
    });
    nonces = await readNonces(rpc, [deployment.accounts.deployer, ...liquidityProviders, ...traders]);
    const supplyCall = {
      method: "eth_call",
      params: [
        {
          to: deployment.v3.positionManager,
          data: encodeFunctionData({ abi: positionManagerAbi, functionName: "totalSupply" }),
        },
        "latest",
      ],
    };
    const results = await rpc.batch<Hex>([...poolReads, supplyCall]);
    states = decodePoolStates(deployment.pools, results.slice(0, -1));
    dirty.clear();
    // Position ids are sequential, and nobody burns positions here.
    nextTokenId = BigInt(results.at(-1) ?? "0x0") + 1n;
    if (approved) return;
    // Removing V2 liquidity through the router needs the pair's LP token approved to it.
    const approvals = liquidityProviders.flatMap((lp) =>
      deployment.pools
        .filter((pool) => pool.protocol === "v2")
        .map((pool) =>
          approveTx({
            from: lp,
            token: pool.address,
            spender: periphery.v2Router,
            label: `approve ${pool.key} LP tokens`,
          }),
        ),
    );
    const ts = Math.max(timestamp, lastTimestamp + 1);
    await executeTransactions(rpc, nonces, approvals, { timestamp: ts });
    lastTimestamp = ts;
    approved = true;
  };

  const marketPrice = (key: TokenKey) => (model as MarketModel).priceUsd(key);
  const unit = (key: TokenKey) => ({
    priceUsd: marketPrice(key),
    decimals: deployment.tokens[key].unitDecimals,
  });
  const rawAmount = (key: TokenKey, usd: number) =>
    BigInt(Math.floor((usd / marketPrice(key)) * 10 ** deployment.tokens[key].unitDecimals));
  const stateOf = (pool: DeployedPool): PoolState => {
    const state = states.get(pool.key);
    if (state === undefined) throw new Error(`no state for pool ${pool.key}`);
    return state;
  };
  /** log(pool price / market price) of token0 in token1: > 0 when token0 is dear in the pool. */
  const deviation = (pool: DeployedPool) =>
    Math.log(poolRawPrice(stateOf(pool)) / rawPriceFromUsd(unit(pool.token0Key), unit(pool.token1Key)));

  /** Applies a trade to the local estimates, hop by hop (each hop's output is the next one's input). */
  const applyTrade = (trade: Trade) => {
    let amount = trade.amountIn;
    for (const hop of trade.hops) {
      const result = applySwap(stateOf(hop.pool), hop.pool.fee, hop.zeroForOne, amount);
      states.set(hop.pool.key, result.state);
      amount = result.amountOut;
    }
  };

  const tradeTx = (trade: Trade): TxRequest => {
    const first = trade.hops[0];
    if (first === undefined) throw new Error("a trade needs a pool");
    const path = [first.zeroForOne ? first.pool.token0 : first.pool.token1];
    for (const hop of trade.hops) path.push(hop.zeroForOne ? hop.pool.token1 : hop.pool.token0);
    return first.pool.protocol === "v2"
      ? v2SwapTx({ periphery, from: trade.from, path, amountIn: trade.amountIn })
      : v3SwapTx({
          periphery,
          from: trade.from,
          path,
          fees: trade.hops.map((h) => h.pool.fee),
          amountIn: trade.amountIn,
        });
  };

  const addTrade = (planned: PlannedBlock, trade: Trade) => {
    if (trade.amountIn <= 0n) return;
    applyTrade(trade);
    planned.trades.push(trade);
    planned.txs.push(tradeTx(trade));
    planned.expectedSwaps += trade.hops.length;
  };

  /** Trades that pull pools back towards the market, as arbitrageurs do. */
  const planArbitrage = (rng: Random, planned: PlannedBlock, maxTrades: number) => {
    let count = 0;
    for (const pool of deployment.pools) {
      if (count >= maxTrades) break;
      const d = deviation(pool);
      // Not worth it within the fee (plus gas and risk, which this margin stands for).
      const threshold = pool.fee / 1_000_000 + (pool.fee <= 100 ? 0.0005 : 0.004);
      // Small gaps wait for a busy pool's arbitrageurs; a wide one is always taken, so that no pool
      // drifts far from the market after a big routed trade or a liquidity removal.
      const wide = Math.abs(d) > arbAlwaysAbove;
      if (
        Math.abs(d) <= threshold ||
        (!wide && !rng.chance(Math.min(0.6, 0.1 + 0.05 * specOf(pool).activity)))
      )
        continue;
      const state = stateOf(pool);
      const fraction = arbFraction[0] + (arbFraction[1] - arbFraction[0]) * rng.next();
      const target = poolRawPrice(state) * Math.exp(-fraction * d);
      const move =
        state.protocol === "v2"
          ? v2InputToReachPrice(Number(state.reserve0), Number(state.reserve1), target)
          : v3InputToReachPrice(Number(state.liquidity), poolRawPrice(state), target);
      const tokenIn = move.zeroForOne ? pool.token0Key : pool.token1Key;
      const cap = rawAmount(tokenIn, pool.initialLiquidityUsd * 0.1);
      const amountIn = bigMin(BigInt(Math.floor(move.amountIn)), cap);
      if (amountIn <= rawAmount(tokenIn, 1)) continue;
      addTrade(planned, { from: rng.pick(traders), hops: [{ pool, zeroForOne: move.zeroForOne }], amountIn });
      count++;
    }
    return count;
  };

  /** A random trade: mostly one pool picked by activity, its side leaning towards the market. */
  const planRandomTrade = (rng: Random, planned: PlannedBlock) => {
    const from = rng.pick(traders);
    if (rng.chance(routeShare)) {
      const route = routes[rng.weighted(routes.map((r) => r.spec.activity))];
      if (route !== undefined) {
        const reverse = rng.chance(0.5);
        const hops = reverse
          ? [...route.hops].reverse().map((hop) => ({ pool: hop.pool, zeroForOne: !hop.zeroForOne }))
          : route.hops;
        const tokenIn = reverse ? route.spec.path.at(-1) : route.spec.path[0];
        if (tokenIn !== undefined) {
          addTrade(planned, {
            from,
            hops,
            amountIn: rawAmount(tokenIn, rng.logNormal(route.spec.tradeUsd, 0.8)),
          });
          return;
        }
      }
    }
    const pool = deployment.pools[rng.weighted(poolWeights)];
    if (pool === undefined) return;
    const spec = specOf(pool);
    // The random side leans towards the market: most of the convergence comes from here.
    const zeroForOne = rng.chance(Math.min(0.9, Math.max(0.1, 0.5 + 15 * deviation(pool))));
    const usd = Math.min(
      rng.logNormal(spec.tradeUsd, 0.9) * (rng.chance(whaleShare) ? 10 : 1),
      pool.initialLiquidityUsd * maxTradeShareOfPool,
    );
    const amountIn = rawAmount(zeroForOne ? pool.token0Key : pool.token1Key, usd);
    addTrade(planned, { from, hops: [{ pool, zeroForOne }], amountIn });
  };

  /** A liquidity provider adds to a pool, or removes (in two steps: read what it holds, then remove). */
  const planLiquidityChange = (rng: Random, planned: PlannedBlock) => {
    const lp = rng.pick(liquidityProviders);
    const pool = deployment.pools[rng.weighted(poolWeights)];
    if (pool === undefined) return;
    const remove = rng.chance(0.35);
    if (remove && pool.protocol === "v2" && !busyV2Removals.has(`${lp}:${pool.key}`)) {
      busyV2Removals.add(`${lp}:${pool.key}`);
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
    const own = lpPositions.findIndex((p) => p.owner === lp);
    if (remove && pool.protocol === "v3" && own >= 0) {
      const [position] = lpPositions.splice(own, 1);
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
    const state = stateOf(pool);
    const usd = pool.initialLiquidityUsd * rng.logNormal(0.02, 0.7);
    dirty.add(pool.key);
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
      token0: unit(pool.token0Key),
      token1: unit(pool.token1Key),
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
    lpPositions.push({ tokenId: nextTokenId++, owner: lp });
  };

  /** The removals decided in an earlier block, now that their reads are back. */
  const planRemovals = (planned: PlannedBlock) => {
    const { intents, results } = pendingRemovals;
    pendingRemovals = { intents: [], results: [] };
    const hex = (i: number) => {
      const result = results[i];
      return typeof result === "string" && result !== "0x" ? (result as Hex) : undefined;
    };
    for (const intent of intents) {
      if (intent.protocol === "v2") {
        busyV2Removals.delete(`${intent.lp}:${intent.pool.key}`);
        const result = hex(intent.balanceRead);
        if (result === undefined) continue;
        const balance = decodeFunctionResult({ abi: v2PairAbi, functionName: "balanceOf", data: result });
        const liquidity = (balance * BigInt(Math.floor(intent.share * 1000))) / 1000n;
        if (liquidity === 0n) continue;
        const { pool, lp } = intent;
        planned.txs.push(
          v2RemoveLiquidityTx({ periphery, from: lp, tokenA: pool.token0, tokenB: pool.token1, liquidity }),
        );
        dirty.add(pool.key);
        planned.liquidityChanges++;
        continue;
      }
      const positionResult = hex(intent.positionRead);
      const ownerResult = hex(intent.ownerRead);
      if (positionResult === undefined || ownerResult === undefined) continue;
      const owner = decodeFunctionResult({ abi: erc721Abi, functionName: "ownerOf", data: ownerResult });
      const position = decodeFunctionResult({
        abi: positionManagerAbi,
        functionName: "positions",
        data: positionResult,
      });
      const liquidity = position[7];
      // A position that is not the provider's (an id assumption gone wrong) is left alone.
      if (owner.toLowerCase() !== intent.lp || liquidity === 0n) continue;
      planned.txs.push(
        v3RemoveLiquidityTx({ periphery, from: intent.lp, tokenId: intent.tokenId, liquidity }),
      );
      const pool = deployment.pools.find(
        (p) =>
          p.protocol === "v3" &&
          p.fee === position[4] &&
          p.token0 === position[2].toLowerCase() &&
          p.token1 === position[3].toLowerCase(),
      );
      if (pool !== undefined) dirty.add(pool.key);
      planned.liquidityChanges++;
    }
  };

  /**
   * Plans one block: pending removals, arbitrage, random trades, maybe a liquidity change. Its
   * batch is mined in one round trip: the node runs a batch in order (see hardhat-node.cjs), so
   * it holds any reads (they see the state after the previous block), the transactions and
   * evm_mine with the block's timestamp.
   */
  const planBlock = (
    timestamp: number,
    budget: { randomTrades: number } | { totalTrades: number },
  ): PlannedBlock => {
    const rng = random;
    (model as MarketModel).advanceTo(timestamp);
    const planned: PlannedBlock = {
      txs: [],
      trades: [],
      expectedSwaps: 0,
      liquidityChanges: 0,
      intents: [],
      reads: [],
      // Read the pools now and then, and after liquidity changes (which are not estimated).
      refresh: blockIndex % refreshEveryBlocks === 0 || dirty.size > 0,
      readDirty: [...dirty],
      calls: [],
    };
    planRemovals(planned);
    // Live blocks carry 0-5 trades in all; history blocks take every arbitrage that is due.
    const maxArbitrage = "totalTrades" in budget ? Math.min(2, budget.totalTrades) : Number.POSITIVE_INFINITY;
    const arbitrage = planArbitrage(rng, planned, maxArbitrage);
    const randomTrades = "totalTrades" in budget ? budget.totalTrades - arbitrage : budget.randomTrades;
    for (let i = 0; i < randomTrades; i++) planRandomTrade(rng, planned);
    if (rng.chance(liquidityChangeChance * tradingActivity(timestamp))) planLiquidityChange(rng, planned);
    planned.calls = [
      ...(planned.refresh ? poolReads : []),
      ...planned.reads,
      ...sendTransactionCalls(nonces, planned.txs),
      { method: "evm_mine", params: [timestamp] },
    ];
    lastTimestamp = timestamp;
    blockIndex++;
    return planned;
  };

  const sendBlock = (planned: PlannedBlock): SentBlock => {
    const results = rpc.batchSettled(planned.calls);
    // Awaited in settleBlock; marked handled now so a failure is not an unhandled rejection meanwhile.
    results.catch(() => {});
    return { planned, results };
  };

  /**
   * Checks a sent block's answers and takes in its reads. A pool read gives the state after the
   * block before it, so the trades of this block, and of `later` blocks already planned on the
   * estimates, are replayed on it.
   */
  const settleBlock = async (sent: SentBlock, later: readonly Trade[]) => {
    const { planned } = sent;
    const results = await sent.results;
    const stateCount = planned.refresh ? poolReads.length : 0;
    const readCount = stateCount + planned.reads.length;
    const reads = results.slice(0, readCount);
    await checkSent(rpc, nonces, planned.txs, results.slice(readCount, -1));
    const failed = [...reads, results.at(-1)].find((r) => r instanceof RpcCallError);
    if (failed) throw failed;
    if (planned.refresh) {
      states = decodePoolStates(deployment.pools, reads.slice(0, stateCount) as Hex[]);
      for (const trade of [...planned.trades, ...later]) applyTrade(trade);
      for (const key of planned.readDirty) dirty.delete(key);
    }
    pendingRemovals = { intents: planned.intents, results: reads.slice(stateCount) };
  };

  return {
    async writeHistory({ days, until }) {
      const startedAt = performance.now();
      const untilSeconds = Math.floor(until.getTime() / 1000);
      const fromSeconds = untilSeconds - Math.round(days * 86_400);
      await rpc.request("evm_setAutomine", [false]);
      try {
        await prepare(fromSeconds);
        if (lastTimestamp > fromSeconds + 3600) {
          // Blocks cannot go back in time: the history would be squeezed after the head.
          throw new Error(
            `the chain's latest block (${new Date(lastTimestamp * 1000).toISOString()}) is after the history's start ` +
              `(${new Date(fromSeconds * 1000).toISOString()}): date the node's genesis at or before it (initialDate)`,
          );
        }
        const firstBlock = Number(await rpc.request<Hex>("eth_blockNumber")) + 1;
        const schedule = random.fork(`schedule:${untilSeconds}:${days}`);
        // `t` is the schedule, a function of the seed and the range only; a block is dated at
        // it, or just after the previous block when the deployment's blocks are later still.
        let t = fromSeconds;
        const stats = { blocks: 0, transactions: 0, expectedSwaps: 0, liquidityChanges: 0 };
        // Each block is planned while the node mines the one before: two cores at work.
        let previous: SentBlock | undefined;
        for (;;) {
          // Fewer blocks (and fewer trades in each) in quiet hours.
          const gap = schedule.exponential(meanBlockGapSeconds) / tradingActivity(t);
          t += Math.max(1, Math.round(gap));
          if (t > untilSeconds) break;
          const randomTrades = 1 + schedule.poisson(extraTradesPerBlock * tradingActivity(t));
          const block = planBlock(Math.max(t, lastTimestamp + 1), { randomTrades });
          if (previous !== undefined) await settleBlock(previous, block.trades);
          previous = sendBlock(block);
          stats.blocks++;
          stats.transactions += block.txs.length;
          stats.expectedSwaps += block.expectedSwaps;
          stats.liquidityChanges += block.liquidityChanges;
          if (stats.blocks % 500 === 0) {
            logger.debug(
              { blocks: stats.blocks, at: new Date(t * 1000).toISOString() },
              "writing devnet history",
            );
          }
        }
        if (previous !== undefined) await settleBlock(previous, []);
        const lastBlock = firstBlock + stats.blocks - 1;
        const swaps =
          stats.blocks === 0
            ? 0
            : (
                await rpc.request<unknown[]>("eth_getLogs", [
                  {
                    fromBlock: numberToHex(firstBlock),
                    toBlock: numberToHex(lastBlock),
                    topics: [swapTopics],
                  },
                ])
              ).length;
        const result: HistoryStats = {
          ...stats,
          swaps,
          firstBlock,
          lastBlock,
          from: new Date(fromSeconds * 1000),
          to: new Date(untilSeconds * 1000),
          elapsedMs: Math.round(performance.now() - startedAt),
        };
        const fields = {
          days,
          blocks: result.blocks,
          swaps,
          expected_swaps: stats.expectedSwaps,
          liquidity_changes: stats.liquidityChanges,
          elapsed_ms: result.elapsedMs,
        };
        if (swaps < stats.expectedSwaps) logger.warn(fields, "devnet history written; some trades reverted");
        else logger.info(fields, "devnet history written");
        return result;
      } finally {
        // Leave a node that automines again; a failure here must not hide the one that got us here.
        await rpc
          .request("evm_setAutomine", [true])
          .catch((error: unknown) => logger.warn({ err: error }, "could not turn automining back on"));
      }
    },

    startLive({ blockIntervalMs }) {
      if (live !== undefined) throw new Error("the simulator is already trading live");
      const state: { stopped: boolean; timer?: NodeJS.Timeout; inFlight?: Promise<void> } = {
        stopped: false,
      };
      live = state;
      const liveRandom = random.fork("live");
      let needsPrepare = !approved;
      const tick = async () => {
        try {
          if (needsPrepare) {
            await prepare(Math.floor(Date.now() / 1000));
            needsPrepare = false;
          }
          await rpc.request("evm_setAutomine", [false]);
          const timestamp = Math.max(Math.floor(Date.now() / 1000), lastTimestamp);
          await settleBlock(sendBlock(planBlock(timestamp, { totalTrades: liveRandom.int(6) })), []);
        } catch (error) {
          if (state.stopped) return;
          // Someone else may have used a trader's nonce, or mined in between: read everything again.
          logger.warn({ err: error }, "devnet live block failed; resynchronising");
          needsPrepare = true;
        }
      };
      const scheduleNext = () => {
        if (state.stopped) return;
        state.timer = setTimeout(
          () => {
            state.inFlight = tick().finally(scheduleNext);
          },
          blockIntervalMs * (0.5 + liveRandom.next()),
        );
      };
      scheduleNext();
      logger.info({ block_interval_ms: blockIntervalMs }, "devnet live trading started");
    },

    async stop() {
      const state = live;
      if (state === undefined) return;
      state.stopped = true;
      clearTimeout(state.timer);
      await state.inFlight;
      live = undefined;
      // Leave a node that behaves like a plain Hardhat node (when it still runs).
      await rpc.request("evm_setAutomine", [true]).catch(() => {});
    },
  };
}

/** The pools of a route, in its direction. */
function routeHops(deployment: Deployment, route: RouteSpec): Hop[] {
  const hops: Hop[] = [];
  for (let i = 0; i + 1 < route.path.length; i++) {
    const tokenIn = deployment.tokens[route.path[i] as TokenKey].address;
    const tokenOut = deployment.tokens[route.path[i + 1] as TokenKey].address;
    const fee = route.protocol === "v2" ? 3000 : route.fees?.[i];
    const pool = deployment.pools.find(
      (p) =>
        p.protocol === route.protocol &&
        p.fee === fee &&
        ((p.token0 === tokenIn && p.token1 === tokenOut) || (p.token0 === tokenOut && p.token1 === tokenIn)),
    );
    if (pool === undefined)
      throw new Error(`route ${route.path.join("→")} has no ${route.protocol} pool for hop ${i + 1}`);
    hops.push({ pool, zeroForOne: pool.token0 === tokenIn });
  }
  return hops;
}

function viewCall(to: Address, data: Hex): RpcCall {
  return { method: "eth_call", params: [{ to, data }, "latest"] };
}

function bigMin(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
