import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../_test/random.js";
import { ratio, ratioValue } from "../exact/ratio.js";
import { lazyUsdPrices, pricesOfTokens } from "./lazy-prices.js";
import {
  computeUsdPrices,
  createRoutingGraph,
  type GraphPool,
  newestOfPools,
  type ReferenceTokens,
  type RoutingGraph,
  withUnpriced,
} from "./usd-prices.js";

const reference: ReferenceTokens = {
  stablecoins: ["usdc", "usdt"],
  wrappedNative: "weth",
  wrappedBtc: ["wbtc"],
  others: ["ref2"],
};
const options = { liquidityFloorUsd: 10_000, maxDeviation: 0.1 };
const REFS = ["usdc", "usdt", "weth", "wbtc", "ref2"];
const USD: Record<string, number> = { usdc: 1, usdt: 1, weth: 3000, wbtc: 60_000, ref2: 12 };

/**
 * A random market: reference tokens among themselves, tokens against references and against
 * each other (chains several hops long, rings, thin and deep pools, pools without a price or a
 * depth, tokens with unknown decimals), exact spot prices of random integers.
 */
function randomGraph(seed: number, tokens: number, pools: number): RoutingGraph {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const names = Array.from({ length: tokens }, (_, i) => `t${i}`);
  const usd = (t: string) => USD[t] ?? 10 ** (random() * 6 - 3);
  const list: GraphPool[] = [];
  const add = (a: string, b: string) => {
    const [token0, token1] = a < b ? [a, b] : [b, a];
    const fair = usd(token0) / usd(token1);
    // A price near the fair one, sometimes far off (a manipulated or stale pool).
    const off = random() < 0.1 ? 10 ** (random() * 4 - 2) : 1 + (random() - 0.5) * 0.1;
    const scale = 10n ** 18n;
    const num = BigInt(Math.max(1, Math.round(fair * off * 1e12))) * scale;
    const den = 10n ** 12n * scale + BigInt(Math.floor(random() * 1e9));
    const r0 = ratio(num, den);
    const depthUsd = 10 ** (random() * 7);
    const hollow = random();
    list.push({
      address: `p${list.length.toString().padStart(5, "0")}`,
      dex: random() < 0.5 ? "v2" : "v3",
      token0,
      token1,
      price0: hollow < 0.03 ? null : ratioValue(r0),
      ratio0: hollow < 0.03 ? null : r0,
      depth0: hollow > 0.97 ? null : depthUsd / usd(token0),
      depth1: depthUsd / usd(token1),
      stateBlock: Math.floor(random() * 1000),
      stateTime: Math.floor(random() * 1e6),
    });
  };
  // Reference tokens: the anchors with WETH and WBTC, WBTC with WETH, a fifth reference often thin.
  add("usdc", "weth");
  add("usdt", "weth");
  add("wbtc", "usdc");
  add("wbtc", "weth");
  if (random() < 0.7) add("ref2", pick(REFS));
  for (let i = 0; i < pools; i++) {
    const a = pick(names);
    const u = random();
    // Tokens against references, against each other (chains and rings), a few of a token with itself.
    const b = u < 0.45 ? pick(REFS) : u < 0.98 ? pick(names) : a;
    add(a, b);
  }
  const decimals = new Map<string, number | null>();
  for (const p of list) for (const t of [p.token0, p.token1]) decimals.set(t, random() < 0.03 ? null : 18);
  return createRoutingGraph(decimals, list);
}

