/**
 * An independent reference of the market windows (docs/API.md, "Market windows"), for tests:
 * computed from raw `swaps` rows with plain loops and BigInt rationals, sharing no code with
 * src/pricing (no buckets, no exact-decimal sums, no maker tables).
 *
 * Window W at `now`: the trades with block_time ≥ ⌊now⌋minute + 1 min − W. volume_usd = the exact
 * sum of the trades' volume_usd doubles rounded once; buys/sells = the side of the token (pair:
 * token0) as /api/v1/trades gives it; makers = distinct non-null makers; price_change = percent from
 * the price after the latest trade before the start (else the window's first trade) to the price
 * after the latest trade (pair: swaps.price; token: its series USD price), trades without one skipped.
 */
import { referenceRatioToNumber } from "./exact.js";

export const REFERENCE_WINDOWS = {
  "5m": 300_000,
  "1h": 3_600_000,
  "6h": 21_600_000,
  "24h": 86_400_000,
} as const;
export type ReferenceWindow = keyof typeof REFERENCE_WINDOWS;

export type ReferenceSwap = {
  pool: string;
  token0: string;
  token1: string;
  key: bigint;
  time: number;
  maker: string | null;
  price: number | null;
  volumeUsd: number | null;
  series0: number | null;
  series1: number | null;
  net0: bigint;
  net1: bigint;
};

export type ReferenceFigures = {
  price_change: number | null;
  volume_usd: number;
  buys: number;
  sells: number;
  makers: number;
};

/** Raw rows of loadSwapsForMarket (src/_test/sql.ts) as reference swaps. */
export function referenceSwaps(rows: readonly Record<string, unknown>[]): ReferenceSwap[] {
  return rows.map((r) => ({
    pool: r.pool as string,
    token0: r.token0 as string,
    token1: r.token1 as string,
    key: BigInt(r.block_number as number) * 1_000_000n + BigInt(r.log_index as number),
    time: (r.block_time as Date).getTime(),
    maker: r.maker as string | null,
    price: r.price as number | null,
    volumeUsd: r.volume_usd as number | null,
    series0: r.token0_series_usd as number | null,
    series1: r.token1_series_usd as number | null,
    net0: BigInt(r.amount0_in as string) - BigInt(r.amount0_out as string),
    net1: BigInt(r.amount1_in as string) - BigInt(r.amount1_out as string),
  }));
}

/** A double as the exact rational it is, from its IEEE 754 bit fields. */
function rationalOfDouble(value: number): { num: bigint; den: bigint } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const sign = bits >> 63n ? -1n : 1n;
  const exponentBits = Number((bits >> 52n) & 2047n);
  const fraction = bits & ((1n << 52n) - 1n);
  const significand = exponentBits === 0 ? fraction : fraction + (1n << 52n);
  const power = (exponentBits === 0 ? -1022 : exponentBits - 1023) - 52;
  return power >= 0
    ? { num: sign * significand * 2n ** BigInt(power), den: 1n }
    : { num: sign * significand, den: 2n ** BigInt(-power) };
}

/** The correctly rounded sum of doubles (exact rational sum, rounded once). */
export function referenceExactSum(values: readonly number[]): number {
  let num = 0n;
  let den = 1n;
  for (const v of values) {
    // Denominators are powers of two: the larger one is a common denominator.
    const r = rationalOfDouble(v);
    if (r.den > den) {
      num = num * (r.den / den) + r.num;
      den = r.den;
    } else num += r.num * (den / r.den);
  }
  return num === 0n ? 0 : referenceRatioToNumber(num, den);
}

/** Did the asset leave the pool (a buy), as /api/v1/trades sides a trade? */
const bought = (assetNet: bigint, otherNet: bigint) => !(assetNet > 0n || (assetNet === 0n && otherNet < 0n));

/**
 * The reference figures of every window at `now` (ms) for a pool or a token. `usdNow`: a token's
 * USD price now, which its 24-hour change is measured to (rather than to its series price after
 * its latest trade).
 */
export function referenceWindows(
  swaps: readonly ReferenceSwap[],
  owner: { pool: string } | { token: string },
  now: number,
  usdNow?: number | null,
): Record<ReferenceWindow, ReferenceFigures> {
  const views = swaps.flatMap((s) => {
    if ("pool" in owner) {
      return s.pool === owner.pool ? [{ s, buy: bought(s.net0, s.net1), price: s.price }] : [];
    }
    if (s.token0 === owner.token) return [{ s, buy: bought(s.net0, s.net1), price: s.series0 }];
    if (s.token1 === owner.token) return [{ s, buy: bought(s.net1, s.net0), price: s.series1 }];
    return [];
  });
  const priced = views.filter((v) => v.price !== null);
  const last = priced.at(-1)?.price ?? null;
  const minute = Math.floor(now / 60_000) * 60_000;
  const out = {} as Record<ReferenceWindow, ReferenceFigures>;
  for (const [name, length] of Object.entries(REFERENCE_WINDOWS) as [ReferenceWindow, number][]) {
    const start = minute + 60_000 - length;
    const inside = views.filter((v) => v.s.time >= start);
    const before = priced.filter((v) => v.s.time < start).at(-1)?.price ?? null;
    const first = priced.find((v) => v.s.time >= start)?.price ?? null;
    const from = before ?? first;
    const to = name === "24h" && usdNow !== undefined ? usdNow : last;
    out[name] = {
      price_change: from === null || to === null || !(from > 0) ? null : (to / from - 1) * 100,
      volume_usd: referenceExactSum(inside.flatMap((v) => (v.s.volumeUsd === null ? [] : [v.s.volumeUsd]))),
      buys: inside.filter((v) => v.buy).length,
      sells: inside.filter((v) => !v.buy).length,
      makers: new Set(inside.flatMap((v) => (v.s.maker === null ? [] : [v.s.maker]))).size,
    };
  }
  return out;
}
