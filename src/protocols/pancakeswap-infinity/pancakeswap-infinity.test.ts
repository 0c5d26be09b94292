import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildBlock, logWriter, publishedTopic, testToken, user } from "../../_test/family-logs.js";
import type { Hex } from "../../decode/types.js";
import { ratioToNumber } from "../../exact/ratio.js";
import { poolFromCreation } from "../../sync/pools.js";
import { familyOf } from "../index.js";
import { infinityTopics } from "./abi.js";
import {
  binPriceRatio,
  binStepOf,
  clTickSpacing,
  decodeBinCreation,
  decodeBinLog,
  decodeClCreation,
  decodeClLog,
  infinityRewritesAmounts,
} from "./index.js";

const clManager = "0xa0ffb9c1ce1fe56963b0321b32e7a0302114058b" as Hex;
const binManager = "0xc697d2898e0d09264376196696c51d7abbbaa4a9" as Hex;
const native = "0x0000000000000000000000000000000000000000" as Hex;
const usdt = "0x55d398326f99059ff775485246999027b3197955" as Hex;
const router = "0x1b81d678ffb9c0263b24a97847620c99d213eb14" as Hex;
const poolId = `0x${"5a".repeat(32)}` as Hex;
/** No hook (the zero address). */
const hooks = native;
const word = (value: bigint) => `0x${value.toString(16).padStart(64, "0")}` as Hex;

/** PancakeSwap Infinity's manager events as its interfaces (ICLPoolManager, IBinPoolManager) declare them. */
const published = {
  clInitialize:
    "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, address hooks, uint24 fee, bytes32 parameters, uint160 sqrtPriceX96, int24 tick)",
  clSwap:
    "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee, uint16 protocolFee)",
  binInitialize:
    "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, address hooks, uint24 fee, bytes32 parameters, uint24 activeId)",
  binSwap:
    "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint24 activeId, uint24 fee, uint16 protocolFee)",
  binMint:
    "event Mint(bytes32 indexed id, address indexed sender, uint256[] ids, bytes32 salt, bytes32[] amounts, bytes32 compositionFee, bytes32 feeToProtocol)",
  binBurn:
    "event Burn(bytes32 indexed id, address indexed sender, uint256[] ids, bytes32 salt, bytes32[] amounts)",
} as const;

const encode = logWriter();

describe("PancakeSwap Infinity CL", () => {
  it("has the topics of the published signature texts and decodes Initialize and Swap", () => {
    assert.equal(infinityTopics.clInitialize, publishedTopic(published.clInitialize));
    assert.equal(infinityTopics.clSwap, publishedTopic(published.clSwap));
    // Hook permissions 0x0c00 (before/after swap return delta), tick spacing 10 at bits 16–39.
    const parameters = word((10n << 16n) | 0x0c00n);
    const init = encode(
      published.clInitialize,
      {
        id: poolId,
        currency0: native,
        currency1: usdt,
        hooks,
        fee: 2500,
        parameters,
        sqrtPriceX96: 2n ** 96n * 25n,
        tick: 64_377,
      },
      clManager,
    );
    assert.equal(clTickSpacing(parameters), 10);
    assert.deepEqual(decodeClCreation(init), {
      factory: clManager,
      pool: poolId,
      token0: native,
      token1: usdt,
      fee: 2500,
      tickSpacing: 10,
      hooks,
      parameters,
      blockNumber: 2,
      logIndex: init.logIndex,
    });
    assert.equal(infinityRewritesAmounts({ parameters }), true);
    assert.equal(
      infinityRewritesAmounts({ parameters: word((10n << 16n) | 0x00c0n) }),
      false,
      "before/after swap without deltas",
    );
    const swapArgs = {
      id: poolId,
      sender: router,
      amount0: -(10n ** 18n),
      amount1: 620n * 10n ** 18n,
      sqrtPriceX96: 2n ** 96n * 24n,
      liquidity: 10n ** 22n,
      tick: 63_565,
      fee: 2500,
    };
    const swap = encode(published.clSwap, { ...swapArgs, protocolFee: 320 }, clManager);
    assert.deepEqual(decodeClLog(swap), { type: "v4-swap", ...swapArgs }, "the protocol fee is not kept");
    assert.equal(familyOf("v4").decodeLog(swap, "uniswap"), null, "not a Uniswap V4 Swap");
  });
});

