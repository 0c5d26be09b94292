import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { encodeEventLog } from "../_test/encode-log.js";
import type { Hex, RawLog } from "../decode/types.js";
import { eventSignatures, topics } from "./abi.js";
import { decodePoolCreation } from "./factory-events.js";
import { decodePoolLog, decodeV2Log, decodeV3Log } from "./pool-events.js";

const alice = "0x00000000000000000000000000000000000a11ce";
const bob = "0x0000000000000000000000000000000000000b0b";

function rawLog(
  log: { topics: Hex[]; data: Hex },
  address: Hex = "0x1111111111111111111111111111111111111111",
): RawLog {
  return {
    ...log,
    address,
    blockNumber: 10,
    blockHash: "0xaa",
    transactionHash: "0xbb",
    transactionIndex: 0,
    logIndex: 3,
  };
}

describe("V2 pair events", () => {
  it("decodes Swap with indexed sender and to", () => {
    const log = encodeEventLog(eventSignatures.v2Swap, {
      sender: alice,
      amount0In: 10n ** 30n,
      amount1In: 0n,
      amount0Out: 0n,
      amount1Out: 123456789n,
      to: bob,
    });
    assert.deepEqual(decodeV2Log(log), {
      type: "v2-swap",
      sender: alice,
      to: bob,
      amount0In: 10n ** 30n,
      amount1In: 0n,
      amount0Out: 0n,
      amount1Out: 123456789n,
    });
  });

  it("decodes Sync, Mint and Burn", () => {
    const max112 = (1n << 112n) - 1n;
    assert.deepEqual(
      decodeV2Log(encodeEventLog(eventSignatures.v2Sync, { reserve0: max112, reserve1: 7n })),
      {
        type: "v2-sync",
        reserve0: max112,
        reserve1: 7n,
      },
    );
    assert.deepEqual(
      decodeV2Log(encodeEventLog(eventSignatures.v2Mint, { sender: alice, amount0: 1n, amount1: 2n })),
      {
        type: "v2-mint",
        sender: alice,
        amount0: 1n,
        amount1: 2n,
      },
    );
    assert.deepEqual(
      decodeV2Log(
        encodeEventLog(eventSignatures.v2Burn, { sender: alice, amount0: 3n, amount1: 4n, to: bob }),
      ),
      { type: "v2-burn", sender: alice, to: bob, amount0: 3n, amount1: 4n },
    );
  });

  it("returns null for unknown topics and malformed logs", () => {
    const sync = encodeEventLog(eventSignatures.v2Sync, { reserve0: 1n, reserve1: 2n });
    assert.equal(decodeV2Log({ ...sync, data: `${sync.data}00` as Hex }), null, "data of the wrong length");
    assert.equal(decodeV2Log({ ...sync, topics: [topics.v3Swap] }), null, "a V3 topic on a V2 pair");
    assert.equal(decodeV2Log({ topics: [], data: "0x" }), null, "an anonymous log");
  });
});

describe("V3 pool events", () => {
  const swapArgs = {
    sender: alice,
    recipient: bob,
    amount0: -22686110n,
    amount1: 10n ** 16n,
    sqrtPriceX96: 1662995104975155420368771254341874n,
    liquidity: 12453647101533358277n,
    tick: -199045,
  };

  it("decodes Uniswap's 7-field Swap with signed amounts and a negative tick", () => {
    const event = decodeV3Log(encodeEventLog(eventSignatures.v3Swap, swapArgs), "uniswap");
    assert.deepEqual(event, {
      type: "v3-swap",
      ...swapArgs,
      protocolFeesToken0: null,
      protocolFeesToken1: null,
    });
  });

  it("decodes PancakeSwap's 9-field Swap only when the DEX is configured with that layout", () => {
    const log = encodeEventLog(eventSignatures.pancakeV3Swap, {
      ...swapArgs,
      protocolFeesToken0: 5n,
      protocolFeesToken1: 6n,
    });
    assert.deepEqual(decodeV3Log(log, "pancake"), {
      type: "v3-swap",
      ...swapArgs,
      protocolFeesToken0: 5n,
      protocolFeesToken1: 6n,
    });
    assert.equal(decodeV3Log(log, "uniswap"), null, "a Uniswap-layout pool does not emit the Pancake topic");
    assert.equal(
      decodeV3Log(encodeEventLog(eventSignatures.v3Swap, swapArgs), "pancake"),
      null,
      "a Pancake-layout pool does not emit the Uniswap topic",
    );
  });

  it("decodes Mint, Burn, Collect, CollectProtocol, Flash and Initialize", () => {
    const events = [
      [
        "v3-mint",
        eventSignatures.v3Mint,
        {
          sender: alice,
          owner: bob,
          tickLower: -887270,
          tickUpper: 887270,
          amount: 5n,
          amount0: 6n,
          amount1: 7n,
        },
      ],
      [
        "v3-burn",
        eventSignatures.v3Burn,
        { owner: bob, tickLower: -60, tickUpper: 60, amount: 5n, amount0: 6n, amount1: 7n },
      ],
      [
        "v3-collect",
        eventSignatures.v3Collect,
        { owner: bob, recipient: alice, tickLower: -60, tickUpper: 60, amount0: 8n, amount1: 9n },
      ],
      [
        "v3-collect-protocol",
        eventSignatures.v3CollectProtocol,
        { sender: bob, recipient: alice, amount0: 1n, amount1: 2n },
      ],
      [
        "v3-flash",
        eventSignatures.v3Flash,
        { sender: bob, recipient: alice, amount0: 1n, amount1: 2n, paid0: 3n, paid1: 4n },
      ],
      ["v3-initialize", eventSignatures.v3Initialize, { sqrtPriceX96: 2n ** 96n, tick: 0 }],
    ] as const;
    for (const [type, signature, args] of events) {
      // Every field as the event names it; the Swap layout does not change the other events.
      for (const layout of ["uniswap", "pancake"] as const) {
        assert.deepEqual(decodeV3Log(encodeEventLog(signature, args), layout), { type, ...args }, type);
      }
    }
  });

  it("dispatches on the pool's protocol", () => {
    const sync = encodeEventLog(eventSignatures.v2Sync, { reserve0: 1n, reserve1: 2n });
    assert.equal(decodePoolLog(sync, "v3", "uniswap"), null, "a V2 topic on a V3 pool is ignored");
    assert.equal(decodePoolLog(sync, "v2", "uniswap")?.type, "v2-sync");
  });
});

describe("factory events", () => {
  const factory = "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f" as Hex;
  const token0 = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
  const token1 = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
  const pool = "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640";

  it("decodes PairCreated", () => {
    const log = rawLog(
      encodeEventLog(eventSignatures.v2PairCreated, { token0, token1, pair: pool, _1: 7n }),
      factory,
    );
    assert.deepEqual(decodePoolCreation(log, "v2"), {
      factory,
      pool,
      token0,
      token1,
      fee: null,
      tickSpacing: null,
      blockNumber: 10,
      logIndex: 3,
    });
  });

  it("decodes PoolCreated with its indexed fee", () => {
    const log = rawLog(
      encodeEventLog(eventSignatures.v3PoolCreated, { token0, token1, fee: 500, tickSpacing: 10, pool }),
      factory,
    );
    assert.deepEqual(decodePoolCreation(log, "v3"), {
      factory,
      pool,
      token0,
      token1,
      fee: 500,
      tickSpacing: 10,
      blockNumber: 10,
      logIndex: 3,
    });
    assert.equal(decodePoolCreation(log, "v2"), null, "a V3 creation is not a V2 one");
  });
});
