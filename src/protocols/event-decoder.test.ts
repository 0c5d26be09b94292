import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { encodeEventLog } from "../_test/encode-log.js";
import type { Hex } from "../decode/types.js";
import { argsDecoder, eventTopics, tableDecoder } from "./event-decoder.js";

const signatures = {
  poolThing:
    "PoolThing(bytes32 indexed id, int24 indexed tick, uint24 fee, int128 amount, address who, uint256)",
  otherThing: "OtherThing(uint112 reserve)",
} as const;
const args = {
  id: `0x${"AB".repeat(32)}`,
  tick: -3,
  fee: 500,
  amount: -(10n ** 30n),
  who: `0x${"0f".repeat(20)}`,
};

describe("event decoding from signature texts", () => {
  it("reads indexed arguments from topics and the others from data words; narrow integers as numbers; unnamed ones skipped", () => {
    const log = encodeEventLog(signatures.poolThing, { ...args, _3: 7n });
    assert.deepEqual(argsDecoder(signatures.poolThing, { type: "pool-thing" })(log), {
      type: "pool-thing",
      id: args.id.toLowerCase(),
      tick: -3,
      fee: 500,
      amount: -(10n ** 30n),
      who: args.who,
    });
  });

  it("gives null for another topic0, another topic count or data length", () => {
    const decode = argsDecoder(signatures.poolThing);
    const log = encodeEventLog(signatures.poolThing, { ...args, _3: 7n });
    assert.equal(decode({ ...log, topics: log.topics.slice(0, 2) }), null);
    assert.equal(decode({ ...log, data: `${log.data}${"00".repeat(32)}` as Hex }), null);
    assert.equal(decode({ ...log, data: `${log.data}00` as Hex }), null);
    assert.equal(decode(encodeEventLog(signatures.otherThing, { reserve: 1n })), null);
  });

  it("names a table's events by their keys in kebab-case and dispatches on topic0", () => {
    const decode = tableDecoder(signatures, ["poolThing", "otherThing"]);
    assert.deepEqual(decode(encodeEventLog(signatures.otherThing, { reserve: 9n })), {
      type: "other-thing",
      reserve: 9n,
    });
    assert.equal(
      decode({ topics: [eventTopics({ x: "X(uint256 a)" }).x], data: `0x${"00".repeat(32)}` }),
      null,
    );
    assert.equal(decode({ topics: [], data: "0x" }), null, "an anonymous log");
  });

  it("refuses a signature with a dynamic argument when the decoder is made", () => {
    assert.throws(() => argsDecoder("Mint(uint256[] ids)"), /uint256\[\] is not decoded/);
    assert.throws(() => argsDecoder("Note(string text)"), /string is not decoded/);
  });
});
