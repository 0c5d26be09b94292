/**
 * An independent decoding of a chain's DEX trades straight from its node, for tests: the raw
 * logs read with `eth_getLogs` over plain JSON-RPC, decoded with ABI items parsed from the event
 * signature texts, and every figure the API gives for a trade or a candle computed from the raw
 * integers in exact rationals (src/_test/exact.ts), each rounded once. It shares no code with the
 * service's decoding, pricing or storage: it applies the rules docs/API.md and docs/PRICING.md
 * state, written out again.
 *
 * - Pools are found by their creation events: Uniswap V2 `PairCreated`, V3 `PoolCreated`, the V4
 *   PoolManager's `Initialize` (a pool id inside the manager), Algebra's `Pool`/`CustomPool`.
 * - A swap's net amounts are the pool's view (in − out): V2 `amountIn − amountOut`; V3 and
 *   Algebra the signed amounts as emitted; V4 the swapper's deltas, so the pool's net is their
 *   negation.
 * - A trade has a price when both net amounts are non-zero, flow opposite ways and both decimals
 *   are known: |net other|·10^dAsset / (|net asset|·10^dOther).
 * - `side` is `sell` when the asset went into the pool (or, with no net asset amount, when the
 *   other token left it), else `buy`.
 * - A pool that holds its own tokens (V2, V3, Algebra) holds after a swap what the tokens'
 *   `Transfer` logs moved to and from it up to the swap's log: its reserves. (A V4 pool's are
 *   virtual, its ModifyLiquidity principal at the tick math's prices: not decoded here.)
 * - A V4 pool whose hook address has one of the four return-delta permission bits (bits 0-3)
 *   may rewrite its amounts: its trades carry `hook_may_rewrite_amounts: true`.
 * - Candles: buckets of the trades with a price aligned to the UTC epoch by block time; open the
 *   first trade by (block, log index), close the last, high and low the extremes, volume the
 *   asset's exact amounts summed and rounded once; from the first bucket with a trade in range,
 *   empty buckets up to `to` carry the previous close at volume 0.
 */

import { type AbiEvent, decodeEventLog, type Hex, parseAbiItem, toEventSelector } from "viem";
import type { CandleRecord } from "../api/candle-records.js";
import { type Exact, exactCompare, exactSum, toDouble, tradePrice, unitsExact } from "./exact.js";

/** The event texts the decoder reads, as the protocols publish them. */
export const EVENT_TEXTS = {
  v2PairCreated:
    "event PairCreated(address indexed token0, address indexed token1, address pair, uint256 allPairsLength)",
  v2Swap:
    "event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)",
  v3PoolCreated:
    "event PoolCreated(address indexed token0, address indexed token1, uint24 indexed fee, int24 tickSpacing, address pool)",
  v3Swap:
    "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)",
  v4Initialize:
    "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)",
  v4Swap:
    "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)",
  algebraPool: "event Pool(address indexed token0, address indexed token1, address pool)",
  algebraCustomPool:
    "event CustomPool(address indexed deployer, address indexed token0, address indexed token1, address pool)",
  erc20Transfer: "event Transfer(address indexed from, address indexed to, uint256 value)",
  algebraIntegralSwap:
    "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick, uint24 overrideFee, uint24 pluginFee)",
} as const;

type EventName = keyof typeof EVENT_TEXTS;
const EVENTS = Object.fromEntries(
  Object.entries(EVENT_TEXTS).map(([name, text]) => [name, parseAbiItem(text) as AbiEvent]),
) as Record<EventName, AbiEvent>;
const TOPICS = Object.fromEntries(
  Object.entries(EVENTS).map(([name, event]) => [name, toEventSelector(event)]),
) as Record<EventName, Hex>;

export const NATIVE_ADDRESS = "0x0000000000000000000000000000000000000000";

export type Family = "uniswap-v2" | "uniswap-v3" | "uniswap-v4" | "algebra";

/** A pool as its creation event gives it, with its tokens' decimals read from the node. */
export type ChainPool = {
  family: Family;
  /** The pair address, or a V4 pool id (0x + 64 hex), lowercase. */
  id: string;
  /** The contract that emitted the creation event: the factory, or the V4 PoolManager. */
  factory: string;
  /** The contract whose logs carry the pool's swaps: the pool itself, or the PoolManager. */
  emitter: string;
  token0: string;
  token1: string;
  /** Null when the token's `decimals()` does not answer a number (the native coin: 18). */
  decimals0: number | null;
  decimals1: number | null;
  /** A V4 pool's hook address (null: another family). */
  hooks: string | null;
  /** A hook with a return-delta permission: the trades are flagged. */
  rewritesAmounts: boolean;
};

