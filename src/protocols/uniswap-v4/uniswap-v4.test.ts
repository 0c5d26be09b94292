import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildBlock, logWriter, publishedTopic, testToken, user } from "../../_test/family-logs.js";
import { tradeRecord } from "../../api/trade-records.js";
import type { Hex, RawLog } from "../../decode/types.js";
import { NATIVE_COIN, nativeCoin } from "../../model/index.js";
import { graphPoolOf } from "../../pricing/market-state.js";
import type { RpcClient } from "../../rpc/client.js";
import { poolFromCreation } from "../../sync/pools.js";
import { readTokens } from "../../sync/tokens.js";
import { familyOf } from "../index.js";
import { liquidityAmounts, MAX_TICK, MIN_TICK, sqrtPriceAtTick } from "../tick-math.js";
import { v4Topics } from "./abi.js";
import { decodeV4Creation, decodeV4Log, hookRewritesAmounts, uniswapV4 } from "./index.js";

const manager = "0x000000000004444c5dc75cb358380d2e3de08a90" as Hex;
const native = "0x0000000000000000000000000000000000000000" as Hex;
const usdc = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48" as Hex;
const router = "0x66a9893cc07d91d95644aedd05d03f95e1dba8af" as Hex;
const poolId = "0x21c67e77068de97969ba93d4aab21826d33ca12bb9f565d8496e8fda8a82ca27" as Hex;
const noHooks = native;

/**
 * The PoolManager's events as v4-core publishes them (`src/interfaces/IPoolManager.sol`), written
 * here again so that the family's own texts are checked, not reused.
 */
const published = {
  Initialize:
    "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)",
  ModifyLiquidity:
    "event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)",
  Swap: "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)",
  Donate: "event Donate(bytes32 indexed id, address indexed sender, uint256 amount0, uint256 amount1)",
} as const;

const writeLog = logWriter();
/** A log of one of the published events, encoded with viem's ABI encoder. */
const encode = (
  name: keyof typeof published,
  args: Record<string, unknown>,
  address = manager,
  tx = "0x01",
) => writeLog(published[name], args, address, tx);

/** An Initialize's arguments: a dynamic-fee pool of ETH and USDC at price 1 (raw). */
const initArgs = (hooks: Hex = noHooks, id: Hex = poolId) => ({
  id,
  currency0: native,
  currency1: usdc,
  fee: 0x800000,
  tickSpacing: 60,
  hooks,
  sqrtPriceX96: 2n ** 96n,
  tick: 0,
});
const initialize = (hooks: Hex = noHooks, id: Hex = poolId) => encode("Initialize", initArgs(hooks, id));

