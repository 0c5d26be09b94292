import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jsonArrayBuffer } from "./json-buffer.js";

describe("jsonArrayBuffer", () => {
  it("writes JSON.stringify's text in UTF-8, for any length and content", () => {
    const record = (i: number) => ({
      open: 3150.1 + i / 7,
      volume: i % 5 === 0 ? 0 : 1e21 / (i + 1),
      date: new Date(Date.UTC(2026, 10, 1) + i * 3_600_000).toISOString(),
      time: i,
      // Non-ASCII in some chunks only: each chunk is encoded on its own.
      name: i % 150 === 7 ? `Ŧøkēn ${i} 🚀 "quoted" \\ \u0001` : `token ${i}`,
      gone: undefined,
      nested: i % 3 === 0 ? [null, true, { a: -0 }] : null,
    });
    for (const length of [0, 1, 63, 64, 65, 128, 129, 1000]) {
      const items = Array.from({ length }, (_, i) => record(i));
      const written = jsonArrayBuffer(items);
      assert.ok(written.equals(Buffer.from(JSON.stringify(items), "utf8")), `length ${length}`);
      assert.deepEqual(JSON.parse(written.toString("utf8")), JSON.parse(JSON.stringify(items)));
    }
  });
});
