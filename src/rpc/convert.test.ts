import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Hex } from "../decode/types.js";
import { blockTag, fromFullBlock, fromReceipts, toHeader, toRawLog, toTransaction } from "./convert.js";

const H = (c: string) => `0x${c.repeat(64)}`;

describe("JSON-RPC answers to the project's types", () => {
  it("lower-cases hashes and addresses and reads hex quantities", () => {
    assert.deepEqual(toHeader({ number: "0x10", hash: H("A"), parentHash: H("B"), timestamp: "0x5f" }), {
      number: 16,
      hash: H("a"),
      parentHash: H("b"),
      timestamp: 95,
    });
    assert.throws(
      () => toHeader({ number: "0x1", hash: "", parentHash: H("b"), timestamp: "0x1" }),
      /without a hash/,
    );
    assert.equal(blockTag(255), "0xff");
    assert.equal(blockTag("latest"), "latest");
    const log = toRawLog({
      address: `0x${"C".repeat(40)}`,
      topics: [H("D")],
      data: "0xAB",
      blockNumber: "0x2",
      blockHash: null,
      transactionHash: H("E"),
      transactionIndex: "0x3",
      logIndex: "0x4",
    });
    assert.deepEqual(log, {
      address: `0x${"c".repeat(40)}`,
      topics: [H("d")],
      data: "0xab",
      blockNumber: 2,
      blockHash: null,
      transactionHash: H("e"),
      transactionIndex: 3,
      logIndex: 4,
    });
  });

  const tx = (c: string, to: string | null = `0x${"2".repeat(40)}`) => ({
    hash: H(c),
    from: `0x${"1".repeat(40)}`,
    to,
    blockHash: H("9"),
    blockNumber: "0x7",
    transactionIndex: "0x0",
  });

  it("keeps only the wanted transactions of a full block (a hash string: the node ignored `true`)", () => {
    const wanted = (h: Hex) => h === H("b");
    const block = fromFullBlock(
      {
        number: "0x7",
        hash: H("9"),
        parentHash: H("8"),
        timestamp: "0x1",
        transactions: [tx("a"), tx("B", null), H("c")],
      },
      wanted,
    );
    assert.equal(block.number, 7);
    assert.deepEqual(block.transactions, [toTransaction(tx("b", null))]);
    assert.equal(block.transactions[0]?.to, null);
  });

  it("reads a block's hash and time from its receipts; a blockTimestamp of 0 counts as missing", () => {
    const receipt = (c: string, stamp?: string) => ({
      ...tx(c),
      transactionHash: H(c),
      logs: stamp === undefined ? [] : [{ blockTimestamp: stamp }],
    });
    const all = () => true;
    assert.equal(fromReceipts(7, [receipt("a", "0x0"), receipt("b", "0x64")], all).timestamp, 100);
    assert.equal(fromReceipts(7, [receipt("a")], all).timestamp, null);
    const read = fromReceipts(7, [receipt("a", "0x64"), receipt("b")], (h) => h === H("b"));
    assert.equal(read.hash, H("9"));
    assert.equal(read.parentHash, null, "receipts carry no parent hash");
    assert.deepEqual(
      read.transactions.map((t) => t.hash),
      [H("b")],
    );
  });
});
