import {
  type Address,
  decodeFunctionResult,
  encodeEventTopics,
  encodeFunctionData,
  type Hex,
  parseAbi,
} from "viem";
import type { Logger } from "../internal/logger.js";
import { positionManagerAbi, v2PairAbi, v3PoolAbi } from "./abis.js";
import { type CompiledContracts, compileDevnetContracts } from "./compile.js";
import type { DeployedPool, Deployment } from "./deploy.js";
import { poolSpecs, routeSpecs, type TokenKey } from "./market.js";
import { createMarketModel, type MarketModel, tradingActivity } from "./market-model.js";
import {
  approveTx,
  type PeripheryAddresses,
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
import { decodePoolReader, type ExtraRead, type PoolState, poolRawPrice, poolReaderCall } from "./pool-state.js";
import { createRandom, type Random } from "./random.js";
import { createDevnetRpc, RpcCallError } from "./rpc.js";
import {
  checkSent,
  executeTransactions,
  mineBlock,
  type NonceBook,
  readNonces,
  sendTransactionCalls,
  type TxRequest,
} from "./transactions.js";

/** What writeHistory wrote. */
export type HistoryStats = {
  blocks: number;
  /** Transactions sent (trades, liquidity changes, approvals). */
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

// Tuning of the simulated market. Blocks are sparse (a few minutes apart by day) and carry a few
// trades each: the node's cost is per block far more than per transaction, and a week of history
// must be written in seconds.
/** Mean seconds between history blocks at activity 1 (divided by the hour's activity). */
const meanBlockGapSeconds = 220;
/** Random trades per history block beyond the first, at activity 1 (Poisson mean). */
const extraTradesPerBlock = 2.2;
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

const swapTopics = [
  encodeEventTopics({ abi: v2PairAbi, eventName: "Swap" })[0],
  encodeEventTopics({ abi: v3PoolAbi, eventName: "Swap" })[0],
] as Hex[];

const erc721Abi = parseAbi(["function ownerOf(uint256 tokenId) view returns (address)"]);

type RemovalIntent =
  | { protocol: "v2"; lp: Address; pool: DeployedPool; balanceRead: number; share: number }
  | { protocol: "v3"; lp: Address; tokenId: bigint; positionRead: number; ownerRead: number };

type PlannedBlock = { txs: TxRequest[]; expectedSwaps: number; liquidityChanges: number; intents: RemovalIntent[]; reads: ExtraRead[] };

/** Creates the market simulator of a deployment; deterministic from the seed. */
export function createSimulator(options: {
  rpcUrl: string;
  deployment: Deployment;
  seed: number;
  logger: Logger;
  contracts?: CompiledContracts;
}): Simulator {
  const { deployment, logger } = options;
  const rpc = createDevnetRpc(options.rpcUrl);
  const contracts = options.contracts ?? compileDevnetContracts({ logger });
  const random = createRandom(options.seed).fork("simulator");
  const periphery: PeripheryAddresses = {
    v2Router: deployment.v2.router,
    swapRouter: deployment.v3.swapRouter,
    positionManager: deployment.v3.positionManager,
  };
  const specByPool = new Map(poolSpecs.map((spec) => [spec.key, spec]));
  const everyone = [deployment.accounts.deployer, ...deployment.accounts.liquidityProviders, ...deployment.accounts.traders];

  let model: MarketModel | undefined;
  let nonces: NonceBook = new Map();
  let states = new Map<string, PoolState>();
  let lastTimestamp = 0;
  let blockIndex = 0;
  let nextTokenId = 1n;
  let ready = false;
  const lastArbBlock = new Map<string, number>();
  /** V3 positions the liquidity providers minted here (removed whole, once). */
  const lpPositions: { tokenId: bigint; owner: Address }[] = [];
  /** Removals whose reads are in flight; executed in the next block. */
  let pendingIntents: { intents: RemovalIntent[]; results: Hex[] } = { intents: [], results: [] };
  const busyV2Removals = new Set<string>();

  let live: { stopped: boolean; timer?: NodeJS.Timeout; inFlight?: Promise<void> } | undefined;

  /** Reads what the simulator keeps (nonces, pool states, the next position id) and does the one-time approvals. */
  const prepare = async (timestamp: number) => {
    const latest = await rpc.request<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    lastTimestamp = Number(latest.timestamp);
    model ??= createMarketModel({ tokens: deployment.tokens, random: random.fork("market"), startTimestamp: lastTimestamp });
    nonces = await readNonces(rpc, everyone);
    const [readerResult, supply] = await rpc.batch<Hex>([
      poolReaderCall(contracts, deployment),
      {
        method: "eth_call",
        params: [
          {
            to: deployment.v3.positionManager,
            data: encodeFunctionData({ abi: positionManagerAbi, functionName: "totalSupply" }),
          },
          "latest",
        ],
      },
    ]);
    states = decodePoolReader(deployment, readerResult as Hex).pools;
    // Position ids are sequential and nobody burns positions here.
    nextTokenId = BigInt(supply as Hex) + 1n;
    if (ready) return;
    // Removing V2 liquidity through the router needs the pair's LP token approved to it.
    const approvals = deployment.accounts.liquidityProviders.flatMap((lp) =>
      deployment.pools
        .filter((pool) => pool.protocol === "v2")
        .map((pool) => approveTx({ from: lp, token: pool.address, spender: periphery.v2Router, label: `approve ${pool.key} LP tokens` })),
    );
    const ts = Math.max(timestamp, lastTimestamp + 1);
    await executeTransactions(rpc, nonces, approvals, { timestamp: ts });
    lastTimestamp = ts;
    ready = true;
  };

  const priceUsd = (key: TokenKey) => (model as MarketModel).priceUsd(key);
  const rawAmount = (key: TokenKey, usd: number) =>
    BigInt(Math.floor((usd / priceUsd(key)) * 10 ** deployment.tokens[key].unitDecimals));
  const truePoolPrice = (pool: DeployedPool) =>
    rawPriceFromUsd(
      { priceUsd: priceUsd(pool.token0Key), decimals: deployment.tokens[pool.token0Key].unitDecimals },
      { priceUsd: priceUsd(pool.token1Key), decimals: deployment.tokens[pool.token1Key].unitDecimals },
    );
  /** log(pool price / market price) of token0 in token1: > 0 when token0 is dear in the pool. */
  const deviation = (pool: DeployedPool) => {
    const state = states.get(pool.key);
    return state === undefined ? 0 : Math.log(poolRawPrice(state) / truePoolPrice(pool));
  };

  const swapTx = (pool: DeployedPool, from: Address, zeroForOne: boolean, amountIn: bigint): TxRequest => {
    const path = zeroForOne ? [pool.token0, pool.token1] : [pool.token1, pool.token0];
    return pool.protocol === "v2"
      ? v2SwapTx({ periphery, from, path, amountIn })
      : v3SwapTx({ periphery, from, path, fees: [pool.fee], amountIn });
  };

  /** Trades that pull pools back towards the market, as arbitrageurs do. */
  const planArbitrage = (rng: Random, maxTrades: number): TxRequest[] => {
    const txs: TxRequest[] = [];
    for (const pool of deployment.pools) {
      if (txs.length >= maxTrades) break;
      const state = states.get(pool.key);
      const spec = specByPool.get(pool.key);
      if (state === undefined || spec === undefined) continue;
      const d = deviation(pool);
      // Not worth it inside the fee; and not again right after an arbitrage whose effect the
      // (one block old) state does not show yet.
      const threshold = pool.fee / 1_000_000 + (pool.fee <= 100 ? 0.0004 : 0.0015);
      if (Math.abs(d) <= threshold || lastArbBlock.get(pool.key) === blockIndex - 1) continue;
      if (!rng.chance(Math.min(0.9, 0.3 + 0.1 * spec.activity))) continue;
      const fraction = arbFraction[0] + (arbFraction[1] - arbFraction[0]) * rng.next();
      const target = poolRawPrice(state) * Math.exp(-fraction * d);
      const move =
        state.protocol === "v2"
          ? v2InputToReachPrice(Number(state.reserve0), Number(state.reserve1), target)
          : v3InputToReachPrice(Number(state.liquidity), poolRawPrice(state), target);
      const tokenIn = move.zeroForOne ? pool.token0Key : pool.token1Key;
      const capUsd = pool.initialLiquidityUsd * 0.1;
      const amountIn = bigMin(BigInt(Math.floor(move.amountIn)), rawAmount(tokenIn, capUsd));
      if (amountIn <= rawAmount(tokenIn, 1)) continue;
      lastArbBlock.set(pool.key, blockIndex);
      txs.push(swapTx(pool, rng.pick(deployment.accounts.traders), move.zeroForOne, amountIn));
    }
    return txs;
  };

  /** A random trade: a pool picked by activity, direction leaning towards the market price. */
  const planRandomTrade = (rng: Random): { tx: TxRequest; swaps: number } => {
    const from = rng.pick(deployment.accounts.traders);
    if (rng.chance(routeShare)) {
      const route = routeSpecs[rng.weighted(routeSpecs.map((r) => r.activity))] ?? routeSpecs[0];
      if (route !== undefined) {
        const reverse = rng.chance(0.5);
        const keys = reverse ? [...route.path].reverse() : [...route.path];
        const fees = reverse ? [...(route.fees ?? [])].reverse() : [...(route.fees ?? [])];
        const path = keys.map((key) => deployment.tokens[key].address);
        const amountIn = rawAmount(keys[0] as TokenKey, rng.logNormal(route.tradeUsd, 0.8));
        const tx =
          route.protocol === "v2"
            ? v2SwapTx({ periphery, from, path, amountIn })
            : v3SwapTx({ periphery, from, path, fees, amountIn });
        return { tx, swaps: keys.length - 1 };
      }
    }
    const pool = deployment.pools[rng.weighted(deployment.pools.map((p) => specByPool.get(p.key)?.activity ?? 0))];
    const spec = pool === undefined ? undefined : specByPool.get(pool.key);
    if (pool === undefined || spec === undefined) throw new Error("no pool to trade");
    const d = deviation(pool);
    const zeroForOne = rng.chance(Math.min(0.85, Math.max(0.15, 0.5 + 6 * d)));
    const usd = Math.min(
      rng.logNormal(spec.tradeUsd, 0.9) * (rng.chance(whaleShare) ? 10 : 1),
      pool.initialLiquidityUsd * maxTradeShareOfPool,
    );
    const amountIn = rawAmount(zeroForOne ? pool.token0Key : pool.token1Key, usd);
    return { tx: swapTx(pool, from, zeroForOne, amountIn), swaps: 1 };
  };

  /** A liquidity provider adds to a pool, or removes (in two steps: read what it holds, then remove). */
  const planLiquidityChange = (rng: Random, planned: PlannedBlock) => {
    const lp = rng.pick(deployment.accounts.liquidityProviders);
    const pool = deployment.pools[rng.weighted(deployment.pools.map((p) => specByPool.get(p.key)?.activity ?? 0))];
    if (pool === undefined) return;
    const remove = rng.chance(0.35);
    if (remove && pool.protocol === "v2" && !busyV2Removals.has(`${lp}:${pool.key}`)) {
      busyV2Removals.add(`${lp}:${pool.key}`);
      planned.intents.push({ protocol: "v2", lp, pool, balanceRead: planned.reads.length, share: 0.3 + 0.6 * rng.next() });
      planned.reads.push({
        to: pool.address,
        data: encodeFunctionData({ abi: v2PairAbi, functionName: "balanceOf", args: [lp] }),
      });
      return;
    }
    const own = lpPositions.findIndex((p) => p.owner === lp);
    if (remove && pool.protocol === "v3" && own >= 0) {
      const [position] = lpPositions.splice(own, 1);
      if (position === undefined) return;
      const tokenId = position.tokenId;
      planned.intents.push({ protocol: "v3", lp, tokenId, positionRead: planned.reads.length, ownerRead: planned.reads.length + 1 });
      planned.reads.push(
        { to: periphery.positionManager, data: encodeFunctionData({ abi: positionManagerAbi, functionName: "positions", args: [tokenId] }) },
        { to: periphery.positionManager, data: encodeFunctionData({ abi: erc721Abi, functionName: "ownerOf", args: [tokenId] }) },
      );
      return;
    }
    const state = states.get(pool.key);
    if (state === undefined) return;
    const usd = pool.initialLiquidityUsd * rng.logNormal(0.02, 0.7);
    if (state.protocol === "v2") {
      // At the pair's own ratio, so the router takes both amounts whole.
      const share = usd / pool.initialLiquidityUsd;
      const amount0 = BigInt(Math.floor(Number(state.reserve0) * share));
      const amount1 = BigInt(Math.floor(Number(state.reserve1) * share));
      if (amount0 === 0n || amount1 === 0n) return;
      planned.txs.push(v2AddLiquidityTx({ periphery, from: lp, tokenA: pool.token0, tokenB: pool.token1, amountA: amount0, amountB: amount1 }));
      planned.liquidityChanges++;
      return;
    }
    const tickSpacing = pool.tickSpacing ?? 60;
    const rawPrice = poolRawPrice(state);
    const widthPct = pool.fee <= 100 ? 0.1 + rng.next() * 0.9 : 2 + rng.next() * 23;
    const ticks = rangeTicks(rawPrice, widthPct, tickSpacing);
    const amounts = amountsForUsd({
      usd,
      rawPrice,
      ...ticks,
      token0: { priceUsd: priceUsd(pool.token0Key), decimals: deployment.tokens[pool.token0Key].unitDecimals },
      token1: { priceUsd: priceUsd(pool.token1Key), decimals: deployment.tokens[pool.token1Key].unitDecimals },
    });
    if (amounts.amount0 === 0n && amounts.amount1 === 0n) return;
    planned.txs.push(
      v3MintTx({ periphery, from: lp, token0: pool.token0, token1: pool.token1, fee: pool.fee, ...ticks, ...amounts }),
    );
    lpPositions.push({ tokenId: nextTokenId++, owner: lp });
    planned.liquidityChanges++;
  };

  /** The removals decided in the previous block, now that their reads are back. */
  const executeRemovals = (planned: PlannedBlock) => {
    const { intents, results } = pendingIntents;
    pendingIntents = { intents: [], results: [] };
    for (const intent of intents) {
      if (intent.protocol === "v2") {
        busyV2Removals.delete(`${intent.lp}:${intent.pool.key}`);
        const result = results[intent.balanceRead];
        if (result === undefined || result === "0x") continue;
        const balance = decodeFunctionResult({ abi: v2PairAbi, functionName: "balanceOf", data: result });
        const liquidity = (balance * BigInt(Math.floor(intent.share * 1000))) / 1000n;
        if (liquidity === 0n) continue;
        planned.txs.push(
          v2RemoveLiquidityTx({ periphery, from: intent.lp, tokenA: intent.pool.token0, tokenB: intent.pool.token1, liquidity }),
        );
        planned.liquidityChanges++;
        continue;
      }
      const positionResult = results[intent.positionRead];
      const ownerResult = results[intent.ownerRead];
      if (!positionResult || positionResult === "0x" || !ownerResult || ownerResult === "0x") continue;
      const owner = decodeFunctionResult({ abi: erc721Abi, functionName: "ownerOf", data: ownerResult });
      const position = decodeFunctionResult({ abi: positionManagerAbi, functionName: "positions", data: positionResult });
      const liquidity = position[7];
      // A position that is not the provider's (an id assumption gone wrong) is left alone.
      if (owner.toLowerCase() !== intent.lp || liquidity === 0n) continue;
      planned.txs.push(v3RemoveLiquidityTx({ periphery, from: intent.lp, tokenId: intent.tokenId, liquidity }));
      planned.liquidityChanges++;
    }
  };

  /** Plans and mines one block: pending removals, arbitrage, random trades, maybe a liquidity change. */
  const mineTradingBlock = async (
    timestamp: number,
    budget: { randomTrades: number; maxArbitrage: number } | { totalTrades: number },
  ): Promise<{ txs: number; expectedSwaps: number; liquidityChanges: number }> => {
    (globalThis as any).T0 = performance.now();
    const rng = random;
    (model as MarketModel).advanceTo(timestamp);
    const planned: PlannedBlock = { txs: [], expectedSwaps: 0, liquidityChanges: 0, intents: [], reads: [] };
    executeRemovals(planned);
    const maxArbitrage = "totalTrades" in budget ? Math.min(2, budget.totalTrades) : budget.maxArbitrage;
    const arbs = planArbitrage(rng, maxArbitrage);
    planned.txs.push(...arbs);
    planned.expectedSwaps += arbs.length;
    const randomTrades = "totalTrades" in budget ? budget.totalTrades - arbs.length : budget.randomTrades;
    for (let i = 0; i < randomTrades; i++) {
      const { tx, swaps } = planRandomTrade(rng);
      planned.txs.push(tx);
      planned.expectedSwaps += swaps;
    }
    if (rng.chance(liquidityChangeChance * tradingActivity(timestamp))) planLiquidityChange(rng, planned);

    // One round trip for the reads (the state after the previous block) and this block's
    // transactions, one for mining: the node's cost is per request far more than per call.
    (globalThis as any).T ??= { plan: 0, batch: 0, mine: 0, decode: 0 };
    const T = (globalThis as any).T;
    let t0 = performance.now();
    T.plan += t0 - (globalThis as any).T0;
    const sendCalls = sendTransactionCalls(nonces, planned.txs);
    const [readerResult, ...sent] = await rpc.batchSettled<Hex>([
      poolReaderCall(contracts, deployment, planned.reads),
      ...sendCalls,
    ]);
    await checkSent(rpc, nonces, planned.txs, sent);
    T.batch += performance.now() - t0; t0 = performance.now();
    if (readerResult instanceof RpcCallError || readerResult === undefined) {
      throw readerResult ?? new Error("pool reader gave no result");
    }
    const decoded = decodePoolReader(deployment, readerResult);
    states = decoded.pools;
    pendingIntents = { intents: planned.intents, results: decoded.extras };
    T.decode += performance.now() - t0; t0 = performance.now();
    await mineBlock(rpc, timestamp);
    T.mine += performance.now() - t0;
    lastTimestamp = timestamp;
    blockIndex++;
    return { txs: planned.txs.length, expectedSwaps: planned.expectedSwaps, liquidityChanges: planned.liquidityChanges };
  };

  return {
    async writeHistory({ days, until }) {
      const startedAt = performance.now();
      const untilSeconds = Math.floor(until.getTime() / 1000);
      const fromSeconds = untilSeconds - Math.round(days * 86_400);
      await rpc.request("evm_setAutomine", [false]);
      try {
        await prepare(fromSeconds);
        const firstBlock = Number(await rpc.request<Hex>("eth_blockNumber")) + 1;
        const schedule = random.fork(`schedule:${untilSeconds}:${days}`);
        let t = Math.max(fromSeconds, lastTimestamp);
        const stats = { blocks: 0, transactions: 0, expectedSwaps: 0, liquidityChanges: 0 };
        for (;;) {
          const gap = schedule.exponential(meanBlockGapSeconds) / tradingActivity(t);
          t = Math.max(t + Math.max(1, Math.round(gap)), lastTimestamp + 1);
          if (t > untilSeconds) break;
          const randomTrades = 1 + schedule.poisson(extraTradesPerBlock * tradingActivity(t));
          const block = await mineTradingBlock(t, { randomTrades, maxArbitrage: Number.POSITIVE_INFINITY });
          stats.blocks++;
          stats.transactions += block.txs;
          stats.expectedSwaps += block.expectedSwaps;
          stats.liquidityChanges += block.liquidityChanges;
          if (stats.blocks % 500 === 0) {
            logger.debug({ blocks: stats.blocks, at: new Date(t * 1000).toISOString() }, "writing devnet history");
          }
        }
        const lastBlock = firstBlock + stats.blocks - 1;
        const swaps =
          stats.blocks === 0
            ? 0
            : (
                await rpc.request<unknown[]>("eth_getLogs", [
                  { fromBlock: `0x${firstBlock.toString(16)}`, toBlock: `0x${lastBlock.toString(16)}`, topics: [swapTopics] },
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
        const log = swaps < stats.expectedSwaps ? logger.warn.bind(logger) : logger.info.bind(logger);
        log(
          {
            days,
            blocks: result.blocks,
            swaps,
            expected_swaps: stats.expectedSwaps,
            liquidity_changes: stats.liquidityChanges,
            elapsed_ms: result.elapsedMs,
          },
          swaps < stats.expectedSwaps ? "devnet history written; some trades reverted" : "devnet history written",
        );
        return result;
      } finally {
        await rpc.request("evm_setAutomine", [true]);
      }
    },

    startLive({ blockIntervalMs }) {
      if (live !== undefined && !live.stopped) throw new Error("the simulator is already trading live");
      const state: { stopped: boolean; timer?: NodeJS.Timeout; inFlight?: Promise<void> } = { stopped: false };
      live = state;
      const liveRandom = random.fork("live");
      const tick = async () => {
        try {
          if (!ready || nonces.size === 0) await prepare(Math.floor(Date.now() / 1000));
          await rpc.request("evm_setAutomine", [false]);
          const timestamp = Math.max(Math.floor(Date.now() / 1000), lastTimestamp);
          await mineTradingBlock(timestamp, { totalTrades: liveRandom.int(6) });
        } catch (error) {
          if (state.stopped) return;
          logger.warn({ err: error }, "devnet live block failed; resynchronising");
          // Someone else may have used a trader's nonce, or the node restarted its mempool.
          await prepare(Math.floor(Date.now() / 1000)).catch(() => {});
        }
      };
      const schedule = () => {
        if (state.stopped) return;
        const delay = blockIntervalMs * (0.5 + liveRandom.next());
        state.timer = setTimeout(() => {
          state.inFlight = tick().finally(schedule);
        }, delay);
      };
      schedule();
      logger.info({ block_interval_ms: blockIntervalMs }, "devnet live trading started");
    },

    async stop() {
      if (live === undefined) return;
      const state = live;
      state.stopped = true;
      clearTimeout(state.timer);
      await state.inFlight;
      live = undefined;
      // Leave a node that behaves like a plain Hardhat node (when it is still running).
      await rpc.request("evm_setAutomine", [true]).catch(() => {});
    },
  };
}

function bigMin(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