describe("Uniswap V4 decoding", () => {
  it("has the topics of the published signature texts", () => {
    for (const name of ["Initialize", "ModifyLiquidity", "Swap", "Donate"] as const) {
      assert.equal(v4Topics[`v4${name}`], publishedTopic(published[name]), name);
    }
    assert.equal(
      publishedTopic(published.Swap),
      "0x40e9cecb9f5f1f1c5b9c97dec2917b7ee92e57ba5563708daca94dd84ad7112f",
      "the Swap topic0 that mainnet's PoolManager logs carry",
    );
    assert.deepEqual(uniswapV4.poolTopics("uniswap"), [
      publishedTopic(published.Initialize),
      publishedTopic(published.Swap),
      publishedTopic(published.ModifyLiquidity),
      publishedTopic(published.Donate),
    ]);
  });

  it("decodes Initialize as a new pool named by its PoolId, the manager its factory, native ETH a currency", () => {
    const hooks = "0x0000000000000000000000000000000000001088" as Hex;
    const log = initialize(hooks);
    assert.deepEqual(decodeV4Log(log), { type: "v4-initialize", ...initArgs(hooks) });
    assert.deepEqual(decodeV4Creation(log), {
      factory: manager,
      pool: poolId,
      token0: native,
      token1: usdc,
      fee: 0x800000,
      tickSpacing: 60,
      hooks,
      blockNumber: 2,
      logIndex: log.logIndex,
    });
    assert.equal(
      familyOf("v4").decodeCreation(
        encode("Donate", { id: poolId, sender: router, amount0: 1n, amount1: 2n }),
      ),
      null,
    );
  });

  it("decodes Swap (negative int128 amounts, dynamic fee), ModifyLiquidity and Donate", () => {
    const swapArgs = {
      id: poolId,
      sender: router,
      amount0: -(10n ** 18n),
      amount1: 3_000_000_000n,
      sqrtPriceX96: 4_339_505_179_874_779_489_431_521n,
      liquidity: 10n ** 20n,
      tick: -887_000 + 12_345,
      fee: 3000,
    };
    const swap = encode("Swap", swapArgs);
    assert.deepEqual(decodeV4Log(swap), { type: "v4-swap", ...swapArgs });
    const modify = {
      id: poolId,
      sender: router,
      tickLower: -120,
      tickUpper: 60,
      liquidityDelta: -(10n ** 15n),
      salt: `0x${"ab".repeat(32)}` as Hex,
    };
    assert.deepEqual(decodeV4Log(encode("ModifyLiquidity", modify)), {
      type: "v4-modify-liquidity",
      ...modify,
    });
    const donate = { id: poolId, sender: router, amount0: 5n, amount1: 7n };
    assert.deepEqual(decodeV4Log(encode("Donate", donate)), { type: "v4-donate", ...donate });
    const truncated = { ...swap, data: swap.data.slice(0, -64) as Hex };
    assert.equal(decodeV4Log(truncated), null, "a Swap without its last word is not decoded");
  });

  it("reads the hook's return-delta permissions from the low bits of its address", () => {
    const hook = (bits: number) => `0x${"00".repeat(18)}${bits.toString(16).padStart(4, "0")}` as Hex;
    assert.equal(hookRewritesAmounts(hook(0)), false);
    assert.equal(hookRewritesAmounts(hook((1 << 7) | (1 << 6))), false, "beforeSwap and afterSwap alone");
    assert.equal(hookRewritesAmounts(hook(1 << 3)), true, "beforeSwapReturnDelta");
    assert.equal(hookRewritesAmounts(hook(1 << 2)), true, "afterSwapReturnDelta");
    assert.equal(hookRewritesAmounts(hook(1 << 1)), true, "afterAddLiquidityReturnDelta");
    assert.equal(hookRewritesAmounts(hook(1 << 0)), true, "afterRemoveLiquidityReturnDelta");
    assert.equal(hookRewritesAmounts(hook(0x2000)), false, "beforeInitialize (bit 13)");
  });
});

describe("tick math", () => {
  it("gives the published bounds and the price of tick 0", () => {
    assert.equal(sqrtPriceAtTick(0), 2n ** 96n);
    assert.equal(sqrtPriceAtTick(MIN_TICK), 4295128739n, "TickMath.MIN_SQRT_PRICE");
    assert.equal(
      sqrtPriceAtTick(MAX_TICK),
      1461446703485210103287273052203988822378723970342n,
      "TickMath.MAX_SQRT_PRICE",
    );
  });

  it("moves the principal of a liquidity change: one rounding of the exact quotient, up when adding, down when removing", () => {
    const l = 10n ** 18n + 7n;
    const [lower, upper] = [-120, 180];
    const sl = sqrtPriceAtTick(lower);
    const su = sqrtPriceAtTick(upper);
    const sp = 2n ** 96n + 12_345_678_901n;
    const ceil = (a: bigint, b: bigint) => (a + b - 1n) / b;
    // amount0 = L·2^96·(sqrtB − sqrtA) / (sqrtB·sqrtA), amount1 = L·(sqrtB − sqrtA) / 2^96.
    const a0 = (a: bigint, b: bigint) => [l * 2n ** 96n * (b - a), b * a] as const;
    const a1 = (a: bigint, b: bigint) => [l * (b - a), 2n ** 96n] as const;
    assert.deepEqual(liquidityAmounts(sp, 0, lower, upper, l), {
      amount0: ceil(...a0(sp, su)),
      amount1: ceil(...a1(sl, sp)),
    });
    assert.deepEqual(liquidityAmounts(sp, 0, lower, upper, -l), {
      amount0: -(a0(sp, su)[0] / a0(sp, su)[1]),
      amount1: -(a1(sl, sp)[0] / a1(sl, sp)[1]),
    });
    assert.deepEqual(
      liquidityAmounts(sp, -121, lower, upper, l),
      { amount0: ceil(...a0(sl, su)), amount1: 0n },
      "below: token0 only",
    );
    assert.deepEqual(
      liquidityAmounts(sp, 180, lower, upper, l),
      { amount0: 0n, amount1: ceil(...a1(sl, su)) },
      "at the upper tick: token1 only",
    );
  });
});