/** One swap log decoded: the pool's net amounts (in − out, raw) and where it sits in the chain. */
export type ChainSwap = {
  pool: string;
  block: number;
  logIndex: number;
  /** The block's time, ms since the epoch. */
  time: number;
  hash: string;
  /** The transaction's sender and the contract it called (lowercase; null without one). */
  from: string;
  to: string | null;
  net0: bigint;
  net1: bigint;
  /** The pool's price after the swap (concentrated liquidity: V3, V4, Algebra); null for V2. */
  sqrtPriceX96: bigint | null;
  /**
   * The pool's balances of its two tokens at the swap's log, summed from the tokens' `Transfer`
   * logs to and from the pool (raw); null for a pool whose tokens a manager holds (V4).
   */
  balances: [bigint, bigint] | null;
};

type RawLog = {
  address: Hex;
  topics: [Hex, ...Hex[]];
  data: Hex;
  blockNumber: Hex;
  logIndex: Hex;
  transactionHash: Hex;
};

/** A minimal JSON-RPC client over fetch (single calls and batches). */
export function jsonRpc(url: string) {
  let nextId = 1;
  const post = async (body: unknown): Promise<unknown> => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`JSON-RPC HTTP ${response.status}`);
    return response.json();
  };
  type Answer = { id: number; result?: unknown; error?: { message: string } };
  return {
    async call<T>(method: string, params: unknown[]): Promise<T> {
      const answer = (await post({ jsonrpc: "2.0", id: nextId++, method, params })) as Answer;
      if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
      return answer.result as T;
    },
    /** Each call's result, or an Error for a call the node answered with an error. */
    async batch<T>(calls: readonly { method: string; params: unknown[] }[]): Promise<(T | Error)[]> {
      if (calls.length === 0) return [];
      const first = nextId;
      nextId += calls.length;
      const answers = (await post(
        calls.map((c, i) => ({ jsonrpc: "2.0", id: first + i, method: c.method, params: c.params })),
      )) as Answer[];
      const byId = new Map(answers.map((a) => [a.id, a]));
      return calls.map((c, i) => {
        const answer = byId.get(first + i);
        if (!answer) throw new Error(`${c.method}: no answer in the batch`);
        return answer.error ? new Error(`${c.method}: ${answer.error.message}`) : (answer.result as T);
      });
    },
  };
}
type Rpc = ReturnType<typeof jsonRpc>;

const lower = (value: unknown) => String(value).toLowerCase();
const decode = (name: EventName, log: RawLog) =>
  decodeEventLog({ abi: [EVENTS[name]], topics: log.topics, data: log.data, strict: true }).args as Record<
    string,
    unknown
  >;

/** eth_getLogs in block windows, so that no node limit on one answer's size is met. */
async function logsOf(
  rpc: Rpc,
  filter: { address?: string[]; topics: (Hex | Hex[] | null)[] },
  toBlock: number,
): Promise<RawLog[]> {
  const out: RawLog[] = [];
  const window = 5_000;
  for (let from = 0; from <= toBlock; from += window) {
    const to = Math.min(toBlock, from + window - 1);
    out.push(
      ...(await rpc.call<RawLog[]>("eth_getLogs", [
        {
          fromBlock: `0x${from.toString(16)}`,
          toBlock: `0x${to.toString(16)}`,
          ...(filter.address ? { address: filter.address } : {}),
          topics: filter.topics,
        },
      ])),
    );
  }
  return out;
}

/** A token's decimals as its contract answers `decimals()` (a uint8 word), else null. */
async function readDecimals(rpc: Rpc, tokens: readonly string[]): Promise<Map<string, number | null>> {
  const contracts = tokens.filter((t) => t !== NATIVE_ADDRESS);
  const answers = await rpc.batch<Hex>(
    contracts.map((to) => ({ method: "eth_call", params: [{ to, data: "0x313ce567" }, "latest"] })),
  );
  const out = new Map<string, number | null>([[NATIVE_ADDRESS, 18]]);
  contracts.forEach((token, i) => {
    const answer = answers[i];
    const word = typeof answer === "string" && /^0x[0-9a-fA-F]{64}$/.test(answer) ? BigInt(answer) : null;
    out.set(token, word !== null && word <= 255n ? Number(word) : null);
  });
  return out;
}

/**
 * Every pool created on the chain up to `toBlock`, by its creation event, wherever it was
 * emitted (no factory address is assumed).
 */
