import { topics } from "../decode/abi.js";
import type { Hex } from "../decode/types.js";
import { hash32, hex8, Kind, stream } from "./hash.js";
import { amount0Delta, amount1Delta, sqrtRatioAtTick, v2AmountOut, v3SwapExactIn } from "./math.js";
import type { PoolDyn, PoolInfo, Universe } from "./universe.js";

/**
 * The synthetic chain's blocks. Laziness and consistency:
 *
 * - What happens in block N (which transactions, which pools, which traders, the random draws
 *   that size them) is a pure function of (seed, profile, N, fork): `planBlock`.
 * - The amounts depend on the pools' state (V2 reserves, V3 price and liquidity), which evolves
 *   with every event. `execute` applies a plan to the state of the pools it touches.
 * - State is kept as checkpoints every `segmentBlocks` blocks, sparse per pool: a pool's entry
 *   records its state at the end of each segment in which it changed. A pool never touched since
 *   its creation has no entry at all: its state is the closed-form `initial` of the universe.
 *   Blocks are generated sequentially from the start of their segment (so at most one segment is
 *   generated again to answer any block), and segments are recorded in order as generation first
 *   passes them.
 * - A reorg (a new fork from block F) changes the draws of blocks ≥ F and drops the checkpoints
 *   and cached blocks at or above F.
 */

export type ShapeLog = { address: Hex; topics: Hex[]; data: Hex };
export type TxKind = "create" | "swap" | "mint" | "burn";
export type ShapeTx = {
  index: number;
  kind: TxKind;
  pool: number;
  trader: number;
  /** Gas used by this transaction. */
  gas: number;
  logs: ShapeLog[];
};
export type ShapeBlock = { number: number; fork: number; txs: ShapeTx[]; logCount: number };

type PlannedTx = { kind: TxKind; pool: number; trader: number; a: number; b: number };

export type ChainOptions = {
  universe: Universe;
  /** Trading blocks after the creation era at start. */
  historyBlocks: number;
  /** The head advances in real time at the profile's block time. */
  live: boolean;
  /** Timestamp of block 0 in ms; default: so that the head at start is "now". */
  genesisTimeMs?: number | undefined;
  /** Blocks per checkpoint segment. */
  segmentBlocks?: number;
  /** Executed blocks kept for repeated questions (headers, transactions, receipts of recent ranges). */
  cacheBlocks?: number;
  now?: () => number;
};

const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef" as Hex;
const ZERO_WORD = "0".repeat(64);
const TWO_256 = 1n << 256n;

/** A 32-byte ABI word: uint, or int in two's complement. */
export function word(value: bigint | number): string {
  let v = BigInt(value);
  if (v < 0n) v += TWO_256;
  return v.toString(16).padStart(64, "0");
}
const addrWord = (address: string): string => `000000000000000000000000${address.slice(2)}`;
const topicOf = (w: string): Hex => `0x${w}` as Hex;
const dataOf = (...words: string[]): Hex => `0x${words.join("")}` as Hex;

export type ShapeChain = ReturnType<typeof createShapeChain>;

