import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { encodeAbiParameters, stringToHex } from "viem";
import { decodeDecimals, decodeStringOrBytes32, decodeUint, encodeBalanceOf } from "./erc20.js";

describe("ERC-20 metadata decoding", () => {
  it("decodes an ABI string", () => {
    assert.equal(
      decodeStringOrBytes32(encodeAbiParameters([{ type: "string" }], ["Wrapped Ether"])),
      "Wrapped Ether",
    );
  });

  it("decodes a bytes32 symbol and trims its NULs", () => {
    assert.equal(decodeStringOrBytes32(stringToHex("MKR", { size: 32 })), "MKR");
  });

  it("returns null for empty or malformed data", () => {
    assert.equal(
      decodeStringOrBytes32("0x"),
      null,
      "no return data (a missing function on a contract without code)",
    );
    assert.equal(decodeStringOrBytes32(`0x${"00".repeat(32)}`), null, "an all-NUL bytes32");
    assert.equal(
      decodeStringOrBytes32(`0x${"00".repeat(31)}20${"00".repeat(31)}ff`),
      null,
      "a length past the data",
    );
  });

  it("decodes decimals and uint256 values", () => {
    assert.equal(decodeDecimals(encodeAbiParameters([{ type: "uint8" }], [6])), 6);
    assert.equal(decodeDecimals(encodeAbiParameters([{ type: "uint256" }], [1000n])), null, "not a uint8");
    assert.equal(decodeDecimals("0x"), null);
    assert.equal(decodeUint(encodeAbiParameters([{ type: "uint256" }], [2n ** 255n])), 2n ** 255n);
  });

  it("encodes balanceOf calldata", () => {
    assert.equal(
      encodeBalanceOf("0x88E6A0c2dDD26FEEb64F039a2c41296FcB3f5640"),
      "0x70a0823100000000000000000000000088e6a0c2ddd26feeb64f039a2c41296fcb3f5640",
    );
  });
});
