/**
 * A market on the synthetic chain (synthetic-chain.ts) for the storage tests and benchmark: USDC
 * and WETH, `tokens` further tokens each with a pool against WETH (every third also against
 * USDC, every fifth a V3-like pool), and trading block after block with the pools chosen by a
 * Zipf-like law (a few busy pools, a long tail of quiet ones), as on a real chain.
 */
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing, type Pricing } from "../pricing/pricing.js";
import { seededRandom } from "./random.js";
import { createSyntheticChain, type SyntheticChain } from "./synthetic-chain.js";

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;

export type SyntheticMarket = {
  chain: SyntheticChain;
  usdc: Hex;
  weth: Hex;
  /** Every pool, busiest first (the order of the Zipf weights). */
  pools: Hex[];
  /**
   * Mines `blocks` blocks `blockSeconds` apart, each with `swapsPerBlock` swaps (a fraction: that
   * many on average) in pools drawn by weight; `skip` pools are never drawn.
   */
  trade(options: {
    blocks: number;
    swapsPerBlock: number;
    blockSeconds: number;
    skip?: ReadonlySet<Hex>;
  }): void;
  /** The pricing stage of this chain, its statistics as of `now()`. */
  pricing(now: () => Date): Pricing;
};

/** A new market whose first block is at `startTime` (seconds), pools and liquidity in that block. */
export function createSyntheticMarket(options: {
  chainId: number;
  startTime: number;
  tokens: number;
  seed: number;
}): SyntheticMarket {
  const random = seededRandom(options.seed);
  const chain = createSyntheticChain({ chainId: options.chainId, startTime: options.startTime });
  const usdc = chain.token("USDC", 6);
  const weth = chain.token("WETH", 18);
  const pools: Hex[] = [];
  const main = chain.pool(usdc, weth);
  chain.mint(main, { [usdc]: 30_000_000n * E6, [weth]: 10_000n * E18 });
  pools.push(main);
  for (let i = 0; i < options.tokens; i++) {
    const token = chain.token(`T${i}`, 18);
    const pool = chain.pool(token, weth, { protocol: i % 5 === 4 ? "v3" : "v2" });
    chain.mint(pool, { [token]: BigInt(1000 + i) * 1000n * E18, [weth]: BigInt(50 + (i % 40)) * E18 });
    pools.push(pool);
    if (i % 3 === 0) {
      const usd = chain.pool(token, usdc);
      chain.mint(usd, {
        [token]: BigInt(1000 + i) * 100n * E18,
        [usdc]: BigInt(15_000 + 100 * (i % 40)) * E6 * 10n,
      });
      pools.push(usd);
    }
  }
  // Zipf-like weights over a shuffled pool order (Fisher–Yates): weight 1 / rank.
  const order = [...pools];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as Hex, order[i] as Hex];
  }
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 0; rank < order.length; rank++) {
    total += 1 / (rank + 1);
    cumulative.push(total);
  }
  const draw = (): Hex => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return order[lo] as Hex;
  };
  chain.mine(12);

  return {
    chain,
    usdc,
    weth,
    pools: order,
    trade({ blocks, swapsPerBlock, blockSeconds, skip }) {
      for (let b = 0; b < blocks; b++) {
        const whole = Math.floor(swapsPerBlock);
        const n = whole + (random() < swapsPerBlock - whole ? 1 : 0);
        for (let i = 0; i < n; i++) {
          const pool = draw();
          if (skip?.has(pool)) continue;
          const r = chain.reserves(pool);
          const zeroIn = random() < 0.5;
          // 0.001 % to 0.5 % of the side's reserve: prices wander without draining a pool.
          const amount =
            ((zeroIn ? r.reserve0 : r.reserve1) * BigInt(1 + Math.floor(random() * 500))) / 100_000n;
          if (amount > 0n) chain.swap(pool, zeroIn ? r.token0 : r.token1, amount);
        }
        chain.mine(blockSeconds);
      }
    },
    pricing: (now) =>
      createPricing({
        config: {
          pricing: { liquidityFloorUsd: 10_000, maxDeviation: 0.1 },
          chains: [
            {
              id: options.chainId,
              referenceTokens: { stablecoins: [usdc], wrappedNative: weth, wrappedBtc: [], others: [] },
            },
          ],
        },
        logger: createSilentLogger(),
        now,
      }),
  };
}
