/**
 * Numbers at the API's edge: raw on-chain integers (numeric(78,0) strings) become decimal-adjusted
 * JSON numbers here and nowhere earlier; a value that is unknown or not finite becomes null.
 */
import { toUnits } from "../exact/ratio.js";
import { finite } from "../model/index.js";

/** A raw integer amount scaled by 10^decimals (rounded once), as a JSON number; null when either is unknown. */
export function unitsOrNull(
  raw: string | bigint | null | undefined,
  decimals: number | null | undefined,
): number | null {
  if (raw === null || raw === undefined || decimals === null || decimals === undefined) return null;
  let value: bigint;
  try {
    value = typeof raw === "bigint" ? raw : BigInt(raw);
  } catch {
    return null;
  }
  return toUnits(value, decimals);
}

/**
 * The tokens' USD prices, decimal-adjusted balances and symbols as a pair record and a trade record
 * both carry them (null where unknown or not finite).
 */
export function pairTokenFigures(
  usd: readonly [number | null, number | null],
  reserves: readonly [string | null, string | null],
  pool: {
    decimals0: number | null;
    decimals1: number | null;
    symbol0: string | null;
    symbol1: string | null;
  },
) {
  return {
    token0_price: finite(usd[0]),
    token1_price: finite(usd[1]),
    token0_reserves: finite(unitsOrNull(reserves[0], pool.decimals0)),
    token1_reserves: finite(unitsOrNull(reserves[1], pool.decimals1)),
    token0_symbol: pool.symbol0,
    token1_symbol: pool.symbol1,
  };
}

/**
 * A finite number as plain decimal text, never in exponent form: 1e-7 → "0.0000001",
 * 1.5e21 → "1500000000000000000000". Keeps the shortest round-trip digits of the number.
 */
export function toDecimalString(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, lead, rest = "", exp] = match;
  const digits = `${lead}${rest}`;
  const point = 1 + Number(exp); // position of the decimal point within `digits`
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
