import type { Hex } from "../decode/types.js";
import type { ShapeActor, ShapeLog } from "../protocols/shape.js";
import { hash32, hex8, Kind, stream } from "./hash.js";
import type { PoolDyn, Universe } from "./universe.js";

/**
 * The synthetic chain's blocks. Laziness and consistency:
 *
 * - What happens in block N (which transactions, which pools, which traders, the random draws
 *   that size them) is a pure function of (seed, profile, N, fork): `planBlock`.
 * - The amounts depend on the pools' state (V2 reserves, V3 price and liquidity), which evolves
 *   with every event. `execute` applies a plan to the state of the pools it touches, through
 *   each pool's family (`ProtocolFamily.shape`), which writes its logs.
 * - State is kept as checkpoints every `segmentBlocks` blocks, sparse per pool: a pool's entry
 *   records its state at the end of each segment in which it changed. A pool never touched since
 *   its creation has no entry at all: its state is the closed-form `initial` of the universe.
 *   Blocks are generated sequentially from the start of their segment (so at most one segment is
 *   generated again to answer any block), and segments are recorded in order as generation first
 *   passes them.
 * - A reorg (a new fork from block F) changes the draws of blocks ≥ F and drops the checkpoints
 *   and cached blocks at or above F.
 */

export type { ShapeLog };
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

const ZERO_WORD = "0".repeat(64);

/** Block and transaction hashes: hash words, then the numbers they stand for, mixed (decodable). */
function chainHashes(seed: number, forkOf: (n: number) => number) {
  // Hashes are asked again and again (every log carries two): memoised, dropped by a reorg.
  const memo = new Map<string, Hex>();
  const remember = (key: string, make: () => Hex): Hex => {
    let h = memo.get(key);
    if (h === undefined) {
      h = make();
      if (memo.size >= 500_000) memo.clear();
      memo.set(key, h);
    }
    return h;
  };
  /** The number a hash's word `at` (hex offset) carries, unmixed with the hash word at `keyAt`. */
  const unmix = (h: string, at: number, keyAt: number, kind: number): number =>
    (Number.parseInt(h.slice(at, at + 8), 16) ^
      hash32(seed, Kind.tag, kind, Number.parseInt(h.slice(keyAt, keyAt + 8), 16))) >>>
    0;
  const blockHash = (n: number): Hex =>
    remember(`b${n}`, () => {
      const f = forkOf(n);
      const w = [0, 1, 2, 3, 4, 5].map((k) => hash32(seed, Kind.block, n, f, k));
      const w6 = (n ^ hash32(seed, Kind.tag, Kind.block, w[0] as number)) >>> 0;
      return `0x${w.map(hex8).join("")}${hex8(w6)}${hex8(hash32(seed, Kind.block, n, f, 7))}` as Hex;
    });
  const txHash = (n: number, index: number): Hex =>
    remember(`t${n}:${index}`, () => {
      const f = forkOf(n);
      const w = [0, 1, 2, 3, 4, 5].map((k) => hash32(seed, Kind.tx, n, f, index, k));
      const w6 = (n ^ hash32(seed, Kind.tag, Kind.tx, w[0] as number)) >>> 0;
      const w7 = (index ^ hash32(seed, Kind.tag, Kind.tx, w[1] as number)) >>> 0;
      return `0x${w.map(hex8).join("")}${hex8(w6)}${hex8(w7)}` as Hex;
    });
  return {
    blockHash,
    txHash,
    /** The block a block hash names, if it is that block's hash. */
    blockOf(hash: string): number | null {
      if (hash.length !== 66) return null;
      const h = hash.toLowerCase();
      const n = unmix(h, 50, 2, Kind.block);
      return blockHash(n) === h ? n : null;
    },
    /** The (block, index) a transaction hash encodes, unchecked. */
    txOf(hash: string): { block: number; index: number } | null {
      if (hash.length !== 66) return null;
      const h = hash.toLowerCase();
      return { block: unmix(h, 50, 2, Kind.tx), index: unmix(h, 58, 10, Kind.tx) };
    },
    /** A parent hash that names no block (an unlinked header). */
    bogus: (n: number): Hex =>
      `0x${[0, 1, 2, 3, 4, 5, 6, 7].map((k) => hex8(hash32(seed, Kind.bogus, n, k))).join("")}` as Hex,
    clear: () => memo.clear(),
  };
}

/** What block n holds, from (seed, profile, n, fork) alone. */
function blockPlanner(u: Universe, forkOf: (n: number) => number) {
  const { profile, seed } = u;
  /** Picks a pool existing before block n: a power law over the initial pools, 10 % on the newest. */
  const pickPool = (available: number, r: () => number): number => {
    const newer = available - u.initialPools;
    if (newer > 0 && r() < 0.1) return available - 1 - Math.floor(Math.min(1000, newer) * r());
    return Math.floor(Math.min(available, u.initialPools) * r() ** 4);
  };
  const cache = new Map<number, PlannedTx[]>();
  const plan = (n: number): PlannedTx[] => {
    const cached = cache.get(n);
    if (cached) return cached;
    const txs: PlannedTx[] = [];
    const r = stream(seed, Kind.plan, n, forkOf(n));
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
    if (cache.size > 4096) cache.clear();
    cache.set(n, txs);
    return txs;
  };
  return { plan, clear: () => cache.clear() };
}

