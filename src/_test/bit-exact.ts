import * as assert from "node:assert/strict";
import { type Exact, toDouble } from "./exact.js";

/** Bit for bit: the stored double is the correctly rounded exact value (0 and −0 told apart). */
export function exactly(actual: number | null | undefined, expected: Exact | number, why: string): void {
  const want = typeof expected === "number" ? expected : toDouble(expected);
  assert.ok(Object.is(actual, want), `${why}: ${actual} vs ${want}`);
}

/** The V2 amount out, written out: in × 0.997 × reserveOut / (reserveIn + in × 0.997), floored. */
export const v2Out = (amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint =>
  (amountIn * 997n * reserveOut) / (reserveIn * 1000n + amountIn * 997n);
