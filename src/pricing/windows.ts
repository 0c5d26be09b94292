/**
 * The market windows of pairs and tokens (5m, 1h, 6h, 24h): where they lie, how trades fill the
 * minute and hour buckets they are summed from, the makers' latest trades, and the figures made of
 * them. Pure: the stage (market-windows.ts) reads and writes, this file decides.
 *
 * A window W at instant `now` holds the trades of the W/60 one-minute UTC buckets ending with
 * now's minute: block_time ≥ start = ⌊now⌋minute + 1 min − W. Minute-aligned, so its figures only
 * change when a trade arrives or a minute starts, and can be kept in a table (docs/PRICING.md).
 */
import type {
  BucketPartial,
  MakerLast,
  WindowFigures,
  WindowInputs,
  WindowSpan,
  WindowTrade,
} from "../model/index.js";
import { addExact, EXACT_ZERO, type ExactDecimal, exactOf, exactText } from "./exact-sum.js";
import { percentChange } from "./stats.js";
import { assetSold, eventKey } from "./trade.js";

export const WINDOW_NAMES = ["5m", "1h", "6h", "24h"] as const;
export type WindowName = (typeof WINDOW_NAMES)[number];

const MINUTE = 60_000;
const HOUR = 3_600_000;

export const WINDOW_MS: Readonly<Record<WindowName, number>> = {
  "5m": 5 * MINUTE,
  "1h": HOUR,
  "6h": 6 * HOUR,
  "24h": 24 * HOUR,
};

/** The bucket sizes (seconds) the windows are summed from. */
export const BUCKET_RESOLUTIONS = [60, 3600] as const;

/**
 * Where what a window can still count begins at `now` (ms), an hour early: the longest window's
 * start, rounded down to its hour, less an hour. Trades before it are read again only through
 * their minute buckets' prices (the price before a window, the first trade ever): their hour
 * buckets and makers are never summed or counted again, since now only moves forward, and are
 * not written (bucketPartials, makerLasts). Hour-aligned: an hour bucket lies wholly on one side.
 */
export function countedFrom(now: number): number {
  const start = windowMinute(now) + MINUTE - WINDOW_MS["24h"];
  return Math.floor(start / HOUR) * HOUR - HOUR;
}

/** The minute the windows end with at `now` (ms): its start. */
export function windowMinute(now: number): number {
  return Math.floor(now / MINUTE) * MINUTE;
}

/**
 * Where each window lies at `now` (ms), in the order of WINDOW_NAMES: its first minute, and its
 * split into minute buckets [start, hoursFrom) and [hoursTo, …) and hour buckets [hoursFrom,
 * hoursTo), so that a day is at most 59 + 23 + 60 rows rather than 1,440.
 */
export function windowSpans(now: number): WindowSpan[] {
  const minute = windowMinute(now);
  const currentHour = Math.floor(minute / HOUR) * HOUR;
  return WINDOW_NAMES.map((name) => {
    const start = minute + MINUTE - WINDOW_MS[name];
    const hoursFrom = Math.ceil(start / HOUR) * HOUR;
    return { name, start, hoursFrom, hoursTo: Math.max(hoursFrom, currentHour) };
  });
}

/** A range of buckets of one resolution: [from, to), `to` null for no end. */
export type BucketRange = { resolution: 60 | 3600; from: number; to: number | null };

/** The disjoint bucket ranges that hold every window's rows: what one read of all windows scans. */
export function bucketRanges(spans: readonly WindowSpan[]): BucketRange[] {
  const wanted: BucketRange[] = [];
  for (const s of spans) {
    if (s.hoursFrom > s.start) wanted.push({ resolution: 60, from: s.start, to: s.hoursFrom });
    wanted.push({ resolution: 60, from: s.hoursTo, to: null });
    if (s.hoursTo > s.hoursFrom) wanted.push({ resolution: 3600, from: s.hoursFrom, to: s.hoursTo });
  }
  const merged: BucketRange[] = [];
  for (const resolution of BUCKET_RESOLUTIONS) {
    const ranges = wanted.filter((r) => r.resolution === resolution).sort((a, b) => a.from - b.from);
    let current: BucketRange | undefined;
    for (const r of ranges) {
      if (current && (current.to === null || r.from <= current.to)) {
        current.to = current.to === null || r.to === null ? null : Math.max(current.to, r.to);
        continue;
      }
      current = { ...r };
      merged.push(current);
    }
  }
  return merged;
}

/** The start of the bucket of `time` (ms) at `resolution` seconds. */
const bucketOf = (time: number, resolution: number) =>
  Math.floor(time / (resolution * 1000)) * resolution * 1000;

/** A trade as it enters one owner's buckets: bought or sold, its price for that owner. */
type OwnedTrade = {
  owner: string;
  key: number;
  time: number;
  bought: boolean;
  price: number | null;
  /** The trade's USD volume exactly; null when it has none. */
  volume: ExactDecimal | null;
};

/** A bucket's sums so far (its volume exact, made text when the partial is given). */
type Partial = Omit<BucketPartial, "volumeUsd"> & { volume: ExactDecimal };

