import { hexToString } from "viem";
import { uintAt, wordCount } from "./words.js";

/** Selectors of the ERC-20 metadata getters and balanceOf. */
export const erc20Selectors = {
  name: "0x06fdde03",
  symbol: "0x95d89b41",
  decimals: "0x313ce567",
  totalSupply: "0x18160ddd",
  balanceOf: "0x70a08231",
} as const;

/** Calldata of balanceOf(owner). */
export function encodeBalanceOf(owner: string): `0x${string}` {
  return `${erc20Selectors.balanceOf}${owner.slice(2).toLowerCase().padStart(64, "0")}`;
}

/**
 * Decodes the return data of name() / symbol(): an ABI `string`, or a `bytes32` (old tokens
 * such as MKR) with its trailing NULs trimmed. Null when the data is neither, or empty.
 */
export function decodeStringOrBytes32(data: string): string | null {
  const words = wordCount(data);
  if (!Number.isInteger(words) || words < 1) return null;
  if (words === 1) return bytes32ToString(data.slice(2, 66));
  // ABI string: offset, length, bytes.
  const offset = uintAt(data, 0);
  if (offset % 32n !== 0n || offset / 32n + 1n > BigInt(words)) return null;
  const start = Number(offset / 32n);
  const length = uintAt(data, start);
  if (length > BigInt((words - start - 1) * 32)) return null;
  const bytesHex = data.slice(2 + (start + 1) * 64, 2 + (start + 1) * 64 + Number(length) * 2);
  return cleanString(hexToString(`0x${bytesHex}`));
}

function bytes32ToString(word: string): string | null {
  return cleanString(hexToString(`0x${word}`));
}

/** Trims NULs and whitespace; a string that is empty after trimming, or not valid text, is null. */
function cleanString(value: string): string | null {
  // Removing NUL characters is the point of this expression.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: bytes32 names are NUL-padded
  const trimmed = value.replace(/\u0000/g, "").trim();
  if (trimmed.length === 0 || trimmed.includes("\uFFFD")) return null;
  return trimmed;
}

/** Decodes decimals(): a uint8 in one word; null when out of range or malformed. */
export function decodeDecimals(data: string): number | null {
  if (wordCount(data) < 1) return null;
  const value = uintAt(data, 0);
  return value <= 255n ? Number(value) : null;
}

/** Decodes a uint256 return value (totalSupply, balanceOf); null when malformed. */
export function decodeUint(data: string): bigint | null {
  if (wordCount(data) < 1) return null;
  return uintAt(data, 0);
}