describe("buildBatch with a V4 pool", () => {
  const tokens = new Map([testToken(native, "ETH", 18, "Ether"), testToken(usdc, "USDC", 6, "USD Coin")]);
  const dex = { name: "Uniswap V4", protocol: "v4", factory: manager, swapEvent: "uniswap" } as const;

  function build(logs: RawLog[], hooks: Hex = noHooks) {
    const creation = decodeV4Creation(initialize(hooks)) as NonNullable<ReturnType<typeof decodeV4Creation>>;
    const pool = poolFromCreation({ ...creation, blockNumber: 1 }, dex, null);
    const pools = new Map([[poolId, pool]]);
    return buildBlock({ logs, pools, tokens, txs: ["0x01", "0x02"], from: user, to: router });
  }

  it("finds the pool by its PoolId, tracks its balances from its own events and lists swaps from the swapper's deltas", () => {
    const l = 10n ** 18n;
    const expected = liquidityAmounts(2n ** 96n, 0, -600, 600, l);
    const swapPrice = 2n ** 96n - 2n ** 80n;
    const built = build([
      initialize(),
      encode("ModifyLiquidity", {
        id: poolId,
        sender: router,
        tickLower: -600,
        tickUpper: 600,
        liquidityDelta: l,
        salt: `0x${"00".repeat(32)}`,
      }),
      encode(
        "Swap",
        {
          id: poolId,
          sender: router,
          amount0: -(10n ** 15n),
          amount1: 999_000n,
          sqrtPriceX96: swapPrice,
          liquidity: l,
          tick: -1,
          fee: 500,
        },
        manager,
        "0x02",
      ),
      encode("Donate", { id: poolId, sender: router, amount0: 3n, amount1: 4n }, manager, "0x02"),
      // Another contract's log naming the same id is not the pool's.
      encode("Donate", { id: poolId, sender: router, amount0: 100n, amount1: 100n }, usdc, "0x02"),
    ]);
    assert.deepEqual(
      built.poolEvents.map((e) => [e.kind, e.amount0, e.amount1, e.liquidityDelta]),
      [
        ["initialize", null, null, null],
        ["mint", expected.amount0, expected.amount1, l],
        ["donate", 3n, 4n, null],
      ],
    );
    assert.equal(built.swaps.length, 1);
    const swap = built.swaps[0];
    assert.equal(swap?.pool, poolId);
    assert.deepEqual(
      [swap?.amount0In, swap?.amount1In, swap?.amount0Out, swap?.amount1Out],
      [10n ** 15n, 0n, 0n, 999_000n],
      "the swapper paid ETH (negative delta) and received USDC",
    );
    assert.equal(swap?.maker, user);
    assert.equal(swap?.reserve0, expected.amount0 + 10n ** 15n);
    assert.equal(swap?.reserve1, expected.amount1 - 999_000n);
    const state = built.states.get(poolId);
    assert.equal(state?.reserve0, expected.amount0 + 10n ** 15n + 3n);
    assert.equal(state?.reserve1, expected.amount1 - 999_000n + 4n);
    assert.equal(state?.sqrtPriceX96, swapPrice);
    assert.equal(state?.liquidity, l);
  });

  it("marks a pool whose hook can return deltas", () => {
    assert.equal(uniswapV4.rewritesAmounts({ hooks: `0x${"00".repeat(19)}08` as Hex }), true);
    assert.equal(uniswapV4.rewritesAmounts({ hooks: noHooks }), false);
    assert.equal(familyOf("v3").rewritesAmounts({}), false);
  });
});

