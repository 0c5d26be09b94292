import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HttpError } from "../internal/errors.js";
import { parseId, parsePairId, parsePairIdList, patterns } from "./ids.js";

const pair = "0xB4e16d0168e52d35CaCD2c6185b44Ac22D5bD1bD";
/** A Uniswap V4 PoolId (32 bytes). */
const poolId = "0x21C67E77068DE97969BA93D4AAB21826D33CA12BB9F565D8496E8FDA8A82CA27";

const isBadRequest = (pattern: RegExp) => (error: unknown) =>
  error instanceof HttpError && error.statusCode === 400 && pattern.test(error.message);

describe("pair ids", () => {
  it("take a pool's address or a 32-byte pool id, lowercased", () => {
    assert.deepEqual(parsePairId(`${pair}:1`, "pair_id"), {
      chainId: 1,
      address: pair.toLowerCase(),
      id: `${pair.toLowerCase()}:1`,
    });
    assert.deepEqual(parsePairId(` ${poolId}:56 `, "pair_id"), {
      chainId: 56,
      address: poolId.toLowerCase(),
      id: `${poolId.toLowerCase()}:56`,
    });
    assert.deepEqual(
      parsePairIdList(`${poolId}:1,${pair}:1,${poolId.toLowerCase()}:1`, "pair_id").map((p) => p.id),
      [`${poolId.toLowerCase()}:1`, `${pair.toLowerCase()}:1`],
    );
    assert.match(`${poolId}:1`, new RegExp(patterns.pairId));
    assert.match(`${pair}:1,${poolId}:137`, new RegExp(patterns.marketPairIdList));
  });

  it("refuse other lengths with a 400 naming the parameter, and token ids stay 40 hex digits", () => {
    for (const bad of [`${poolId.slice(0, -2)}:1`, `${poolId}00:1`, `${pair.slice(0, -1)}:1`, poolId]) {
      assert.throws(
        () => parsePairId(bad, "pair_id"),
        isBadRequest(/^pair_id must be an id <address>:<chainId> \(/),
      );
    }
    assert.throws(() => parseId(`${poolId}:1`, "asset_id"), isBadRequest(/^asset_id must be/));
    assert.doesNotMatch(`${poolId}:1`, new RegExp(patterns.id));
  });
});