export async function discoverPools(rpc: Rpc, toBlock: number): Promise<ChainPool[]> {
  const creations: EventName[] = [
    "v2PairCreated",
    "v3PoolCreated",
    "v4Initialize",
    "algebraPool",
    "algebraCustomPool",
  ];
  const logs = await logsOf(rpc, { topics: [creations.map((n) => TOPICS[n])] }, toBlock);
  const found: Omit<ChainPool, "decimals0" | "decimals1">[] = [];
  for (const log of logs) {
    const name = creations.find((n) => TOPICS[n] === log.topics[0]) as EventName;
    const args = decode(name, log);
    const factory = lower(log.address);
    const common = { factory, token0: lower(args.token0), token1: lower(args.token1), hooks: null };
    if (name === "v2PairCreated") {
      const id = lower(args.pair);
      found.push({ family: "uniswap-v2", id, emitter: id, ...common, rewritesAmounts: false });
    } else if (name === "v3PoolCreated") {
      const id = lower(args.pool);
      found.push({ family: "uniswap-v3", id, emitter: id, ...common, rewritesAmounts: false });
    } else if (name === "v4Initialize") {
      const hooks = lower(args.hooks);
      found.push({
        family: "uniswap-v4",
        id: lower(args.id),
        emitter: factory,
        factory,
        token0: lower(args.currency0),
        token1: lower(args.currency1),
        hooks,
        // beforeSwapReturnDelta, afterSwapReturnDelta, afterAddLiquidityReturnDelta,
        // afterRemoveLiquidityReturnDelta: bits 3, 2, 1, 0 of the hook's address.
        rewritesAmounts: (BigInt(hooks) & 0x0fn) !== 0n,
      });
    } else {
      const id = lower(args.pool);
      found.push({ family: "algebra", id, emitter: id, ...common, rewritesAmounts: false });
    }
  }
  const decimals = await readDecimals(rpc, [...new Set(found.flatMap((p) => [p.token0, p.token1]))]);
  return found.map((p) => ({
    ...p,
    decimals0: decimals.get(p.token0) ?? null,
    decimals1: decimals.get(p.token1) ?? null,
  }));
}

/** Every swap of `pools` up to `toBlock`, in chain order, with its block's time and transaction. */
export async function decodeSwaps(
  rpc: Rpc,
  pools: readonly ChainPool[],
  toBlock: number,
): Promise<ChainSwap[]> {
  const byEmitter = new Map<string, ChainPool>();
  const v4 = new Map<string, ChainPool>();
  for (const pool of pools) {
    if (pool.family === "uniswap-v4") v4.set(pool.id, pool);
    else byEmitter.set(pool.id, pool);
  }
  const managers = [...new Set(pools.filter((p) => p.family === "uniswap-v4").map((p) => p.emitter))];
  const logs = [
    ...(byEmitter.size === 0
      ? []
      : await logsOf(
          rpc,
          {
            address: [...byEmitter.keys()],
            topics: [[TOPICS.v2Swap, TOPICS.v3Swap, TOPICS.algebraIntegralSwap]],
          },
          toBlock,
        )),
    ...(managers.length === 0
      ? []
      : await logsOf(rpc, { address: managers, topics: [TOPICS.v4Swap] }, toBlock)),
  ];
  const swaps: Omit<ChainSwap, "time" | "from" | "to" | "balances">[] = [];
  for (const log of logs) {
    const base = {
      block: Number(log.blockNumber),
      logIndex: Number(log.logIndex),
      hash: lower(log.transactionHash),
    };
    if (log.topics[0] === TOPICS.v4Swap) {
      const args = decode("v4Swap", log);
      const pool = v4.get(lower(args.id));
      if (!pool || pool.emitter !== lower(log.address)) continue;
      // The swapper's deltas: the pool's net is their negation.
      swaps.push({
        pool: pool.id,
        ...base,
        net0: -(args.amount0 as bigint),
        net1: -(args.amount1 as bigint),
        sqrtPriceX96: args.sqrtPriceX96 as bigint,
      });
      continue;
    }
    const pool = byEmitter.get(lower(log.address));
    if (!pool) continue;
    if (log.topics[0] === TOPICS.v2Swap && pool.family === "uniswap-v2") {
      const a = decode("v2Swap", log);
      const net0 = (a.amount0In as bigint) - (a.amount0Out as bigint);
      const net1 = (a.amount1In as bigint) - (a.amount1Out as bigint);
      swaps.push({ pool: pool.id, ...base, net0, net1, sqrtPriceX96: null });
    } else if (
      pool.family !== "uniswap-v2" &&
      (log.topics[0] === TOPICS.v3Swap ||
        (log.topics[0] === TOPICS.algebraIntegralSwap && pool.family === "algebra"))
    ) {
      // Uniswap V3, Algebra V1 and Integral up to 1.1 share V3's text; Integral 1.2 adds its fees.
      // Either way the amounts are the pool's signed view.
      const integral = log.topics[0] === TOPICS.algebraIntegralSwap;
      const a = decode(integral ? "algebraIntegralSwap" : "v3Swap", log);
      const sqrtPriceX96 = (integral ? a.price : a.sqrtPriceX96) as bigint;
      swaps.push({
        pool: pool.id,
        ...base,
        net0: a.amount0 as bigint,
        net1: a.amount1 as bigint,
        sqrtPriceX96,
      });
    }
  }
  swaps.sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
  const balances = await balancesAtSwaps(rpc, [...byEmitter.values()], swaps, toBlock);
  const times = await lookUp(
    rpc,
    [...new Set(swaps.map((s) => s.block))],
    (b) => ({ method: "eth_getBlockByNumber", params: [`0x${b.toString(16)}`, false] }),
    (block: { timestamp: Hex }) => Number(block.timestamp) * 1000,
  );
  const txs = await lookUp(
    rpc,
    [...new Set(swaps.map((s) => s.hash))],
    (h) => ({ method: "eth_getTransactionByHash", params: [h] }),
    (tx: { from: Hex; to: Hex | null }) => ({
      from: lower(tx.from),
      to: tx.to === null ? null : lower(tx.to),
    }),
  );
  return swaps.map((s, i) => ({
    ...s,
    balances: balances[i] ?? null,
    time: times.get(s.block) as number,
    ...(txs.get(s.hash) as { from: string; to: string | null }),
  }));
}

