import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCsv } from "./fixture.js";

describe("parseCsv", () => {
  it("reads quoted fields with commas, doubled quotes and line breaks", () => {
    assert.deepEqual(parseCsv('a,b,c\n1,"[""0x1"", ""0x2""]",x\r\n2,"multi\nline",\n'), [
      ["a", "b", "c"],
      ["1", '["0x1", "0x2"]', "x"],
      ["2", "multi\nline", ""],
    ]);
  });

  it("reads a last line without a line break", () => {
    assert.deepEqual(parseCsv("a,b\n1,2"), [
      ["a", "b"],
      ["1", "2"],
    ]);
  });
});
