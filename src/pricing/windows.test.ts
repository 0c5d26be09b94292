import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceRatioToNumber } from "../_test/exact.js";
import { seededRandom } from "../_test/random.js";
import type { WindowTrade } from "../model/index.js";
import { addExact, EXACT_ZERO, exactOf, exactText } from "./exact-sum.js";
import {
  bucketPartials,
  bucketRanges,
  countedFrom,
  expiringRanges,
  makerLasts,
  WINDOW_MS,
  WINDOW_NAMES,
  windowFigures,
  windowSpans,
} from "./windows.js";

const iso = (ms: number) => new Date(ms).toISOString();
const MINUTE = 60_000;

/** A random double of a USD volume's magnitudes (1e-9 … 1e9), sometimes an integer or zero. */
function randomDouble(next: () => number): number {
  const kind = Math.floor(next() * 10);
  if (kind === 0) return 0;
  if (kind === 1) return Math.floor(next() * 1e6);
  return 10 ** (next() * 18 - 9) * (1 + next());
}

/** The exact rational of a decimal text (independent of the production parsing: plain BigInt). */
function rationalOf(text: string): { num: bigint; den: bigint } {
  const [whole = "0", fraction = ""] = text.split(".");
  return { num: BigInt(`${whole}${fraction}`), den: 10n ** BigInt(fraction.length) };
}

describe("exact sums of doubles", () => {
  it("writes a double as the exact decimal it denotes", () => {
    assert.equal(exactText(exactOf(0.1)), "0.1000000000000000055511151231257827021181583404541015625");
    assert.equal(exactText(exactOf(3)), "3");
    assert.equal(exactText(exactOf(0.5)), "0.5");
    assert.equal(exactText(exactOf(2 ** 70)), "1180591620717411303424");
    assert.equal(exactText(exactOf(0)), "0");
    assert.equal(exactText(exactOf(-1.25)), "-1.25");
    assert.equal(
      exactText(exactOf(5e-324)).length,
      2 + 1074,
      "the smallest subnormal: 1074 digits after the point",
    );
  });

  it("sums in any order to the same exact value, whose rounding is the correctly rounded sum", () => {
    const next = seededRandom(12);
    for (let round = 0; round < 200; round++) {
      const values = Array.from({ length: 1 + Math.floor(next() * 40) }, () => randomDouble(next));
      const forward = values.reduce((sum, v) => addExact(sum, exactOf(v)), EXACT_ZERO);
      const backward = [...values].reverse().reduce((sum, v) => addExact(sum, exactOf(v)), EXACT_ZERO);
      assert.equal(exactText(forward), exactText(backward), "order does not matter");
      // Grouped: pairs first, then the pairs' sums.
      let grouped = EXACT_ZERO;
      for (let i = 0; i < values.length; i += 2) {
        grouped = addExact(grouped, addExact(exactOf(values[i] as number), exactOf(values[i + 1] ?? 0)));
      }
      assert.equal(exactText(grouped), exactText(forward), "grouping does not matter");
      const { num, den } = rationalOf(exactText(forward));
      const rounded = referenceRatioToNumber(num, den);
      assert.equal(Number(exactText(forward)), rounded, "the text reads back as the correctly rounded sum");
      if (values.length === 1) assert.equal(rounded, values[0], "one term is itself");
    }
  });
});

