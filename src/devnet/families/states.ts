// The two kinds of pool state the simulator steers by, named after the family whose math they
// follow: a V2 pair's reserves, and V3's concentrated liquidity (which V4 and Algebra pools share).
// A leaf module: pool-state.ts and the families build their states here.

/** A V2 pair's reserves. */
export type ReservesState = { protocol: "v2"; reserve0: bigint; reserve1: bigint };
/** A concentrated-liquidity pool's price and active liquidity. */
export type ConcentratedState = { protocol: "v3"; sqrtPriceX96: bigint; liquidity: bigint };

export const reservesState = (reserve0: bigint, reserve1: bigint): ReservesState => ({
  protocol: "v2",
  reserve0,
  reserve1,
});

const mask128 = (1n << 128n) - 1n;
const mask160 = (1n << 160n) - 1n;

/**
 * A concentrated-liquidity state from the storage words that hold it: the price in the low 160
 * bits of the first (V3's Slot0, V4's, Algebra's globalState), the liquidity in the low 128 bits
 * of the second once shifted right by `liquidityShift` bits.
 */
export const concentratedFromWords = (priceWord: bigint, liquidityWord: bigint, liquidityShift = 0n) =>
  concentratedState(priceWord & mask160, (liquidityWord >> liquidityShift) & mask128);

export const concentratedState = (sqrtPriceX96: bigint, liquidity: bigint): ConcentratedState => ({
  protocol: "v3",
  sqrtPriceX96,
  liquidity,
});
