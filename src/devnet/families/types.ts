// The devnet's side of a DEX family: how its real contracts are deployed on the demo chain and how
// the simulator trades them. The devnet (deploy.ts, the planner, the simulator) asks the family
// through `devnetFamilyOf` (./index.ts) and never branches on a family's name.
import type { Address, Hex } from "viem";
import type { DeployedPool, DeployedToken, Deployment } from "../deploy.js";
import type { LiquidityContext, LiquidityOutput } from "../liquidity-planning.js";
import type { PoolSpec, RouteSpec, TokenKey } from "../market.js";
import type { Trade } from "../market-estimates.js";
import type { PeripheryAddresses } from "../periphery.js";
import type { PoolState } from "../pool-state.js";
import type { Random } from "../random.js";
import type { DevnetRpc, RpcCall } from "../rpc.js";
import type { TxRequest } from "../transactions.js";

/** Where a planned pool lives (planDeployment): the contracts of the families are planned first. */
export type PoolPlacement = {
  address: Address;
  tickSpacing: number | null;
  hooks: Address | null;
  poolManager: Address | null;
};

/** The contracts a placement draws on (their addresses follow from the deployer's nonces). */
export type PlacementContext = Pick<Deployment, "v2" | "v3" | "v4" | "algebra">;

/** What the deployer puts in a pool at deployment (one per V3 position). */
export type PoolDeposit = {
  pool: DeployedPool;
  token0Key: TokenKey;
  token1Key: TokenKey;
  amount0: bigint;
  amount1: bigint;
  ticks?: { tickLower: number; tickUpper: number };
  /** Full-range families: the liquidity added (the amounts are then upper bounds of what it takes). */
  liquidity?: bigint;
};

/** A liquidity change the planner asks a family for: who, in which pool, adding or removing. */
export type LiquidityChange = { lp: Address; pool: DeployedPool; remove: boolean };

/** The routers of the families outside the Uniswap periphery. */
export type TradeRouters = { v4SwapRouter: Address; algebraCallee: Address };

export interface DevnetFamily {
  /** The family's registry name (`pools.protocol`). */
  readonly name: string;
  /**
   * Whether its pools trade on a random stream of their own, so that every other pool's history
   * is the same with or without them.
   */
  readonly ownStream: boolean;

  // Deployment (deploy.ts)
  /**
   * The deployment of its contracts by the deployer, in nonce order: those created before the
   * tokens (planDeployment counts on their nonces) and after them.
   */
  contractTxs(plan: Deployment): { beforeTokens: TxRequest[]; afterTokens: TxRequest[] };
  /** What it sets on the chain after the contracts, before any pool is created (V4: the hooks' code). */
  prepareChain?(rpc: DevnetRpc): Promise<void>;
  /** The pool's address (CREATE2 of its factory, or its id in a manager) and its fixed fields. */
  placePool(spec: PoolSpec, token0: Address, token1: Address, contracts: PlacementContext): PoolPlacement;
  /** The positions the deployer mints at deployment with position-manager ids (their ticks), in order. */
  deployerPositions(
    spec: PoolSpec,
    placement: PoolPlacement,
    token0: DeployedToken,
    token1: DeployedToken,
  ): { tickLower: number; tickUpper: number }[];
  /** What the deployer deposits in the pool. */
  deposits(pool: DeployedPool, spec: PoolSpec, plan: Deployment): PoolDeposit[];
  /** The transactions that create the pool (on its first deposit) and make a deposit. */
  creationTxs(deposit: PoolDeposit, plan: Deployment, created: Set<string>): TxRequest[];
  /** Who every account approves: for every token, and for the tokens of this family's pools only. */
  spenders(plan: Deployment): { everyToken: Address[]; ownTokens: Address[] };
  /** A check that the pool exists where planned: a factory's lookup answering its address, or a manager's storage slot that is non-zero. */
  deploymentCheck(
    pool: DeployedPool,
    plan: Deployment,
  ): { lookup: { to: Address; data: Hex } } | { slot: { address: Address; slot: Hex } };
  /** The pool-token approvals a liquidity provider needs before the simulator trades (V2: the LP token to the router). */
  providerApprovals(pool: DeployedPool, plan: Deployment): { token: Address; spender: Address }[];

  // State (pool-state.ts)
  /** eth_getStorageAt calls that read the pool's state at the latest block. */
  stateCalls(pool: DeployedPool): RpcCall[];
  /** The state from the answers of `stateCalls`, taken in order by `next`. */
  decodeState(pool: DeployedPool, next: () => bigint): PoolState;

  // Trading (trade-planning.ts, liquidity-planning.ts, simulator.ts)
  /** topic0 of its pools' Swap event (the simulator counts the swaps it mined by it). */
  readonly swapTopic: Hex;
  /** The fee of every hop of a route through its pools when the family fixes it; else the route names each hop's in `fees`. */
  routeFee?(route: RouteSpec, i: number): number;
  /** The transaction of a trade whose first pool is this family's. */
  tradeTx(periphery: PeripheryAddresses, trade: Trade, routers: TradeRouters): TxRequest;
  /** A provider's liquidity change in one of its pools. */
  planLiquidityChange(
    context: LiquidityContext,
    rng: Random,
    planned: LiquidityOutput,
    change: LiquidityChange,
  ): void;
}