/** The pools' states as generation goes: the pools read or changed since a segment's start. */
type View = { next: number; state: Map<number, PoolDyn>; touched: Set<number> };

/**
 * Sparse per-pool checkpoints at segment ends. The creation era (blocks 1…G) only creates pools,
 * whose state after creation is closed-form: its segments need no checkpoint, so generation
 * never has to pass through it.
 */
function segmentCheckpoints(u: Universe, K: number) {
  const creationSegments = Math.floor((u.creationEraBlocks + 1) / K);
  const entries = new Map<number, { seg: number[]; state: PoolDyn[] }>();
  const self = {
    creationSegments,
    segmentsDone: creationSegments,
    count: 0,
    pools: () => entries.size,
    /** A pool's state at the start of segment c (undefined: not created before it). */
    atSegmentStart(pool: number, c: number): PoolDyn | undefined {
      const entry = entries.get(pool);
      if (entry) {
        for (let k = entry.seg.length - 1; k >= 0; k--)
          if ((entry.seg[k] as number) < c) return entry.state[k];
      }
      const info = u.poolInfo(pool);
      return info.createdBlock < c * K ? info.initial : undefined;
    },
    /** Records the end of segment c from a view (the first time generation passes it). */
    record(c: number, view: View): void {
      if (c !== self.segmentsDone) return;
      for (const pool of view.touched) {
        const s = view.state.get(pool) as PoolDyn;
        const i = u.poolInfo(pool).initial;
        if (
          s.r0 === i.r0 &&
          s.r1 === i.r1 &&
          s.sqrtPriceX96 === i.sqrtPriceX96 &&
          s.liquidity === i.liquidity &&
          s.tick === i.tick
        )
          continue;
        let entry = entries.get(pool);
        if (!entry) {
          entry = { seg: [], state: [] };
          entries.set(pool, entry);
        }
        entry.seg.push(c);
        entry.state.push({ ...s });
        self.count++;
      }
      self.segmentsDone++;
    },
    /** Drops the segments at or above `keep`. */
    dropFrom(keep: number): void {
      if (self.segmentsDone <= keep) return;
      self.segmentsDone = keep;
      for (const [pool, entry] of entries) {
        while (entry.seg.length > 0 && (entry.seg[entry.seg.length - 1] as number) >= keep) {
          entry.seg.pop();
          entry.state.pop();
          self.count--;
        }
        if (entry.seg.length === 0) entries.delete(pool);
      }
    },
  };
  return self;
}

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
  const hashes = chainHashes(seed, forkOf);
  const planner = blockPlanner(u, forkOf);
  const planBlock = planner.plan;
  const checkpoints = segmentCheckpoints(u, K);

  const viewAtSegment = (c: number): View => ({ next: c * K, state: new Map(), touched: new Set() });
  const read = (view: View, pool: number): PoolDyn => {
    let s = view.state.get(pool);
    if (!s) {
      const base = checkpoints.atSegmentStart(pool, Math.floor(view.next / K));
      if (!base) throw new Error(`pool ${pool} read before its creation`);
      s = { ...base };
      view.state.set(pool, s);
    }
    return s;
  };

  /** Gas of a planned transaction: a pure function, so that headers need no execution. */
  const gasOf = (n: number, index: number, p: PlannedTx): number => {
    const { gas } = u.poolInfo(p.pool).family.shape;
    const base = p.kind === "create" ? gas.create : p.kind === "swap" ? gas.swap : gas.liquidity;
    return base + (hash32(seed, Kind.tx, n, index, 99) % 20_000);
  };

  /** One transaction on the view's state, its logs written by the pool's family. */
  function execute(n: number, index: number, p: PlannedTx, view: View): ShapeTx {
    const info = u.poolInfo(p.pool);
    const family = info.family.shape;
    const dex = profile.dexes[info.dex] as (typeof profile.dexes)[number];
    const actor: ShapeActor = { trader: u.traderAddress(p.trader), router: dex.router };
    const tx = { index, kind: p.kind, pool: p.pool, trader: p.trader, gas: gasOf(n, index, p) };
    view.touched.add(p.pool);
    if (p.kind === "create") {
      const s = { ...info.initial };
      view.state.set(p.pool, s);
      return { ...tx, logs: family.create(info.shape, s, actor) };
    }
    const s = read(view, p.pool);
    if (p.kind === "swap") {
      // Mean reversion keeps every pool near its initial price over any history length:
      // above it, token0 is sold more often (which lowers the price of token0 in token1).
      const drift = family.drift(s, info.initial);
      const zeroForOne = p.b < (drift > 1.02 ? 0.7 : drift < 0.98 ? 0.3 : 0.5);
      // 0.01 % to 3 % of the pool's balance of the input token.
      const ppm = BigInt(Math.floor(10 ** (2 + 2.5 * p.a)));
      const amountIn = ((zeroForOne ? s.r0 : s.r1) * ppm) / 1_000_000n || 1n;
      return { ...tx, logs: family.swap(info.shape, s, zeroForOne, amountIn, actor) };
    }
    // Liquidity: add 0.1–2 %, or remove it while the pool holds more than half its initial depth.
    const ppm = BigInt(Math.floor(1000 + 19_000 * p.a));
    const remove = p.kind === "burn" && family.canRemove(s, info.initial);
    return {
      ...tx,
      kind: remove ? "burn" : "mint",
      logs: family.liquidity(info.shape, s, ppm, remove, actor),
    };
  }

  /** Runs block view.next on the view's state and returns it. Records a segment end in order. */
  const step = (view: View): ShapeBlock => {
    const n = view.next;
    const txs = planBlock(n).map((p, index) => execute(n, index, p, view));
    view.next = n + 1;
    if (n % K === K - 1) {
      checkpoints.record(Math.floor(n / K), view);
      view.touched.clear();
    }
    return { number: n, fork: forkOf(n), txs, logCount: txs.reduce((sum, tx) => sum + tx.logs.length, 0) };
  };

  // ---- executed blocks: a small LRU and the view that continues after the last one ----
  const cache = new Map<number, ShapeBlock>();
  let tail: View | undefined;
  let callView: View | undefined;
  const remember = (block: ShapeBlock) => {
    cache.delete(block.number);
    cache.set(block.number, block);
    if (cache.size > cacheLimit) cache.delete(cache.keys().next().value as number);
  };
  /** A view that can reach block n: the tail when it is at or below n and no further back than the checkpoint. */
  const viewTowards = (n: number): View => {
    const c = Math.min(Math.floor(n / K), checkpoints.segmentsDone);
    return tail && tail.next <= n && tail.next >= c * K ? tail : viewAtSegment(c);
  };

  /**
   * Calls onBlock for each executed block of [from, to], in order; stops early when it returns
   * false. Generates the segments below `from` first if they were never generated.
   */
  function blocks(from: number, to: number, onBlock: (block: ShapeBlock) => boolean | undefined): void {
    for (let n = from; n <= to; n++) {
      let block = cache.get(n);
      if (!block) {
        const view = viewTowards(n);
        tail = view;
        while (view.next < n) remember(step(view));
        block = step(view);
        remember(block);
      }
      if (onBlock(block) === false) return;
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
  const viewAfter = (n: number): View => {
    if (tail && tail.next === n + 1) return tail;
    if (callView && callView.next === n + 1) return callView;
    const c = Math.min(Math.floor(n / K), checkpoints.segmentsDone);
    const view = tail && tail.next <= n + 1 && tail.next >= c * K ? tail : viewAtSegment(c);
    while (view.next <= n) remember(step(view));
    if (view !== tail) callView = view;
    return view;
  };

  /** Drops everything derived from blocks ≥ from (a new fork starts there). */
  const invalidateFrom = (from: number) => {
    for (const n of [...cache.keys()]) if (n >= from) cache.delete(n);
    planner.clear();
    hashes.clear();
    tail = undefined;
    callView = undefined;
    checkpoints.dropFrom(Math.max(checkpoints.creationSegments, Math.floor(from / K)));
  };

  return {
    universe: u,
    profile,
    head,
    timestamp,
    blockHash: hashes.blockHash,
    parentHash: (n: number): Hex => {
      if (n === 0) return `0x${ZERO_WORD}` as Hex;
      // A header that does not link: its parent hash names no block.
      if (unlinked.some((r) => n >= r.from && n < r.from + r.count)) return hashes.bogus(n);
      return hashes.blockHash(n - 1);
    },
    blockNumberOfHash: (hash: string): number | null => {
      const n = hashes.blockOf(hash);
      return n !== null && n <= head() ? n : null;
    },
    txHash: hashes.txHash,
    txPosition: (hash: string): { block: number; index: number } | null => {
      const at = hashes.txOf(hash);
      if (!at || at.block > head() || at.index >= planBlock(at.block).length) return null;
      return hashes.txHash(at.block, at.index) === hash.toLowerCase() ? at : null;
    },
    planBlock,
    txCount: (n: number) => planBlock(n).length,
    /** The transactions of block n without executing it: kind, pool, trader, gas. */
    plannedTxs: (n: number) => planBlock(n).map((p, index) => ({ ...p, index, gas: gasOf(n, index, p) })),
    block,
    blocks,
    /** A pool's state at the end of block n (null: not created yet). */
    poolStateAt(pool: number, n: number): PoolDyn | null {
      if (u.poolInfo(pool).createdBlock > n) return null;
      return { ...read(viewAfter(n), pool) };
    },
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
      segmentsDone: checkpoints.segmentsDone,
      checkpointPools: checkpoints.pools(),
      checkpointEntries: checkpoints.count,
      cachedBlocks: cache.size,
    }),
  };
}
