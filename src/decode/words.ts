import type { Hex } from "./types.js";

const TWO_255 = 1n << 255n;
const TWO_256 = 1n << 256n;

/** Number of 32-byte words in ABI-encoded data. */
export function wordCount(data: string): number {
  return (data.length - 2) / 64;
}

/** The i-th 32-byte word of ABI-encoded data as an unsigned integer. */
export function uintAt(data: string, i: number): bigint {
  return BigInt(`0x${data.slice(2 + i * 64, 2 + (i + 1) * 64)}`);
}

/** The i-th word as a two's-complement signed integer (int24…int256 are sign-extended to 32 bytes). */
export function intAt(data: string, i: number): bigint {
  return toSigned(uintAt(data, i));
}

/** The i-th word as an address. */
export function addressAt(data: string, i: number): Hex {
  return `0x${data.slice(2 + i * 64 + 24, 2 + (i + 1) * 64)}`.toLowerCase() as Hex;
}

/** A topic holding an indexed address. */
export function topicAddress(topic: string): Hex {
  return `0x${topic.slice(26)}`.toLowerCase() as Hex;
}

/** A topic holding an indexed signed integer (int24 ticks). */
export function topicInt(topic: string): bigint {
  return toSigned(BigInt(topic));
}

function toSigned(value: bigint): bigint {
  return value >= TWO_255 ? value - TWO_256 : value;
}