describe("lazyUsdPrices: the full walk's prices, a few tokens at a time", () => {
  it("gives every priced token the full walk's entry, bit for bit, and never prices an unpriced one", () => {
    let priced = 0;
    let unpricedSettled = 0;
    let gaveUp = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const tokens = 20 + (seed % 7) * 15;
      const graph = randomGraph(seed, tokens, Math.round(tokens * (0.8 + (seed % 5) * 0.4)));
      const full = computeUsdPrices(graph, reference, options, undefined, true);
      const kept = { ...graph, newestOf: newestOfPools(graph.poolsOf) };
      for (const token of graph.poolsOf.keys()) {
        const lazy = lazyUsdPrices(graph, reference, options, [token], { rounds: 64, poolVisits: 1e7 });
        // A graph that keeps its tokens' newest states (as the market's does) walks phase 1 over
        // the reference tokens' pools among themselves only: the same entries.
        assert.deepStrictEqual(
          lazyUsdPrices(kept, reference, options, [token], { rounds: 64, poolVisits: 1e7 }),
          lazy,
          `seed ${seed}: ${token} with newestOf`,
        );
        const expected = full.get(token);
        if (expected) {
          assert.ok(lazy, `seed ${seed}: ${token} priced by the full walk, lazy gave up`);
          assert.deepStrictEqual(lazy.get(token), expected, `seed ${seed}: ${token}`);
          priced += 1;
        } else if (lazy) {
          assert.equal(lazy.get(token), undefined, `seed ${seed}: ${token} unpriced by the full walk`);
          unpricedSettled += 1;
        } else {
          gaveUp += 1;
        }
        // Whatever else the lazy walk priced on the way is the full walk's entry too.
        for (const [other, price] of lazy ?? [])
          assert.deepStrictEqual(price, full.get(other), `seed ${seed}: ${other}`);
      }
    }
    // The cases exist: priced tokens in several layers, unpriced ones settled.
    assert.ok(priced > 1000, `priced ${priced}`);
    assert.ok(unpricedSettled > 100, `settled unpriced ${unpricedSettled}, gave up ${gaveUp}`);
  });

  it("reaches tokens several rounds from the references", () => {
    const graph = randomGraph(7, 60, 90);
    const full = computeUsdPrices(graph, reference, options, undefined, true);
    const deepest = Math.max(...[...full.values()].map((p) => p.layer ?? 0));
    const referenceLayer = Math.max(...REFS.map((t) => full.get(t)?.layer ?? 0));
    assert.ok(deepest >= referenceLayer + 3, `deepest layer ${deepest}, references ${referenceLayer}`);
    // Every priced token at once (an unpriced ring among them could not be settled: null).
    const lazy = lazyUsdPrices(graph, reference, options, full.keys());
    assert.ok(lazy);
    assert.deepStrictEqual(lazy, full);
  });

  it("gives up (null) on a ring that nothing prices, and within the budget", () => {
    const ring: GraphPool[] = ["a", "b", "c"].map((t, i, all) => ({
      address: `ring${i}`,
      dex: "v2",
      token0: t,
      token1: all[(i + 1) % all.length] as string,
      price0: 1,
      depth0: 1e6,
      depth1: 1e6,
      stateBlock: 1,
      stateTime: 1,
    }));
    const anchor: GraphPool = {
      ...(ring[0] as GraphPool),
      address: "anchor",
      token0: "usdc",
      token1: "weth",
    };
    const pools = [anchor, ...ring];
    const decimals = new Map(["a", "b", "c", "usdc", "weth"].map((t) => [t, 18] as const));
    const graph = createRoutingGraph(decimals, pools);
    assert.equal(lazyUsdPrices(graph, reference, options, ["a"]), null);
    assert.equal(lazyUsdPrices(graph, reference, options, ["a"], { rounds: 12, poolVisits: 5 }), null);
    // The full walk agrees that the ring is not priced.
    assert.equal(computeUsdPrices(graph, reference, options, undefined, true).get("a"), undefined);
  });

  it("pricesOfTokens: each asked token's entry of the full map, priced or not (why, below-the-floor count), and only theirs", () => {
    let unpriced = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const tokens = 20 + (seed % 7) * 15;
      const graph = randomGraph(seed, tokens, Math.round(tokens * (0.8 + (seed % 5) * 0.4)));
      const full = withUnpriced(graph, options, computeUsdPrices(graph, reference, options, undefined, true));
      const all = [...graph.poolsOf.keys()];
      const random = seededRandom(seed);
      for (let i = 0; i < 20; i++) {
        const asked = all.filter(() => random() < 0.1);
        const got = pricesOfTokens(graph, reference, options, asked);
        assert.deepStrictEqual([...got.keys()].sort(), [...asked].sort(), `seed ${seed}`);
        for (const token of asked) {
          assert.deepStrictEqual(got.get(token), full.get(token), `seed ${seed}: ${token}`);
          if (got.get(token)?.usdPrice === null) unpriced += 1;
        }
      }
    }
    assert.ok(unpriced > 100, `unpriced entries compared: ${unpriced}`);
  });
});