/**
 * What trades (ascending by key) add to their owners' minute and hour buckets: exact volume sums,
 * counts, first and last keys, and the prices after the first and last trades that have one.
 * Pools see token0's side and their pool price; tokens their own side and USD price. Trades
 * before `from` (countedFrom) add to their minute buckets only.
 */
export function bucketPartials(
  trades: readonly WindowTrade[],
  kind: "pool" | "token",
  from = Number.NEGATIVE_INFINITY,
): BucketPartial[] {
  const partials = new Map<string, Partial>();
  for (const t of trades) {
    const [net0, net1] = [t.amount0In - t.amount0Out, t.amount1In - t.amount1Out];
    const key = eventKey(t.blockNumber, t.logIndex);
    const volume = t.volumeUsd !== null && Number.isFinite(t.volumeUsd) ? exactOf(t.volumeUsd) : null;
    const common = { key, time: t.time, volume };
    if (kind === "pool") {
      addToPartials(
        partials,
        { ...common, owner: t.pool, bought: !assetSold(net0, net1), price: t.price },
        from,
      );
    } else {
      addToPartials(
        partials,
        { ...common, owner: t.token0, bought: !assetSold(net0, net1), price: t.series0Usd },
        from,
      );
      addToPartials(
        partials,
        { ...common, owner: t.token1, bought: !assetSold(net1, net0), price: t.series1Usd },
        from,
      );
    }
  }
  const out = new Array<BucketPartial>(partials.size);
  let i = 0;
  for (const p of partials.values()) {
    out[i++] = {
      owner: p.owner,
      resolution: p.resolution,
      bucket: p.bucket,
      volumeUsd: exactText(p.volume),
      trades: p.trades,
      buys: p.buys,
      firstKey: p.firstKey,
      lastKey: p.lastKey,
      firstTime: p.firstTime,
      open: p.open,
      close: p.close,
    };
  }
  return out;
}

/** Adds an owner's trade to its minute and (from `from` on) hour buckets' partials. */
function addToPartials(partials: Map<string, Partial>, t: OwnedTrade, from: number): void {
  for (const resolution of BUCKET_RESOLUTIONS) {
    if (resolution !== 60 && t.time < from) continue;
    const bucket = bucketOf(t.time, resolution);
    const id = `${t.owner}|${resolution}|${bucket}`;
    let p = partials.get(id);
    if (!p) {
      p = {
        owner: t.owner,
        resolution,
        bucket,
        volume: EXACT_ZERO,
        trades: 0,
        buys: 0,
        firstKey: t.key,
        lastKey: t.key,
        firstTime: t.time,
        open: null,
        close: null,
      };
      partials.set(id, p);
    }
    if (t.volume !== null) p.volume = addExact(p.volume, t.volume);
    p.trades += 1;
    if (t.bought) p.buys += 1;
    p.lastKey = t.key;
    if (t.price !== null && Number.isFinite(t.price)) {
      if (p.open === null) p.open = t.price;
      p.close = t.price;
    }
  }
}

/**
 * Each (owner, maker)'s latest trade among `trades` (ascending by key); trades without a maker,
 * and those before `from` (countedFrom: no window counts them again), are left out.
 */
export function makerLasts(
  trades: readonly WindowTrade[],
  kind: "pool" | "token",
  from = Number.NEGATIVE_INFINITY,
): MakerLast[] {
  const last = new Map<string, MakerLast>();
  for (const t of trades) {
    if (t.maker === null || t.time < from) continue;
    const owners = kind === "pool" ? [t.pool] : [t.token0, t.token1];
    for (const owner of owners) {
      last.set(`${owner}|${t.maker}`, { owner, maker: t.maker, time: t.time, block: t.blockNumber });
    }
  }
  return [...last.values()];
}

/**
 * The figures of each window from its inputs: the sums as read, sells = trades − buys, and the
 * percent change from the price after the latest trade before the window's start (else the first
 * trade in it) to the price after the latest trade.
 */
export function windowFigures(inputs: WindowInputs): WindowFigures[] {
  return inputs.sums.map((sums, i) => ({
    priceChange: percentChange(inputs.before[i] ?? inputs.firstIn[i] ?? null, inputs.last),
    volumeUsd: sums.volumeUsd,
    buys: sums.buys,
    sells: sums.trades - sums.buys,
    makers: sums.makers,
  }));
}

/** The figures of a pool or token without any trade. */
export function emptyWindowFigures(): WindowFigures[] {
  return WINDOW_NAMES.map(() => ({ priceChange: null, volumeUsd: 0, buys: 0, sells: 0, makers: 0 }));
}

/**
 * The trades that leave window W between the minutes `from` and `to` (ms, `from` < `to`): those
 * with block_time in [start_W(from), start_W(to)), for every window; merged when they overlap.
 * The slide recomputes the pools and tokens that traded in them (nothing else changed).
 */
export function expiringRanges(from: number, to: number): { from: number; to: number }[] {
  const ranges = WINDOW_NAMES.map((name) => ({
    from: windowMinute(from) + MINUTE - WINDOW_MS[name],
    to: windowMinute(to) + MINUTE - WINDOW_MS[name],
  })).sort((a, b) => a.from - b.from);
  const merged: { from: number; to: number }[] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last && r.from <= last.to) last.to = Math.max(last.to, r.to);
    else merged.push({ ...r });
  }
  return merged;
}
