import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Hex } from "../decode/types.js";
import { findCommonAncestor, type StoredBlock } from "./reorg.js";

const hash = (n: number, branch: string): Hex => `0x${branch}${n.toString(16).padStart(63, "0")}` as Hex;
const stored = (from: number, to: number, branch = "a"): StoredBlock[] => {
  const blocks: StoredBlock[] = [];
  for (let n = to; n >= from; n--)
    blocks.push({ number: n, hash: hash(n, branch), time: new Date(n * 1000) });
  return blocks;
};

/** A node whose chain is branch "a" up to `fork` and branch "b" above; it counts the hashes asked. */
function node(fork: number, head: number) {
  const asked: number[][] = [];
  return {
    asked,
    hashesAt: async (numbers: number[]) => {
      asked.push(numbers);
      return numbers.map((n) => (n > head ? null : hash(n, n <= fork ? "a" : "b")));
    },
  };
}

describe("findCommonAncestor", () => {
  it("finds the fork point of a shallow reorg in the first chunk", async () => {
    const n = node(95, 120);
    const { ancestor, asked } = await findCommonAncestor(stored(0, 100), n.hashesAt, 16);
    assert.equal(ancestor?.number, 95);
    assert.equal(asked, 16);
    assert.deepEqual(
      n.asked[0],
      stored(85, 100).map((b) => b.number),
      "highest first, one chunk",
    );
  });

  it("walks back in chunks doubling from the window for a reorg deeper than it, about 2 reads a block", async () => {
    const n = node(40, 200);
    const { ancestor, asked } = await findCommonAncestor(stored(0, 100), n.hashesAt, 16);
    assert.equal(ancestor?.number, 40, "depth 60, 3.75 windows");
    assert.deepEqual(
      n.asked.map((c) => c.length),
      [16, 32, 53],
      "16, then 32, then the rest (64 wanted, 53 left)",
    );
    assert.equal(asked, 101);
  });

  it("finds an ancestor below a gap of the kept hashes (sparse ranges' ends) and lower than the fork", async () => {
    const sparse = [...stored(90, 100), ...stored(60, 60), ...stored(30, 30)];
    const { ancestor } = await findCommonAncestor(sparse, node(70, 100).hashesAt, 4);
    assert.equal(ancestor?.number, 60, "the highest kept block at or below the fork");
  });

  it("answers null when no kept block is canonical, and a node below the stored blocks is no match", async () => {
    const { ancestor, asked } = await findCommonAncestor(stored(50, 100), node(10, 80).hashesAt, 8);
    assert.equal(ancestor, null);
    assert.equal(asked, 51, "every kept block was asked once");
  });
});