/**
 * The balances of each swap's pool at the swap's log (null for pools not in `pools`), from every
 * `Transfer` of the pools' tokens to or from the pools up to it: what the pool held after the swap.
 */
async function balancesAtSwaps(
  rpc: Rpc,
  pools: readonly ChainPool[],
  swaps: readonly { pool: string; block: number; logIndex: number }[],
  toBlock: number,
): Promise<([bigint, bigint] | null)[]> {
  if (pools.length === 0) return swaps.map(() => null);
  const padded = pools.map((p) => `0x${p.id.slice(2).padStart(64, "0")}` as Hex);
  const tokens = [...new Set(pools.flatMap((p) => [p.token0, p.token1]))];
  const seen = new Set<string>();
  const transfers = [
    ...(await logsOf(rpc, { address: tokens, topics: [TOPICS.erc20Transfer, null, padded] }, toBlock)),
    ...(await logsOf(rpc, { address: tokens, topics: [TOPICS.erc20Transfer, padded] }, toBlock)),
  ]
    .filter((log) => {
      const key = `${log.transactionHash}:${Number(log.logIndex)}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .map((log) => {
      const args = decode("erc20Transfer", log);
      return {
        token: lower(log.address),
        block: Number(log.blockNumber),
        logIndex: Number(log.logIndex),
        from: lower(args.from),
        to: lower(args.to),
        value: args.value as bigint,
      };
    })
    .sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
  const byId = new Map(pools.map((p) => [p.id, p]));
  const held = new Map<string, bigint>();
  const add = (owner: string, token: string, amount: bigint) => {
    const pool = byId.get(owner);
    if (pool && (token === pool.token0 || token === pool.token1))
      held.set(`${owner}:${token}`, (held.get(`${owner}:${token}`) ?? 0n) + amount);
  };
  let next = 0;
  return swaps.map((swap) => {
    for (; next < transfers.length; next++) {
      const t = transfers[next] as (typeof transfers)[number];
      if (t.block > swap.block || (t.block === swap.block && t.logIndex > swap.logIndex)) break;
      add(t.to, t.token, t.value);
      add(t.from, t.token, -t.value);
    }
    const pool = byId.get(swap.pool);
    if (!pool) return null;
    return [held.get(`${pool.id}:${pool.token0}`) ?? 0n, held.get(`${pool.id}:${pool.token1}`) ?? 0n];
  });
}

/** One call per key in one batch, each answer read by `read`; a key the node could not answer throws. */
async function lookUp<K, A, V>(
  rpc: Rpc,
  keys: readonly K[],
  call: (key: K) => { method: string; params: unknown[] },
  read: (answer: A) => V,
): Promise<Map<K, V>> {
  const answers = await rpc.batch<A>(keys.map(call));
  return new Map(
    keys.map((key, i) => {
      const answer = answers[i];
      if (answer === undefined || answer === null || answer instanceof Error)
        throw new Error(`${call(key).method} ${String(key)}: ${String(answer)}`);
      return [key, read(answer)];
    }),
  );
}

/** ISO 8601 UTC, without milliseconds when they are zero (as the API writes times). */
export const isoOf = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

const abs = (v: bigint) => (v < 0n ? -v : v);

/** The exact price of the asset in the other token, or null when the swap is no trade. */
export function assetPrice(pool: ChainPool, swap: ChainSwap, assetIsToken0: boolean): Exact | null {
  if (pool.decimals0 === null || pool.decimals1 === null) return null;
  if (swap.net0 === 0n || swap.net1 === 0n || swap.net0 > 0n === swap.net1 > 0n) return null;
  const t0 = { amount: swap.net0, decimals: pool.decimals0 };
  const t1 = { amount: swap.net1, decimals: pool.decimals1 };
  return assetIsToken0 ? tradePrice(t0, t1) : tradePrice(t1, t0);
}

/** The fields of a `/api/v1/trades` record that the logs alone determine, seen from one token. */
export function expectedTrade(chainId: number, pool: ChainPool, swap: ChainSwap, assetIsToken0: boolean) {
  const [assetNet, otherNet] = assetIsToken0 ? [swap.net0, swap.net1] : [swap.net1, swap.net0];
  const price = assetPrice(pool, swap, assetIsToken0);
  const units = (raw: bigint, decimals: number | null) =>
    decimals === null ? null : toDouble(unitsExact(abs(raw), decimals));
  return {
    pair_id: `${pool.id}:${chainId}`,
    chain: chainId,
    pair_address: pool.id,
    factory_address: pool.factory,
    token0_address: pool.token0,
    token1_address: pool.token1,
    block_number: swap.block,
    log_index: swap.logIndex,
    date: isoOf(swap.time),
    hash: swap.hash,
    maker: swap.from,
    exchange: swap.to,
    side: assetNet > 0n || (assetNet === 0n && otherNet < 0n) ? "sell" : "buy",
    price: price === null ? null : toDouble(price),
    token0_amount: units(swap.net0, pool.decimals0),
    token1_amount: units(swap.net1, pool.decimals1),
    ...(swap.balances === null
      ? {}
      : {
          token0_reserves: units(swap.balances[0], pool.decimals0),
          token1_reserves: units(swap.balances[1], pool.decimals1),
        }),
    hook_may_rewrite_amounts: pool.rewritesAmounts ? true : undefined,
  };
}

/** A candle as /api/v1/candles answers it. */
export type ExpectedCandle = CandleRecord;

/**
 * The candles of `pool`'s swaps seen from one token, for intervals starting in
 * [`from` aligned down, `to`): those with trades, and the empty ones from the first traded
 * interval on carrying the previous close at volume 0. [] when no trade lies in the range.
 */
export function expectedCandles(
  pool: ChainPool,
  swaps: readonly ChainSwap[],
  assetIsToken0: boolean,
  interval: { seconds: number; from: number; to: number },
): ExpectedCandle[] {
  const size = interval.seconds * 1000;
  const start = Math.floor(interval.from / size) * size;
  const buckets = new Map<number, { prices: Exact[]; volumes: Exact[] }>();
  const assetDecimals = assetIsToken0 ? pool.decimals0 : pool.decimals1;
  for (const swap of swaps) {
    if (swap.pool !== pool.id || swap.time < start || swap.time >= interval.to) continue;
    const price = assetPrice(pool, swap, assetIsToken0);
    if (price === null) continue;
    const bucket = Math.floor(swap.time / size) * size;
    const entry = buckets.get(bucket) ?? { prices: [], volumes: [] };
    entry.prices.push(price);
    entry.volumes.push(unitsExact(abs(assetIsToken0 ? swap.net0 : swap.net1), assetDecimals as number));
    buckets.set(bucket, entry);
  }
  if (buckets.size === 0) return [];
  const first = Math.min(...buckets.keys());
  const out: ExpectedCandle[] = [];
  let close: number | null = null;
  for (let t = first; t < interval.to; t += size) {
    const entry = buckets.get(t);
    if (entry === undefined) {
      const c = close as number;
      out.push({ open: c, high: c, low: c, close: c, volume: 0, date: isoOf(t), time: t });
      continue;
    }
    const extreme = (sign: number) =>
      entry.prices.reduce((best, p) => (exactCompare(p, best) * sign > 0 ? p : best));
    close = toDouble(entry.prices[entry.prices.length - 1] as Exact);
    out.push({
      open: toDouble(entry.prices[0] as Exact),
      high: toDouble(extreme(1)),
      low: toDouble(extreme(-1)),
      close,
      volume: toDouble(exactSum(entry.volumes)),
      date: isoOf(t),
      time: t,
    });
  }
  return out;
}
