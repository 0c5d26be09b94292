import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildBlock, logWriter, testToken, user } from "../_test/family-logs.js";
import type { Hex, RawLog } from "../decode/types.js";
import { eventSignatures } from "../protocols/abi.js";
import { IncompleteRangeError } from "./batch.js";
import { createdState, type Pool } from "./pools.js";

const v2Pool = "0x00000000000000000000000000000000000000a2" as Hex;
const v3Pool = "0x00000000000000000000000000000000000000a3" as Hex;
const token0 = "0x0000000000000000000000000000000000000010" as Hex;
const token1 = "0x0000000000000000000000000000000000000011" as Hex;
const router = "0x00000000000000000000000000000000000000ff" as Hex;

function pool(address: Hex, protocol: "v2" | "v3"): Pool {
  const base = createdState(protocol, 1);
  return {
    address,
    dex: protocol,
    protocol,
    swapEvent: "uniswap",
    factory: "0x0000000000000000000000000000000000000001",
    token0,
    token1,
    fee: protocol === "v2" ? 3000 : 500,
    tickSpacing: protocol === "v2" ? null : 10,
    createdBlock: 1,
    createdLogIndex: 0,
    baseBlock: 1,
    base,
    state: base,
  };
}

const tokens = new Map([testToken(token0, "A", 18), testToken(token1, "B", 6)]);

const writeLog = logWriter();
/** A log of `signature` at block 2 in transaction `tx`, encoded with viem. */
const log = (address: Hex, signature: string, args: Record<string, unknown>, tx = "0x01"): RawLog =>
  writeLog(signature, args, address, tx);

function build(logs: RawLog[]) {
  const pools = new Map([
    [v2Pool, pool(v2Pool, "v2")],
    [v3Pool, pool(v3Pool, "v3")],
  ]);
  return buildBlock({ logs, pools, tokens, txs: ["0x01", "0x02", "0x03"], from: user, to: router });
}

describe("buildBatch, V2", () => {
  it("gives a swap the reserves of the Sync right before it, and keeps other Syncs as pool events", () => {
    const built = build([
      log(v2Pool, eventSignatures.v2Sync, { reserve0: 1000n, reserve1: 2000n }, "0x01"),
      log(v2Pool, eventSignatures.v2Mint, { sender: router, amount0: 1000n, amount1: 2000n }, "0x01"),
      log(v2Pool, eventSignatures.v2Sync, { reserve0: 1100n, reserve1: 1820n }, "0x02"),
      log(
        v2Pool,
        eventSignatures.v2Swap,
        { sender: router, amount0In: 100n, amount1In: 0n, amount0Out: 0n, amount1Out: 180n, to: user },
        "0x02",
      ),
      log(v2Pool, eventSignatures.v2Sync, { reserve0: 1200n, reserve1: 1820n }, "0x03"),
    ]);
    assert.equal(built.swaps.length, 1);
    const swap = built.swaps[0];
    assert.equal(swap?.reserve0, 1100n, "the swap's own Sync");
    assert.equal(swap?.reserve1, 1820n);
    assert.equal(swap?.maker, user, "maker is the transaction's sender");
    assert.equal(swap?.exchange, router, "exchange is the contract it called");
    assert.equal(swap?.price, (1820 / 1100) * 10 ** 12, "reserve1/reserve0, decimal-adjusted");
    assert.deepEqual(
      built.poolEvents.map((e) => [e.kind, e.reserve0]),
      [
        ["sync", 1000n],
        ["mint", 1000n],
        ["sync", 1200n],
      ],
      "the Sync of the swap is not a pool event; the Mint's Sync and a lone Sync (a donation) are",
    );
    assert.equal(built.states.get(v2Pool)?.reserve0, 1200n, "state after the last event");
  });
});

describe("buildBatch, V3", () => {
  it("tracks balances through Mint, Swap, Flash and Collect, and liquidity through in-range Mint/Burn", () => {
    const built = build([
      log(v3Pool, eventSignatures.v3Initialize, { sqrtPriceX96: 2n ** 96n, tick: 0 }),
      log(v3Pool, eventSignatures.v3Mint, {
        sender: router,
        owner: router,
        tickLower: -60,
        tickUpper: 60,
        amount: 500n,
        amount0: 1000n,
        amount1: 1000n,
      }),
      log(v3Pool, eventSignatures.v3Mint, {
        sender: router,
        owner: router,
        tickLower: 60,
        tickUpper: 120,
        amount: 7n,
        amount0: 50n,
        amount1: 0n,
      }),
      log(v3Pool, eventSignatures.v3Swap, {
        sender: router,
        recipient: user,
        amount0: 100n,
        amount1: -90n,
        sqrtPriceX96: 2n ** 96n - 2n ** 80n,
        liquidity: 500n,
        tick: -1,
      }),
      log(v3Pool, eventSignatures.v3Flash, {
        sender: user,
        recipient: user,
        amount0: 10n,
        amount1: 0n,
        paid0: 1n,
        paid1: 0n,
      }),
      log(v3Pool, eventSignatures.v3Burn, {
        owner: router,
        tickLower: -60,
        tickUpper: 60,
        amount: 200n,
        amount0: 400n,
        amount1: 350n,
      }),
      log(v3Pool, eventSignatures.v3Collect, {
        owner: router,
        recipient: router,
        tickLower: -60,
        tickUpper: 60,
        amount0: 400n,
        amount1: 350n,
      }),
    ]);
    const swap = built.swaps[0];
    assert.equal(swap?.amount0In, 100n, "positive amount0: paid in");
    assert.equal(swap?.amount1Out, 90n, "negative amount1: paid out");
    assert.equal(swap?.amount0Out, 0n);
    assert.equal(swap?.reserve0, 1000n + 50n + 100n, "mints + swap in");
    assert.equal(swap?.reserve1, 1000n - 90n, "mint − swap out");
    assert.equal(swap?.tick, -1);
    const kinds = built.poolEvents.map((e) => [e.kind, e.liquidity, e.reserve0]);
    assert.deepEqual(
      kinds,
      [
        ["initialize", 0n, 0n],
        ["mint", 500n, 1000n],
        ["mint", 500n, 1050n],
        ["flash", 500n, 1151n],
        ["burn", 300n, 1151n],
        ["collect", 300n, 751n],
      ],
      "the out-of-range mint adds no active liquidity; Burn moves liquidity but not balances; Collect does",
    );
    assert.equal(built.poolEvents[4]?.liquidityDelta, -200n, "burned liquidity is negative");
    assert.deepEqual(built.states.get(v3Pool), {
      reserve0: 751n,
      reserve1: 560n,
      sqrtPriceX96: 2n ** 96n - 2n ** 80n,
      liquidity: 300n,
      tick: -1,
      block: 2,
      logIndex: built.poolEvents[5]?.logIndex,
    });
  });

  it("asks to fetch again when a swap's transaction or block is missing", () => {
    const swap = log(
      v3Pool,
      eventSignatures.v3Swap,
      {
        sender: router,
        recipient: user,
        amount0: 1n,
        amount1: -1n,
        sqrtPriceX96: 2n ** 96n,
        liquidity: 1n,
        tick: 0,
      },
      "0x09",
    );
    assert.throws(() => build([swap]), IncompleteRangeError, "no transaction 0x09");
    const known = { ...swap, transactionHash: "0x01".padEnd(66, "0") as Hex };
    assert.doesNotThrow(() => build([known]), "with its transaction and block, the same swap builds");
    assert.throws(() => build([{ ...known, blockNumber: 3 }]), IncompleteRangeError, "no header of block 3");
  });
});