describe("window spans", () => {
  it("each window is the W/60 minutes ending with now's minute, split into minutes and hours", () => {
    const now = Date.parse("2026-11-21T10:37:25Z");
    const spans = windowSpans(now);
    assert.deepEqual(
      spans.map((s) => [s.name, iso(s.start), iso(s.hoursFrom), iso(s.hoursTo)]),
      [
        ["5m", "2026-11-21T10:33:00.000Z", "2026-11-21T11:00:00.000Z", "2026-11-21T11:00:00.000Z"],
        ["1h", "2026-11-21T09:38:00.000Z", "2026-11-21T10:00:00.000Z", "2026-11-21T10:00:00.000Z"],
        ["6h", "2026-11-21T04:38:00.000Z", "2026-11-21T05:00:00.000Z", "2026-11-21T10:00:00.000Z"],
        ["24h", "2026-11-20T10:38:00.000Z", "2026-11-20T11:00:00.000Z", "2026-11-21T10:00:00.000Z"],
      ],
    );
  });

  it("the bucket ranges are disjoint and hold every bucket of every window, and only those", () => {
    const next = seededRandom(3);
    for (let round = 0; round < 300; round++) {
      const now = Date.parse("2026-11-21T00:00:00Z") + Math.floor(next() * 3 * 86_400_000);
      const spans = windowSpans(now);
      const ranges = bucketRanges(spans);
      const inRange = (resolution: number, bucket: number) =>
        ranges.filter(
          (r) => r.resolution === resolution && bucket >= r.from && (r.to === null || bucket < r.to),
        ).length;
      const minute = Math.floor(now / MINUTE) * MINUTE;
      // Every minute of the last 25 hours: in exactly the windows whose minute range holds it.
      for (let t = minute - 25 * 3_600_000; t <= minute; t += MINUTE) {
        const hour = Math.floor(t / 3_600_000) * 3_600_000;
        for (const [i, name] of WINDOW_NAMES.entries()) {
          const s = spans[i] as (typeof spans)[number];
          const inWindow = t >= minute + MINUTE - WINDOW_MS[name];
          // The minute is counted once: either as its minute bucket or inside its hour bucket.
          const asMinute = t >= s.start && (t < s.hoursFrom || t >= s.hoursTo);
          const asHour = hour >= s.hoursFrom && hour < s.hoursTo;
          assert.equal(asMinute || asHour, inWindow, `${name} at ${iso(now)}: ${iso(t)}`);
          assert.ok(!(asMinute && asHour), "never twice");
          if (asMinute) assert.equal(inRange(60, t), 1, "its minute bucket is read once");
          if (asHour) assert.equal(inRange(3600, hour), 1, "its hour bucket is read once");
        }
      }
    }
  });

  it("the trades leaving the windows between two minutes", () => {
    const from = Date.parse("2026-11-21T10:37:10Z");
    const to = Date.parse("2026-11-21T10:39:50Z");
    assert.deepEqual(
      expiringRanges(from, to).map((r) => [iso(r.from), iso(r.to)]),
      [
        ["2026-11-20T10:38:00.000Z", "2026-11-20T10:40:00.000Z"],
        ["2026-11-21T04:38:00.000Z", "2026-11-21T04:40:00.000Z"],
        ["2026-11-21T09:38:00.000Z", "2026-11-21T09:40:00.000Z"],
        ["2026-11-21T10:33:00.000Z", "2026-11-21T10:35:00.000Z"],
      ],
    );
  });
});

const trade = (overrides: Partial<WindowTrade>): WindowTrade => ({
  pool: "0xpool",
  token0: "0xt0",
  token1: "0xt1",
  blockNumber: 1,
  logIndex: 0,
  time: Date.parse("2026-11-21T10:00:05Z"),
  maker: "0xm1",
  price: 2,
  volumeUsd: 10,
  series0Usd: 3,
  series1Usd: 1.5,
  amount0In: 0n,
  amount1In: 20n,
  amount0Out: 10n,
  amount1Out: 0n,
  ...overrides,
});

describe("buckets and makers", () => {
  const trades = [
    trade({}),
    // token0 sold, no price, no USD volume, another maker.
    trade({
      blockNumber: 2,
      amount0In: 10n,
      amount1In: 0n,
      amount0Out: 0n,
      amount1Out: 19n,
      price: null,
      volumeUsd: null,
      series0Usd: null,
      maker: "0xm2",
    }),
    trade({ blockNumber: 3, time: Date.parse("2026-11-21T10:01:00Z"), price: 2.5, volumeUsd: 0.1 }),
  ];

  it("a pool's buckets: exact volume, token0's buys, first and last prices", () => {
    const partials = bucketPartials(trades, "pool");
    const minute = partials.filter((p) => p.resolution === 60);
    assert.deepEqual(
      minute.map((p) => [
        iso(p.bucket),
        p.volumeUsd,
        p.trades,
        p.buys,
        p.open,
        p.close,
        p.firstKey,
        p.lastKey,
      ]),
      [
        ["2026-11-21T10:00:00.000Z", "10", 2, 1, 2, 2, 100_000, 200_000],
        [
          "2026-11-21T10:01:00.000Z",
          "0.1000000000000000055511151231257827021181583404541015625",
          1,
          1,
          2.5,
          2.5,
          300_000,
          300_000,
        ],
      ],
    );
    const [hour] = partials.filter((p) => p.resolution === 3600);
    assert.equal(hour?.trades, 3);
    assert.equal(hour?.close, 2.5);
    assert.equal(hour?.volumeUsd, "10.1000000000000000055511151231257827021181583404541015625");
  });

  it("each token's buckets: its own side and its series price", () => {
    const partials = bucketPartials(trades, "token").filter((p) => p.resolution === 3600);
    const t0 = partials.find((p) => p.owner === "0xt0");
    const t1 = partials.find((p) => p.owner === "0xt1");
    assert.deepEqual([t0?.buys, t0?.open, t0?.close], [2, 3, 3], "token0 left the pool twice");
    assert.deepEqual([t1?.buys, t1?.open, t1?.close], [1, 1.5, 1.5], "token1 left the pool once");
  });

  it("makers' latest trades", () => {
    const lasts = makerLasts(trades, "token");
    assert.deepEqual(lasts.map((m) => [m.owner, m.maker, m.block]).sort(), [
      ["0xt0", "0xm1", 3],
      ["0xt0", "0xm2", 2],
      ["0xt1", "0xm1", 3],
      ["0xt1", "0xm2", 2],
    ]);
  });

  it("figures: sells = trades − buys, change from before the window, else from its first trade", () => {
    const sums = { volumeUsd: 5, trades: 4, buys: 1, makers: 2 };
    const [a, b] = windowFigures({
      owner: "x",
      sums: [sums, sums],
      before: [100, null],
      firstIn: [90, 80],
      last: 110,
      firstTradeAt: 0,
    });
    assert.equal(a?.sells, 3);
    assert.equal(a?.priceChange, (110 / 100 - 1) * 100, "from the price before the window");
    assert.equal(b?.priceChange, (110 / 80 - 1) * 100, "from the window's first trade");
  });
});

