import { badRequest } from "../internal/errors.js";
import { finite } from "../model/index.js";
import { assetSold, sidePrice, tradeOf } from "../pricing/trade.js";
import { familyOf } from "../protocols/index.js";
import type { PoolRow } from "../store/pools.js";
import type { SwapRow, TradePosition } from "../store/swaps.js";
import { pairTokenFigures, unitsOrNull } from "./numbers.js";
import { toIso } from "./times.js";

const abs = (n: bigint) => (n < 0n ? -n : n);

/**
 * One trade record seen from `asset`'s side. A trade is a `sell` of the asset when
 * the trader paid the asset into the pool, a `buy` when the asset left the pool; `price` is the
 * execution price of the asset in units of the other token (other amount / asset amount), from
 * the one trade function the candles use (`tradeOf`: exact from the raw integers, rounded once;
 * null when the swap is no trade: a zero side, or both amounts flowing the same way). Amounts are
 * positive and decimal-adjusted; USD fields null when unknown.
 */
export function tradeRecord(pool: PoolRow, swap: SwapRow, assetIsToken0: boolean) {
  const net0 = BigInt(swap.amount0_in) - BigInt(swap.amount0_out);
  const net1 = BigInt(swap.amount1_in) - BigInt(swap.amount1_out);
  const amount0 = finite(unitsOrNull(abs(net0), pool.decimals0));
  const amount1 = finite(unitsOrNull(abs(net1), pool.decimals1));
  const [assetNet, otherNet] = assetIsToken0 ? [net0, net1] : [net1, net0];
  const sold = assetSold(assetNet, otherNet);
  const trade =
    pool.decimals0 === null || pool.decimals1 === null
      ? null
      : tradeOf(
          {
            amount0In: BigInt(swap.amount0_in),
            amount1In: BigInt(swap.amount1_in),
            amount0Out: BigInt(swap.amount0_out),
            amount1Out: BigInt(swap.amount1_out),
          },
          pool.decimals0,
          pool.decimals1,
        );
  const price = trade ? finite(sidePrice(trade, assetIsToken0 ? 0 : 1)) : null;
  const record = {
    pair_id: `${pool.address}:${pool.chain_id}`,
    date: toIso(swap.block_time),
    block_number: Number(swap.block_number),
    chain: pool.chain_id,
    exchange: swap.exchange,
    factory_address: pool.factory,
    hash: swap.tx_hash,
    log_index: swap.log_index,
    maker: swap.maker,
    pair_address: pool.address,
    token0_address: pool.token0,
    token1_address: pool.token1,
    token0_amount: amount0,
    token1_amount: amount1,
    ...pairTokenFigures([swap.token0_usd, swap.token1_usd], [swap.reserve0, swap.reserve1], pool),
    side: sold ? ("sell" as const) : ("buy" as const),
    price,
    volume: finite(swap.volume_usd),
  };
  // A pool whose hook may return deltas: its amounts may not be what the trader paid (the pool
  // never prices); its trades say so in a field of their own, absent elsewhere.
  const rewritable = pool.protocol !== undefined && familyOf(pool.protocol).rewritesAmounts(pool);
  return rewritable ? { ...record, hook_may_rewrite_amounts: true as const } : record;
}

/** Longest cursor the trades route accepts (its schema's pattern). */
const MAX_CURSOR_LENGTH = 40;

/**
 * The opaque cursor of the page after `position`: base64url of `<block>.<logIndex>.<block time,
 * unix seconds>`, the time letting the next page read only the partitions at or before it (see
 * findSwaps); `<block>.<logIndex>` alone when that would not fit the route's 40 characters.
 */
export function encodeCursor(position: TradePosition): string {
  const plain = `${position.block}.${position.logIndex}`;
  if (position.time !== undefined) {
    const timed = Buffer.from(`${plain}.${Math.floor(position.time / 1000)}`).toString("base64url");
    if (timed.length <= MAX_CURSOR_LENGTH) return timed;
  }
  return Buffer.from(plain).toString("base64url");
}

/** Reads a cursor made by encodeCursor (with or without the time); anything else is a 400. */
export function decodeCursor(cursor: string): TradePosition {
  const match = /^(\d{1,15})\.(\d{1,9})(?:\.(\d{1,11}))?$/.exec(
    Buffer.from(cursor, "base64url").toString("latin1"),
  );
  if (!match)
    throw badRequest(
      "query parameter cursor is not valid: pass the X-Next-Cursor value of a previous answer",
    );
  const position = { block: Number(match[1]), logIndex: Number(match[2]) };
  // The block's time ends the page's reads from above (rounded up: the cursor keeps whole seconds).
  return match[3] === undefined ? position : { ...position, time: (Number(match[3]) + 1) * 1000 - 1 };
}