describe("PancakeSwap Infinity Bin", () => {
  const binStep = 25;
  const parameters = word(BigInt(binStep) << 16n);
  const activeId = (1 << 23) + 100;

  it("has the topics of the published signature texts and decodes Initialize, Swap, Mint and Burn", () => {
    for (const name of ["binInitialize", "binSwap", "binMint", "binBurn"] as const) {
      assert.equal(infinityTopics[name], publishedTopic(published[name]), name);
    }
    const init = encode(
      published.binInitialize,
      { id: poolId, currency0: native, currency1: usdt, hooks, fee: 1000, parameters, activeId },
      binManager,
    );
    assert.equal(binStepOf(parameters), binStep);
    assert.deepEqual(decodeBinCreation(init), {
      factory: binManager,
      pool: poolId,
      token0: native,
      token1: usdt,
      fee: 1000,
      tickSpacing: null,
      hooks,
      parameters,
      blockNumber: 2,
      logIndex: init.logIndex,
    });
    const packed = (a0: bigint, a1: bigint) => word(a0 | (a1 << 128n));
    const mint = encode(
      published.binMint,
      {
        id: poolId,
        sender: router,
        ids: [BigInt(activeId), BigInt(activeId + 1)],
        salt: word(0n),
        amounts: [packed(5n, 7n), packed(11n, 0n)],
        compositionFee: word(0n),
        feeToProtocol: word(0n),
      },
      binManager,
    );
    assert.deepEqual(decodeBinLog(mint), {
      type: "bin-mint",
      id: poolId,
      sender: router,
      bins: [activeId, activeId + 1],
      amount0: 16n,
      amount1: 7n,
    });
    const burn = encode(
      published.binBurn,
      { id: poolId, sender: router, ids: [BigInt(activeId)], salt: word(0n), amounts: [packed(2n, 3n)] },
      binManager,
    );
    assert.deepEqual(decodeBinLog(burn), {
      type: "bin-burn",
      id: poolId,
      sender: router,
      bins: [activeId],
      amount0: 2n,
      amount1: 3n,
    });
    const swapArgs = {
      id: poolId,
      sender: router,
      amount0: 4n,
      amount1: -9n,
      activeId: activeId - 1,
      fee: 1000,
    };
    const swap = encode(published.binSwap, { ...swapArgs, protocolFee: 0 }, binManager);
    assert.deepEqual(decodeBinLog(swap), { type: "bin-swap", ...swapArgs, protocolFee: 0 });
  });

  it("prices a bin exactly: (1 + binStep / 10,000)^(activeId − 2^23), decimal-adjusted", () => {
    assert.deepEqual(binPriceRatio(1 << 23, 25, 18, 18), { num: 10n ** 18n, den: 10n ** 18n });
    const up = binPriceRatio((1 << 23) + 3, 25, 18, 6);
    assert.equal(ratioToNumber(up.num, up.den), ratioToNumber(10025n ** 3n * 10n ** 12n, 10000n ** 3n));
    const down = binPriceRatio((1 << 23) - 2, 10, 6, 6);
    assert.equal(ratioToNumber(down.num, down.den), ratioToNumber(10000n ** 2n, 10010n ** 2n));
  });

  it("through buildBatch: balances from Mint and swaps, a trade at its active bin's price", () => {
    const tokens = new Map([testToken(native, "BNB", 18), testToken(usdt, "USDT", 18, "Tether USD")]);
    const dex = {
      name: "PancakeSwap Infinity Bin",
      protocol: "infinity-bin",
      factory: binManager,
      swapEvent: "uniswap",
    } as const;
    const init = encode(
      published.binInitialize,
      { id: poolId, currency0: native, currency1: usdt, hooks, fee: 1000, parameters, activeId },
      binManager,
    );
    const pool = poolFromCreation(
      decodeBinCreation(init) as NonNullable<ReturnType<typeof decodeBinCreation>>,
      dex,
      null,
    );
    const built = buildBlock({
      logs: [
        init,
        encode(
          published.binMint,
          {
            id: poolId,
            sender: router,
            ids: [BigInt(activeId)],
            salt: word(0n),
            amounts: [word(1000n | (2000n << 128n))],
            compositionFee: word(0n),
            feeToProtocol: word(0n),
          },
          binManager,
        ),
        encode(
          published.binSwap,
          { id: poolId, sender: router, amount0: -100n, amount1: 250n, activeId, fee: 1000, protocolFee: 0 },
          binManager,
        ),
      ],
      pools: new Map([[poolId, pool]]),
      tokens,
      txs: ["0x01"],
      from: user,
      to: router,
    });
    assert.deepEqual(
      built.poolEvents.map((e) => [e.kind, e.amount0, e.amount1]),
      [
        ["initialize", null, null],
        ["mint", 1000n, 2000n],
      ],
    );
    const swap = built.swaps[0];
    assert.deepEqual(
      [swap?.amount0In, swap?.amount1Out, swap?.tick, swap?.reserve0, swap?.reserve1],
      [100n, 250n, activeId, 1100n, 1750n],
    );
    assert.equal(swap?.price, ratioToNumber(10025n ** 100n, 10000n ** 100n));
  });
});