describe("what a backfill's old trades need not write (countedFrom)", () => {
  const HOUR = 3_600_000;
  const fold = Date.parse("2026-11-27T17:43:21.500Z");
  // Three days of trades up to the fold's clock, a few a minute around the horizon, by 5 makers.
  const random = seededRandom(5);
  const trades: WindowTrade[] = [];
  for (let time = fold - 3 * 24 * HOUR, i = 0; time <= fold; i++) {
    trades.push(
      trade({
        blockNumber: i + 1,
        time,
        maker: `0xm${Math.floor(random() * 5)}`,
        pool: random() < 0.5 ? "0xpool" : "0xother",
        price: random() < 0.1 ? null : 1 + random(),
      }),
    );
    time += Math.abs(time - (fold - 25 * HOUR)) < 3 * HOUR ? 7_000 : 600_000 * random();
  }

  it("is hour-aligned, at least an hour before every window's start, and never goes back", () => {
    for (let now = fold; now < fold + 3 * HOUR; now += 7 * 60_000 + 13_000) {
      const from = countedFrom(now);
      assert.equal(from % HOUR, 0);
      for (const span of windowSpans(now)) assert.ok(from <= span.start - HOUR, iso(now));
      assert.ok(countedFrom(now + 1_000) >= from);
    }
  });

  it("leaves out only hour buckets and makers that no window of then or later counts", () => {
    const from = countedFrom(fold);
    assert.ok(trades.some((t) => t.time < from) && trades.some((t) => t.time >= from));
    for (const kind of ["pool", "token"] as const) {
      const all = bucketPartials(trades, kind);
      const kept = bucketPartials(trades, kind, from);
      const id = (p: { owner: string; resolution: number; bucket: number }) =>
        `${p.owner}|${p.resolution}|${p.bucket}`;
      const keptById = new Map(kept.map((p) => [id(p), p]));
      // Every minute bucket (their prices stay: the price before a window, the first trade), and
      // the hour buckets from `from` on, whole.
      for (const p of all) {
        if (p.resolution === 60 || p.bucket >= from) assert.deepEqual(keptById.get(id(p)), p, id(p));
        else {
          assert.equal(keptById.has(id(p)), false, id(p));
          // Before the hours of any window, at the fold's clock or later.
          assert.ok(p.bucket + HOUR <= (windowSpans(fold)[3]?.hoursFrom ?? 0), id(p));
        }
      }
      assert.ok(kept.length < all.length);
      const makers = makerLasts(trades, kind, from);
      const allMakers = makerLasts(trades, kind);
      const key = (m: { owner: string; maker: string }) => `${m.owner}|${m.maker}`;
      const keptMakers = new Map(makers.map((m) => [key(m), m]));
      for (const m of allMakers) {
        // A maker's latest trade is the same when it is counted; otherwise it is before every window.
        if (m.time >= from) assert.deepEqual(keptMakers.get(key(m)), m);
        else assert.ok(!keptMakers.has(key(m)) && m.time < (windowSpans(fold)[3]?.start ?? 0));
      }
    }
  });
});
