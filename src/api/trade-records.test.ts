import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HttpError } from "../internal/errors.js";
import { decodeCursor, encodeCursor } from "./trade-records.js";

const isBadRequest = (error: unknown) =>
  error instanceof HttpError && error.statusCode === 400 && /cursor/.test(error.message);

describe("trade cursors", () => {
  it("carry the block's time, which bounds the next page from above", () => {
    const time = Date.parse("2025-06-01T12:00:07Z");
    const cursor = encodeCursor({ block: 21_000_000, logIndex: 117, time });
    assert.match(cursor, /^[A-Za-z0-9_-]{1,40}$/, "fits the route's pattern");
    const position = decodeCursor(cursor);
    assert.equal(position.block, 21_000_000);
    assert.equal(position.logIndex, 117);
    // Whole seconds: the bound is the end of the block's second, never before the block.
    assert.ok((position.time as number) >= time && (position.time as number) < time + 1000);
  });

  it("read the cursors made before the time was added", () => {
    const old = Buffer.from("4210.57").toString("base64url");
    assert.deepEqual(decodeCursor(old), { block: 4210, logIndex: 57 });
  });

  it("leave the time out when it would not fit 40 characters", () => {
    const position = {
      block: 999_999_999_999_999,
      logIndex: 999_999_999,
      time: Date.parse("2025-06-01T12:00:07Z"),
    };
    const cursor = encodeCursor(position);
    assert.ok(cursor.length <= 40, `${cursor.length} characters`);
    assert.deepEqual(decodeCursor(cursor), { block: position.block, logIndex: position.logIndex });
  });

  it("refuse anything else with a 400 naming the cursor", () => {
    for (const bad of [
      "",
      "abc",
      Buffer.from("1.2.3.4").toString("base64url"),
      Buffer.from("1.x").toString("base64url"),
    ]) {
      assert.throws(() => decodeCursor(bad), isBadRequest, bad);
    }
  });
});
