import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Hex, RawLog } from "../decode/types.js";
import type { BlockHeader } from "../rpc/types.js";
import { mergeRanges, type RangeData } from "./fetch-range.js";

const hash = (n: number): Hex => `0x${n.toString(16).padStart(64, "0")}`;
const header = (n: number): BlockHeader => ({
  number: n,
  hash: hash(n),
  parentHash: hash(n - 1),
  timestamp: 1000 + n,
});
const log = (block: number, index: number): RawLog => ({
  address: "0x00000000000000000000000000000000000000aa",
  topics: [],
  data: "0x",
  blockNumber: block,
  blockHash: hash(block),
  transactionHash: hash(block * 1000 + index),
  transactionIndex: index,
  logIndex: index,
});

/** A range [from, to] with a log in each of `logged`, its end headers as canonical. */
function range(from: number, to: number, logged: number[]): RangeData {
  const headers = new Map([from, ...logged, to].map((n) => [n, header(n)]));
  return {
    from,
    to,
    logs: logged.map((n) => log(n, 0)),
    creations: [],
    headers,
    blocks: new Map([...headers].map(([n, h]) => [n, { hash: h.hash, timestamp: h.timestamp }])),
    canonical: [header(to)],
    transactions: new Map(
      logged.map((n) => [
        hash(n * 1000),
        {
          hash: hash(n * 1000),
          from: hash(1),
          to: null,
          blockHash: hash(n),
          blockNumber: n,
          transactionIndex: 0,
        },
      ]),
    ),
    tokens: [],
  };
}

describe("mergeRanges", () => {
  it("joins consecutive ranges into one batch, in block order", () => {
    const merged = mergeRanges([range(10, 19, [12, 15]), range(20, 29, [21]), range(30, 39, [])]);
    assert.equal(merged.from, 10);
    assert.equal(merged.to, 39);
    assert.deepEqual(
      merged.logs.map((l) => l.blockNumber),
      [12, 15, 21],
    );
    assert.deepEqual(
      merged.canonical.map((h) => h.number),
      [19, 29, 39],
      "every range's canonical headers; storeBlocks keeps the window's",
    );
    assert.equal(merged.headers.get(39)?.hash, hash(39), "the last block's header gives the checkpoint");
    assert.equal(merged.transactions.size, 3);
    assert.deepEqual(
      [...merged.blocks.keys()].sort((a, b) => a - b),
      [10, 12, 15, 19, 20, 21, 29, 30, 39],
    );
  });

  it("gives a lone range back as it is, and refuses a gap", () => {
    const one = range(0, 9, [3]);
    assert.equal(mergeRanges([one]), one);
    assert.throws(() => mergeRanges([range(0, 9, []), range(11, 19, [])]), /does not follow/);
    assert.throws(() => mergeRanges([]), /no range/);
  });
});