export function createShapeChain(options: ChainOptions) {
  const u = options.universe;
  const { profile, seed } = u;
  const K = options.segmentBlocks ?? 64;
  const cacheLimit = options.cacheBlocks ?? 128;
  const now = options.now ?? Date.now;
  const startMs = now();
  const baseHead = u.creationEraBlocks + options.historyBlocks;
  const genesisTimeMs = options.genesisTimeMs ?? startMs - baseHead * profile.blockTimeMs;
  let advanced = 0;

  /** Forks made by reorgs: blocks ≥ from use fork id (the last such entry wins). */
  const forks: { from: number; id: number }[] = [];
  const unlinked: { from: number; count: number }[] = [];

  const head = (): number =>
    baseHead + advanced + (options.live ? Math.floor((now() - startMs) / profile.blockTimeMs) : 0);
  const forkOf = (n: number): number => {
    let id = 0;
    for (const f of forks) if (f.from <= n) id = f.id;
    return id;
  };
  const timestamp = (n: number): number => Math.floor((genesisTimeMs + n * profile.blockTimeMs) / 1000);

  // Hashes are asked again and again (every log carries two): memoised, dropped by a reorg.
  const hashMemo = new Map<string, Hex>();
  const memo = (key: string, make: () => Hex): Hex => {
    let h = hashMemo.get(key);
    if (h === undefined) {
      h = make();
      if (hashMemo.size >= 500_000) hashMemo.clear();
      hashMemo.set(key, h);
    }
    return h;
  };
  const blockHash = (n: number): Hex => memo(`b${n}`, () => makeBlockHash(n));
  const txHash = (n: number, index: number): Hex => memo(`t${n}:${index}`, () => makeTxHash(n, index));

  /** Block hash: six hash words, then n and the fork mixed with the first words (decodable). */
  const makeBlockHash = (n: number): Hex => {
    const f = forkOf(n);
    const w = [0, 1, 2, 3, 4, 5].map((k) => hash32(seed, Kind.block, n, f, k));
    const w6 = (n ^ hash32(seed, Kind.tag, Kind.block, w[0] as number)) >>> 0;
    const w7 = hash32(seed, Kind.block, n, f, 7);
    return `0x${w.map(hex8).join("")}${hex8(w6)}${hex8(w7)}` as Hex;
  };
  const blockNumberOfHash = (hash: string): number | null => {
    if (hash.length !== 66) return null;
    const h = hash.toLowerCase();
    const n =
      (Number.parseInt(h.slice(50, 58), 16) ^
        hash32(seed, Kind.tag, Kind.block, Number.parseInt(h.slice(2, 10), 16))) >>>
      0;
    return n <= head() && blockHash(n) === h ? n : null;
  };
  const parentHash = (n: number): Hex => {
    if (n === 0) return `0x${ZERO_WORD}` as Hex;
    if (unlinked.some((r) => n >= r.from && n < r.from + r.count)) {
      // A header that does not link: its parent hash names no block.
      return `0x${[0, 1, 2, 3, 4, 5, 6, 7].map((k) => hex8(hash32(seed, Kind.bogus, n, k))).join("")}` as Hex;
    }
    return blockHash(n - 1);
  };

  const makeTxHash = (n: number, index: number): Hex => {
    const f = forkOf(n);
    const w = [0, 1, 2, 3, 4, 5].map((k) => hash32(seed, Kind.tx, n, f, index, k));
    const w6 = (n ^ hash32(seed, Kind.tag, Kind.tx, w[0] as number)) >>> 0;
    const w7 = (index ^ hash32(seed, Kind.tag, Kind.tx, w[1] as number)) >>> 0;
    return `0x${w.map(hex8).join("")}${hex8(w6)}${hex8(w7)}` as Hex;
  };
  const txPosition = (hash: string): { block: number; index: number } | null => {
    if (hash.length !== 66) return null;
    const h = hash.toLowerCase();
    const block =
      (Number.parseInt(h.slice(50, 58), 16) ^
        hash32(seed, Kind.tag, Kind.tx, Number.parseInt(h.slice(2, 10), 16))) >>>
      0;
    const index =
      (Number.parseInt(h.slice(58, 66), 16) ^
        hash32(seed, Kind.tag, Kind.tx, Number.parseInt(h.slice(10, 18), 16))) >>>
      0;
    if (block > head() || index >= planBlock(block).length || txHash(block, index) !== h) return null;
    return { block, index };
  };

  /** Picks a pool existing before block n: a power law over the initial pools, 10 % on the newest. */
  const pickPool = (available: number, r: () => number): number => {
    const newer = available - u.initialPools;
    if (newer > 0 && r() < 0.1) return available - 1 - Math.floor(Math.min(1000, newer) * r());
    return Math.floor(Math.min(available, u.initialPools) * r() ** 4);
  };

  const planCache = new Map<number, PlannedTx[]>();
  /** What block n holds, from (seed, profile, n, fork) alone. */
  function planBlock(n: number): PlannedTx[] {
    const cached = planCache.get(n);
    if (cached) return cached;
    const txs: PlannedTx[] = [];
    const fork = forkOf(n);
    const r = stream(seed, Kind.plan, n, fork);
    for (let i = u.poolsAt(n - 1); i < u.poolsAt(n); i++) {
      txs.push({ kind: "create", pool: i, trader: hash32(seed, Kind.trader, i) % 100_000, a: r(), b: r() });
    }
    // A profile with quiet blocks draws whether this one trades; the others draw nothing more,
    // so that their chains stay what they were.
    const share = profile.activeBlockShare;
    if (n > u.creationEraBlocks && (share === undefined || r() < share)) {
      const available = u.poolsAt(n - 1);
      const swaps = Math.round(profile.swapsPerBlock * (0.6 + 0.8 * r()));
      const liquidity = Math.floor(swaps * profile.liquidityPerSwap + r());
      const total = swaps + liquidity;
      for (let k = 0; k < total; k++) {
        const kind: TxKind = r() < liquidity / total ? (r() < 0.5 ? "mint" : "burn") : "swap";
        txs.push({ kind, pool: pickPool(available, r), trader: Math.floor(r() * 100_000), a: r(), b: r() });
      }
    }
    if (planCache.size > 4096) planCache.clear();
    planCache.set(n, txs);
    return txs;
  }

  // ---- state: sparse per-pool checkpoints at segment ends ----
  // The creation era (blocks 1…G) only creates pools, whose state after creation is closed-form:
  // its segments need no checkpoint, so generation never has to pass through it.
  const creationSegments = Math.floor((u.creationEraBlocks + 1) / K);
  let segmentsDone = creationSegments;
  const checkpoints = new Map<number, { seg: number[]; state: PoolDyn[] }>();
  let checkpointEntries = 0;

  const stateAtSegmentStart = (pool: number, c: number): PoolDyn | undefined => {
    const entry = checkpoints.get(pool);
    if (entry) {
      for (let k = entry.seg.length - 1; k >= 0; k--) if ((entry.seg[k] as number) < c) return entry.state[k];
    }
    const info = u.poolInfo(pool);
    return info.createdBlock < c * K ? info.initial : undefined;
  };

  type View = {
    next: number;
    state: Map<number, PoolDyn>;
    touched: Set<number>;
  };
  const viewAtSegment = (c: number): View => ({ next: c * K, state: new Map(), touched: new Set() });
  const read = (view: View, pool: number): PoolDyn => {
    let s = view.state.get(pool);
    if (!s) {
      const base = stateAtSegmentStart(pool, Math.floor(view.next / K));
      if (!base) throw new Error(`pool ${pool} read before its creation`);
      s = { ...base };
      view.state.set(pool, s);
    }
    return s;
  };

  /** Runs block view.next on the view's state and returns it. Records a segment end in order. */
  const step = (view: View): ShapeBlock => {
    const n = view.next;
    const plan = planBlock(n);
    const txs: ShapeTx[] = [];
    let logCount = 0;
    for (let index = 0; index < plan.length; index++) {
      const p = plan[index] as PlannedTx;
      const tx = execute(n, index, p, view);
      logCount += tx.logs.length;
      txs.push(tx);
    }
    view.next = n + 1;
    if (n % K === K - 1) {
      const c = Math.floor(n / K);
      if (c === segmentsDone) {
        for (const pool of view.touched) {
          const s = view.state.get(pool) as PoolDyn;
          const initial = u.poolInfo(pool).initial;
          if (
            s.r0 === initial.r0 &&
            s.r1 === initial.r1 &&
            s.sqrtPriceX96 === initial.sqrtPriceX96 &&
            s.liquidity === initial.liquidity
          )
            continue;
          let entry = checkpoints.get(pool);
          if (!entry) {
            entry = { seg: [], state: [] };
            checkpoints.set(pool, entry);
          }
          entry.seg.push(c);
          entry.state.push({ ...s });
          checkpointEntries++;
        }
        segmentsDone++;
      }
      view.touched.clear();
    }
    return { number: n, fork: forkOf(n), txs, logCount };
  };

  // ---- executed blocks: a small LRU and the view that continues after the last one ----
  const cache = new Map<number, ShapeBlock>();
  let tail: View | undefined;
  const remember = (block: ShapeBlock) => {
    cache.delete(block.number);
    cache.set(block.number, block);
    if (cache.size > cacheLimit) cache.delete(cache.keys().next().value as number);
  };

  /**
   * Calls onBlock for each executed block of [from, to], in order; stops early when it returns
   * false. Generates the segments below `from` first if they were never generated.
   */
  function blocks(from: number, to: number, onBlock: (block: ShapeBlock) => boolean | undefined): void {
    let n = from;
    while (n <= to) {
      const hit = cache.get(n);
      if (hit) {
        if (onBlock(hit) === false) return;
        n++;
        continue;
      }
      // Continue the tail when it is at or below n and no further back than the checkpoint would be.
      const c = Math.min(Math.floor(n / K), segmentsDone);
      const view = tail && tail.next <= n && tail.next >= c * K ? tail : viewAtSegment(c);
      tail = view;
      while (view.next < n) remember(step(view));
      const block = step(view);
      remember(block);
      if (onBlock(block) === false) return;
      n++;
    }
  }
  const block = (n: number): ShapeBlock => {
    let out: ShapeBlock | undefined;
    blocks(n, n, (b) => {
      out = b;
      return false;
    });
    return out as ShapeBlock;
  };

  /** A view whose state is the one after block n: the tail, the last one used for a call, or a new one. */
  let callView: View | undefined;
  const viewAfter = (n: number): View => {
    if (tail && tail.next === n + 1) return tail;
    if (callView && callView.next === n + 1) return callView;
    const c = Math.min(Math.floor(n / K), segmentsDone);
    const view = tail && tail.next <= n + 1 && tail.next >= c * K ? tail : viewAtSegment(c);
    while (view.next <= n) remember(step(view));
    if (view !== tail) callView = view;
    return view;
  };

  /** A pool's state at the end of block n (null: not created yet). */
  function poolStateAt(pool: number, n: number): PoolDyn | null {
    if (u.poolInfo(pool).createdBlock > n) return null;
    return { ...read(viewAfter(n), pool) };
  }

  /** Gas of a planned transaction: a pure function, so that headers need no execution. */
  const gasOf = (n: number, index: number, p: PlannedTx): number => {
    const v3 = u.poolInfo(p.pool).protocol === "v3";
    const base =
      p.kind === "create"
        ? v3
          ? 4_800_000
          : 2_400_000
        : p.kind === "swap"
          ? v3
            ? 150_000
            : 110_000
          : v3
            ? 220_000
            : 180_000;
    return base + (hash32(seed, Kind.tx, n, index, 99) % 20_000);
  };

  // ---- execution of one transaction ----
  const dexOf = (info: PoolInfo) => profile.dexes[info.dex] as (typeof profile.dexes)[number];
  const transfer = (token: number, from: string, to: string, amount: bigint): ShapeLog => ({
    address: u.tokenAddress(token),
    topics: [TRANSFER, topicOf(addrWord(from)), topicOf(addrWord(to))],
    data: dataOf(word(amount)),
  });
  const sync = (info: PoolInfo, s: PoolDyn): ShapeLog => ({
    address: info.address,
    topics: [topics.v2Sync],
    data: dataOf(word(s.r0), word(s.r1)),
  });

  function execute(n: number, index: number, p: PlannedTx, view: View): ShapeTx {
    const info = u.poolInfo(p.pool);
    const dex = dexOf(info);
    const trader = u.traderAddress(p.trader);
    const router = dex.router;
    const logs: ShapeLog[] = [];
    const gas = gasOf(n, index, p);
    view.touched.add(p.pool);
    if (p.kind === "create") {
      const s = { ...info.initial };
      view.state.set(p.pool, s);
      const t0 = u.tokenAddress(info.token0);
      const t1 = u.tokenAddress(info.token1);
      if (info.protocol === "v2") {
        logs.push({
          address: dex.factory,
          topics: [topics.v2PairCreated, topicOf(addrWord(t0)), topicOf(addrWord(t1))],
          data: dataOf(addrWord(info.address), word(p.pool + 1)),
        });
        logs.push(
          transfer(info.token0, trader, info.address, s.r0),
          transfer(info.token1, trader, info.address, s.r1),
        );
        logs.push(sync(info, s), {
          address: info.address,
          topics: [topics.v2Mint, topicOf(addrWord(router))],
          data: dataOf(word(s.r0), word(s.r1)),
        });
        return { index, kind: p.kind, pool: p.pool, trader: p.trader, gas, logs };
      }
      logs.push({
        address: dex.factory,
        topics: [topics.v3PoolCreated, topicOf(addrWord(t0)), topicOf(addrWord(t1)), topicOf(word(info.fee))],
        data: dataOf(word(info.tickSpacing), addrWord(info.address)),
      });
      logs.push({
        address: info.address,
        topics: [topics.v3Initialize],
        data: dataOf(word(s.sqrtPriceX96), word(s.tick)),
      });
      logs.push(
        transfer(info.token0, trader, info.address, s.r0),
        transfer(info.token1, trader, info.address, s.r1),
      );
      logs.push(v3Mint(info, router, s.liquidity, s.r0, s.r1));
      return { index, kind: p.kind, pool: p.pool, trader: p.trader, gas, logs };
    }

    const s = read(view, p.pool);
    const initial = info.initial;
    if (p.kind === "swap") {
      // Mean reversion keeps every pool near its initial price over any history length:
      // above it, token0 is sold more often (which lowers the price of token0 in token1).
      const ratio =
        info.protocol === "v2"
          ? Number(s.r1) / Number(s.r0) / (Number(initial.r1) / Number(initial.r0))
          : (Number(s.sqrtPriceX96) / Number(initial.sqrtPriceX96)) ** 2;
      const sellProbability = ratio > 1.02 ? 0.7 : ratio < 0.98 ? 0.3 : 0.5;
      const zeroForOne = p.b < sellProbability;
      // 0.01 % to 3 % of the pool's balance of the input token.
      const ppm = BigInt(Math.floor(10 ** (2 + 2.5 * p.a)));
      const reserveIn = zeroForOne ? s.r0 : s.r1;
      const amountIn = (reserveIn * ppm) / 1_000_000n || 1n;
      const [tokenIn, tokenOut] = zeroForOne ? [info.token0, info.token1] : [info.token1, info.token0];
      if (info.protocol === "v2") {
        const out = v2AmountOut(amountIn, reserveIn, zeroForOne ? s.r1 : s.r0, info.fee);
        if (zeroForOne) {
          s.r0 += amountIn;
          s.r1 -= out;
        } else {
          s.r1 += amountIn;
          s.r0 -= out;
        }
        logs.push(
          transfer(tokenIn, trader, info.address, amountIn),
          transfer(tokenOut, info.address, trader, out),
        );
        logs.push(sync(info, s), {
          address: info.address,
          topics: [topics.v2Swap, topicOf(addrWord(router)), topicOf(addrWord(trader))],
          data: dataOf(
            word(zeroForOne ? amountIn : 0n),
            word(zeroForOne ? 0n : amountIn),
            word(zeroForOne ? 0n : out),
            word(zeroForOne ? out : 0n),
          ),
        });
        return { index, kind: p.kind, pool: p.pool, trader: p.trader, gas, logs };
      }
      const result = v3SwapExactIn({
        sqrtPriceX96: s.sqrtPriceX96,
        liquidity: s.liquidity,
        fee: info.fee,
        zeroForOne,
        amountIn,
      });
      s.r0 += result.amount0;
      s.r1 += result.amount1;
      s.sqrtPriceX96 = result.sqrtPriceX96;
      s.tick = result.tick;
      const out = zeroForOne ? -result.amount1 : -result.amount0;
      logs.push(
        transfer(tokenOut, info.address, trader, out),
        transfer(tokenIn, trader, info.address, amountIn),
      );
      const fields = [
        word(result.amount0),
        word(result.amount1),
        word(result.sqrtPriceX96),
        word(s.liquidity),
        word(result.tick),
      ];
      const pancake = dex.swapEvent === "pancake";
      if (pancake) {
        // PancakeSwap V3 logs the protocol's share of the fee (a third here) on the input side.
        const protocolFee = (amountIn * BigInt(info.fee)) / 3_000_000n;
        fields.push(word(zeroForOne ? protocolFee : 0n), word(zeroForOne ? 0n : protocolFee));
      }
      logs.push({
        address: info.address,
        topics: [
          pancake ? topics.pancakeV3Swap : topics.v3Swap,
          topicOf(addrWord(router)),
          topicOf(addrWord(trader)),
        ],
        data: dataOf(...fields),
      });
      return { index, kind: p.kind, pool: p.pool, trader: p.trader, gas, logs };
    }

    // Liquidity: add 0.1–2 %, or remove it while the pool holds more than half its initial depth.
    const ppm = BigInt(Math.floor(1000 + 19_000 * p.a));
    const remove =
      p.kind === "burn" &&
      (info.protocol === "v2" ? s.r0 * 2n > initial.r0 : s.liquidity * 2n > initial.liquidity);
    const kind: TxKind = remove ? "burn" : "mint";
    if (info.protocol === "v2") {
      if (kind === "mint") {
        const a0 = (s.r0 * ppm) / 1_000_000n;
        const a1 = (a0 * s.r1) / s.r0;
        s.r0 += a0;
        s.r1 += a1;
        logs.push(
          transfer(info.token0, trader, info.address, a0),
          transfer(info.token1, trader, info.address, a1),
        );
        logs.push(sync(info, s), {
          address: info.address,
          topics: [topics.v2Mint, topicOf(addrWord(router))],
          data: dataOf(word(a0), word(a1)),
        });
      } else {
        const a0 = (s.r0 * ppm) / 1_000_000n;
        const a1 = (s.r1 * ppm) / 1_000_000n;
        s.r0 -= a0;
        s.r1 -= a1;
        logs.push(
          transfer(info.token0, info.address, trader, a0),
          transfer(info.token1, info.address, trader, a1),
        );
        logs.push(sync(info, s), {
          address: info.address,
          topics: [topics.v2Burn, topicOf(addrWord(router)), topicOf(addrWord(trader))],
          data: dataOf(word(a0), word(a1)),
        });
      }
      return { index, kind, pool: p.pool, trader: p.trader, gas, logs };
    }
    const delta = (s.liquidity * ppm) / 1_000_000n;
    const lower = sqrtRatioAtTick(info.tickLower);
    const upper = sqrtRatioAtTick(info.tickUpper);
    const up = kind === "mint";
    const a0 = amount0Delta(s.sqrtPriceX96, upper, delta, up);
    const a1 = amount1Delta(lower, s.sqrtPriceX96, delta, up);
    if (up) {
      s.liquidity += delta;
      s.r0 += a0;
      s.r1 += a1;
      logs.push(
        transfer(info.token0, trader, info.address, a0),
        transfer(info.token1, trader, info.address, a1),
      );
      logs.push(v3Mint(info, router, delta, a0, a1));
    } else {
      s.liquidity -= delta;
      s.r0 -= a0;
      s.r1 -= a1;
      const ticks = [topicOf(addrWord(router)), topicOf(word(info.tickLower)), topicOf(word(info.tickUpper))];
      logs.push({
        address: info.address,
        topics: [topics.v3Burn, ...ticks],
        data: dataOf(word(delta), word(a0), word(a1)),
      });
      logs.push(
        transfer(info.token0, info.address, trader, a0),
        transfer(info.token1, info.address, trader, a1),
      );
      logs.push({
        address: info.address,
        topics: [topics.v3Collect, ...ticks],
        data: dataOf(addrWord(trader), word(a0), word(a1)),
      });
    }
    return { index, kind, pool: p.pool, trader: p.trader, gas, logs };
  }

  function v3Mint(info: PoolInfo, owner: Hex, liquidity: bigint, a0: bigint, a1: bigint): ShapeLog {
    return {
      address: info.address,
      topics: [
        topics.v3Mint,
        topicOf(addrWord(owner)),
        topicOf(word(info.tickLower)),
        topicOf(word(info.tickUpper)),
      ],
      data: dataOf(addrWord(owner), word(liquidity), word(a0), word(a1)),
    };
  }

  /** Drops everything derived from blocks ≥ from (a new fork starts there). */
  const invalidateFrom = (from: number) => {
    for (const n of [...cache.keys()]) if (n >= from) cache.delete(n);
    planCache.clear();
    hashMemo.clear();
    tail = undefined;
    callView = undefined;
    const keep = Math.max(creationSegments, Math.floor(from / K));
    if (segmentsDone > keep) {
      segmentsDone = keep;
      for (const [pool, entry] of checkpoints) {
        while (entry.seg.length > 0 && (entry.seg[entry.seg.length - 1] as number) >= keep) {
          entry.seg.pop();
          entry.state.pop();
          checkpointEntries--;
        }
        if (entry.seg.length === 0) checkpoints.delete(pool);
      }
    }
  };

  return {
    universe: u,
    profile,
    head,
    timestamp,
    blockHash,
    parentHash,
    blockNumberOfHash,
    txHash,
    txPosition,
    planBlock,
    txCount: (n: number) => planBlock(n).length,
    /** The transactions of block n without executing it: kind, pool, trader, gas. */
    plannedTxs: (n: number) => planBlock(n).map((p, index) => ({ ...p, index, gas: gasOf(n, index, p) })),
    block,
    blocks,
    poolStateAt,
    /** Replaces the last `depth` blocks with another fork (other hashes, other trades). */
    reorg(depth: number): { from: number; to: number } {
      const h = head();
      const from = Math.max(1, h - depth + 1);
      forks.push({ from, id: forks.length + 1 });
      invalidateFrom(from);
      return { from, to: h };
    },
    /** Headers of [from, from + count) get a parent hash that names no block; count 0 heals them. */
    unlinkHeaders(from: number, count: number): void {
      if (count <= 0) {
        for (let i = unlinked.length - 1; i >= 0; i--) if (unlinked[i]?.from === from) unlinked.splice(i, 1);
      } else unlinked.push({ from, count });
    },
    /** Moves the head forward by n blocks (a fixed head, or on top of the clock). */
    advance(n: number): number {
      advanced += n;
      return head();
    },
    stats: () => ({
      segmentBlocks: K,
      segmentsDone,
      checkpointPools: checkpoints.size,
      checkpointEntries,
      cachedBlocks: cache.size,
    }),
  };
}