describe("pricing of a V4 pool", () => {
  it("routes a pool without delta hooks at its exact spot price, and gives a return-delta hook pool no price nor depth", () => {
    const state = {
      reserve0: 10n ** 21n,
      reserve1: 3n * 10n ** 12n,
      sqrtPriceX96: 2n ** 96n * 3n,
      swapBlock: null,
      preSwapReserve0: null,
      preSwapReserve1: null,
      stateBlock: 5,
      stateLogIndex: 1,
      stateTime: 1_700_000_000_000,
    };
    const pool = {
      address: poolId,
      dex: "Uniswap V4",
      protocol: "v4",
      token0: native,
      token1: usdc,
      state,
    } as const;
    const decimals = new Map([
      [native, 18],
      [usdc, 6],
    ]);
    const plain = graphPoolOf({ ...pool, hooks: noHooks, parameters: null }, decimals);
    assert.equal(
      plain.price0,
      9e12,
      "(3·2^96 / 2^96)² · 10^(18 − 6): 9 raw USDC units per wei is 9e12 USDC per ETH",
    );
    assert.equal(plain.depth0, 1000);
    assert.equal(plain.depth1, 3_000_000);
    const hooked = graphPoolOf({ ...pool, hooks: `0x${"00".repeat(19)}0c`, parameters: null }, decimals);
    assert.deepEqual([hooked.price0, hooked.ratio0, hooked.depth0, hooked.depth1], [null, null, null, null]);
  });
});

describe("the native coin", () => {
  it("is a token of its own: the chain's native symbol and name, 18 decimals, no supply", () => {
    assert.equal(NATIVE_COIN, native);
    assert.deepEqual(nativeCoin(1), {
      address: native,
      name: "Ether",
      symbol: "ETH",
      decimals: 18,
      totalSupply: null,
    });
    assert.deepEqual(nativeCoin(56), {
      address: native,
      name: "BNB",
      symbol: "BNB",
      decimals: 18,
      totalSupply: null,
    });
    assert.equal(nativeCoin(137).symbol, "POL");
    assert.equal(nativeCoin(31337, "ETH").name, "Ether");
    assert.deepEqual([nativeCoin(8453, "XYZ").symbol, nativeCoin(8453, "XYZ").name], ["XYZ", "XYZ"]);
  });

  it("is answered without a call to the node among the tokens read", async () => {
    const noNode = new Proxy({} as RpcClient, {
      get: (_target, name) => () => {
        throw new Error(`the node was asked (${String(name)})`);
      },
    });
    assert.deepEqual(await readTokens(noNode, [native], "latest", { native: nativeCoin(1) }), [
      nativeCoin(1),
    ]);
  });
});

describe("trades of a V4 pool in the API", () => {
  it("carry hook_may_rewrite_amounts only where the pool's hook may return deltas", () => {
    const pool = {
      chain_id: 1,
      address: poolId,
      dex: "Uniswap V4",
      factory: manager,
      token0: native,
      token1: usdc,
      reserve0: null,
      reserve1: null,
      symbol0: "ETH",
      symbol1: "USDC",
      decimals0: 18,
      decimals1: 6,
      usd_price0: null,
      usd_price1: 1,
      volume_usd_24h: null,
      liquidity_usd: null,
      price_change_24h: null,
      protocol: "v4",
    };
    const swap = {
      block_number: 2,
      log_index: 3,
      block_time: new Date(1_700_000_000_000),
      tx_hash: `0x${"01".repeat(32)}`,
      maker: user,
      exchange: router,
      amount0_in: "1000000000000000",
      amount1_in: "0",
      amount0_out: "0",
      amount1_out: "3000000",
      reserve0: null,
      reserve1: null,
      token0_usd: null,
      token1_usd: 1,
      volume_usd: 3,
    };
    const plain = tradeRecord({ ...pool, hooks: noHooks }, swap, true);
    assert.equal("hook_may_rewrite_amounts" in plain, false);
    assert.equal(plain.pair_id, `${poolId}:1`);
    assert.equal(plain.pair_address, poolId);
    assert.equal(plain.side, "sell");
    const hooked = tradeRecord({ ...pool, hooks: `0x${"00".repeat(19)}04` }, swap, true);
    assert.deepEqual(hooked, { ...plain, hook_may_rewrite_amounts: true });
  });
});
