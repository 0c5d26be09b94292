import type { Hex, PoolCreation, RawLog, SwapEventLayout } from "../decode/types.js";
import type { Ratio } from "../exact/ratio.js";
import type { PoolEventKind, PoolInfo, PoolPriceState, PoolState, ProtocolName } from "../model/index.js";
import type { ShapeGenerator } from "./shape.js";

export type { PoolCreation, ProtocolName, SwapEventLayout };

/** A log's topics and data: what a decoder reads. */
export type LogLike = Pick<RawLog, "topics" | "data">;

/** An eth_call request (to, calldata). */
export type CallRequest = { to: Hex; data: Hex };

/** The trade a swap event makes, from the pool's point of view (in = paid into the pool), raw amounts. */
export type SwapTrade = {
  sender: Hex;
  recipient: Hex;
  amount0In: bigint;
  amount1In: bigint;
  amount0Out: bigint;
  amount1Out: bigint;
  /** The event's own price, liquidity and tick fields (null when the event has none). */
  sqrtPriceX96: bigint | null;
  liquidity: bigint | null;
  tick: number | null;
};

/** The optional figures a stored pool event carries beside the pool's state after it. */
export type PoolEventFields = {
  amount0?: bigint;
  amount1?: bigint;
  liquidityDelta?: bigint;
  tickLower?: number;
  tickUpper?: number;
};

/**
 * How the ingestion records a decoded event:
 * - `swap`: a trade row; `joinsPending` when it takes over the state-only event held before it
 *   in the same transaction (a V2 Sync that the Swap right after it belongs to);
 * - `event`: a pool-event row of `kind`;
 * - `pending`: a state-only event, held until the next event of the pool: a swap of the same
 *   transaction that `joinsPending` takes it over, else it is stored as a `sync` pool event.
 */
export type EventRecord =
  | { role: "swap"; trade: SwapTrade; joinsPending: boolean }
  | { role: "event"; kind: PoolEventKind; fields: PoolEventFields }
  | { role: "pending" };

/** What a pool inside a manager carries beyond its tokens (absent for other pools). */
export type PoolTraits = { hooks?: string | null; parameters?: string | null };

/** A named variant of a family (see `ProtocolFamily.variants`). */
export type FamilyVariant = { id: string; layout: SwapEventLayout; dexName: string };

/**
 * One DEX family: everything the pipeline needs to know of its pools. The pipeline (sync,
 * pricing, store, api) asks the family through the registry (`src/protocols/index.ts`) and never
 * branches on a family's name.
 *
 * `E` is the family's decoded event. Methods (not function properties) so that a family typed
 * with its own events is a `ProtocolFamily` of the registry.
 */
export interface ProtocolFamily<E = unknown> {
  /** Stored as `pools.protocol` and answered by the API. */
  readonly name: ProtocolName;
  /**
   * Its variants by their names in a recording's manifest (`protocol`: "uniswap-v3",
   * "pancakeswap-v3", …): the Swap layout, and the DEX name when the manifest names none.
   */
  readonly variants: readonly FamilyVariant[];

  // Discovery
  /** topic0 of the factory's pool-creation event. */
  readonly creationTopic: Hex;
  /** A factory's creation log as a new pool; null for another log or a malformed one. */
  decodeCreation(log: RawLog): PoolCreation | null;
  /**
   * Whether its pools live inside the factory (a pool manager): their events then come from the
   * factory's address and name the pool by its 32-byte id in their first topic.
   */
  readonly poolsInFactory: boolean;
  /**
   * Whether the pool's own logic may make its events' amounts differ from what the trader or the
   * provider paid (a V4 hook with return-delta permissions): its trades are listed and flagged
   * but never set or move a USD or reference price.
   */
  rewritesAmounts(pool: PoolTraits): boolean;

  // Logs to fetch and their decoding
  /** The topic0s its pools emit that the indexer decodes. */
  poolTopics(layout: SwapEventLayout): Hex[];
  /** topic0s of its swap events, whatever the layout (their transactions are fetched). */
  readonly swapTopics: readonly Hex[];
  /** A pool log as the family's event; null for a log that is not one of its decoded events, or malformed. */
  decodeLog(log: LogLike, layout: SwapEventLayout): E | null;

  // Pool state
  /** The state of a pool at its creation: empty balances, no price yet. */
  createdState(block: number): PoolState;
  /** The pool's state after one event. */
  nextState(before: PoolState, event: E, log: Pick<RawLog, "blockNumber" | "logIndex">): PoolState;
  /** The row the event makes (a trade with its amounts, a pool event, or a state-only event), from the state before it. */
  record(event: E, before: PoolState): EventRecord;
  /** Post-swap pool price of token0 in token1, decimal-adjusted, from the event and the state after it. */
  swapPrice(
    event: E,
    state: PoolState,
    decimals0: number,
    decimals1: number,
    pool: PoolTraits,
  ): number | null;
  /** The eth_calls that read a pool's state at a block (a pool older than the indexed range). */
  baseStateCalls(pool: PoolInfo): CallRequest[];
  /** The state from the answers of `baseStateCalls` (null answers: unknown fields). */
  baseState(answers: readonly (Hex | null)[], block: number): PoolState;

  // Pricing
  /** Exact spot price of token0 in token1 from the pricing state; null when unknown. */
  spotRatio0(state: PoolPriceState, decimals0: number, decimals1: number, pool: PoolTraits): Ratio | null;
  /**
   * Depth of one side for the pricing's liquidity floor, decimal-adjusted; null when unknown.
   * What the pool's liquidity is worth where a price is routed through it.
   */
  depth(state: PoolPriceState, side: 0 | 1, decimals: number): number | null;

  // The mainnet-shaped synthetic chain (src/shape)
  /** How its pools are generated there, ABI-exact (`src/protocols/<family>/shape.ts`). */
  readonly shape: ShapeGenerator;
}
