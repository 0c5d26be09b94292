import {
  type Address,
  encodeFunctionData,
  encodePacked,
  type Hex,
  maxUint128,
  maxUint256,
  zeroAddress,
} from "viem";
import { erc20Abi, positionManagerAbi, swapRouterAbi, v2RouterAbi, weth9Abi } from "./abis.js";
import type { TxRequest } from "./transactions.js";

// Builders of the transactions that go through the official Uniswap periphery (V2 Router02,
// V3 SwapRouter and NonfungiblePositionManager), as wallets send them: the transaction's `to` is
// the router and its `from` the wallet. Pure: they only encode; transactions.ts sends.

/** The periphery contracts a transaction is addressed to. */
export type PeripheryAddresses = { v2Router: Address; swapRouter: Address; positionManager: Address };

/**
 * Gas limits, about 1.5× what the transactions use at most on the devnet (a V3 swap crossing
 * several initialised ticks included). They are limits, not costs: the base fee is zero.
 */
export const gasLimits = {
  approve: 80_000n,
  wethDeposit: 80_000n,
  transfer: 80_000n,
  v2Swap: 250_000n,
  v2SwapPerExtraHop: 120_000n,
  v2AddLiquidity: 300_000n,
  v2AddLiquidityNewPair: 4_000_000n,
  v2RemoveLiquidity: 300_000n,
  v3Swap: 700_000n,
  v3SwapPerExtraHop: 500_000n,
  v3CreatePool: 6_500_000n,
  v3Mint: 900_000n,
  v3DecreaseAndCollect: 500_000n,
} as const;

/** No deadline: history blocks are dated in the past and live ones by the wall clock. */
const deadline = maxUint256;

/** A call of `from` to one of the periphery's contracts. */
const peripheryTx = (
  options: { periphery: PeripheryAddresses; from: Address },
  contract: keyof PeripheryAddresses,
  call: { data: Hex; gas: bigint; label: string },
): TxRequest => ({ from: options.from, to: options.periphery[contract], ...call });

/** A V2 pair's liquidity change through Router02, by its two tokens in either order. */
type V2PairOptions = { periphery: PeripheryAddresses; from: Address; tokenA: Address; tokenB: Address };

export function approveTx(options: {
  from: Address;
  token: Address;
  spender: Address;
  amount?: bigint;
  label?: string;
}): TxRequest {
  return {
    from: options.from,
    to: options.token,
    data: encodeFunctionData({
      abi: erc20Abi,
      functionName: "approve",
      args: [options.spender, options.amount ?? maxUint256],
    }),
    gas: gasLimits.approve,
    label: options.label ?? `approve ${options.token} for ${options.spender}`,
  };
}

export function wethDepositTx(options: { from: Address; weth: Address; amount: bigint }): TxRequest {
  return {
    from: options.from,
    to: options.weth,
    data: encodeFunctionData({ abi: weth9Abi, functionName: "deposit" }),
    value: options.amount,
    gas: gasLimits.wethDeposit,
    label: `wrap ${options.amount} wei of ETH`,
  };
}

/** Exact-input swap through V2 Router02 along `path` (two tokens: one pair; more: multi-hop). */
export function v2SwapTx(options: {
  periphery: PeripheryAddresses;
  from: Address;
  path: readonly Address[];
  amountIn: bigint;
  amountOutMin?: bigint;
  recipient?: Address;
}): TxRequest {
  if (options.path.length < 2) throw new RangeError("a V2 swap path needs at least two tokens");
  return {
    from: options.from,
    to: options.periphery.v2Router,
    data: encodeFunctionData({
      abi: v2RouterAbi,
      functionName: "swapExactTokensForTokens",
      args: [
        options.amountIn,
        options.amountOutMin ?? 0n,
        [...options.path],
        options.recipient ?? options.from,
        deadline,
      ],
    }),
    gas: gasLimits.v2Swap + gasLimits.v2SwapPerExtraHop * BigInt(options.path.length - 2),
    label: `V2 swap ${options.amountIn} along ${options.path.join(" → ")}`,
  };
}

/** Exact-input swap through the V3 SwapRouter: one pool (`exactInputSingle`) or a path (`exactInput`). */
export function v3SwapTx(options: {
  periphery: PeripheryAddresses;
  from: Address;
  /** Tokens of the route, and the fee tier of each hop (one fewer). */
  path: readonly Address[];
  fees: readonly number[];
  amountIn: bigint;
  amountOutMin?: bigint;
  recipient?: Address;
}): TxRequest {
  const { path, fees } = options;
  if (path.length < 2 || fees.length !== path.length - 1) {
    throw new RangeError("a V3 swap path needs n ≥ 2 tokens and n - 1 fees");
  }
  const recipient = options.recipient ?? options.from;
  const amountOutMinimum = options.amountOutMin ?? 0n;
  const label = `V3 swap ${options.amountIn} along ${path.join(" → ")} (fees ${fees.join(", ")})`;
  const gas = gasLimits.v3Swap + gasLimits.v3SwapPerExtraHop * BigInt(path.length - 2);
  if (path.length === 2) {
    const [tokenIn, tokenOut] = path as [Address, Address];
    return {
      from: options.from,
      to: options.periphery.swapRouter,
      data: encodeFunctionData({
        abi: swapRouterAbi,
        functionName: "exactInputSingle",
        args: [
          {
            tokenIn,
            tokenOut,
            fee: fees[0] as number,
            recipient,
            deadline,
            amountIn: options.amountIn,
            amountOutMinimum,
            sqrtPriceLimitX96: 0n,
          },
        ],
      }),
      gas,
      label,
    };
  }
  return {
    from: options.from,
    to: options.periphery.swapRouter,
    data: encodeFunctionData({
      abi: swapRouterAbi,
      functionName: "exactInput",
      args: [
        { path: encodeV3Path(path, fees), recipient, deadline, amountIn: options.amountIn, amountOutMinimum },
      ],
    }),
    gas,
    label,
  };
}

/** The packed path of V3's exactInput: token, fee (uint24), token, fee, …, token. */
export function encodeV3Path(tokens: readonly Address[], fees: readonly number[]) {
  const types: ("address" | "uint24")[] = [];
  const values: (Address | number)[] = [];
  tokens.forEach((token, i) => {
    types.push("address");
    values.push(token);
    const fee = fees[i];
    if (i < fees.length && fee !== undefined) {
      types.push("uint24");
      values.push(fee);
    }
  });
  return encodePacked(types, values);
}

/** Adds liquidity to a V2 pair through Router02 (creating the pair if it does not exist). */
export function v2AddLiquidityTx(
  options: V2PairOptions & { amountA: bigint; amountB: bigint; newPair?: boolean },
): TxRequest {
  const { tokenA, tokenB, amountA, amountB, from } = options;
  const data = encodeFunctionData({
    abi: v2RouterAbi,
    functionName: "addLiquidity",
    args: [tokenA, tokenB, amountA, amountB, 0n, 0n, from, deadline],
  });
  const gas = options.newPair ? gasLimits.v2AddLiquidityNewPair : gasLimits.v2AddLiquidity;
  return peripheryTx(options, "v2Router", {
    data,
    gas,
    label: `V2 add liquidity ${amountA} ${tokenA} + ${amountB} ${tokenB}`,
  });
}

/** Burns `liquidity` LP tokens of a V2 pair through Router02 (the pair must be approved to it). */
export function v2RemoveLiquidityTx(options: V2PairOptions & { liquidity: bigint }): TxRequest {
  const { tokenA, tokenB, liquidity, from } = options;
  const data = encodeFunctionData({
    abi: v2RouterAbi,
    functionName: "removeLiquidity",
    args: [tokenA, tokenB, liquidity, 0n, 0n, from, deadline],
  });
  const label = `V2 remove ${liquidity} liquidity of ${tokenA}/${tokenB}`;
  return peripheryTx(options, "v2Router", { data, gas: gasLimits.v2RemoveLiquidity, label });
}

/** A V3 pool by its tokens and fee tier: token0 < token1. */
type V3PoolOptions = {
  periphery: PeripheryAddresses;
  from: Address;
  token0: Address;
  token1: Address;
  fee: number;
};

/** Creates and initialises a V3 pool through the position manager. */
export function v3CreatePoolTx(options: V3PoolOptions & { sqrtPriceX96: bigint }): TxRequest {
  const { token0, token1, fee } = options;
  const data = encodeFunctionData({
    abi: positionManagerAbi,
    functionName: "createAndInitializePoolIfNecessary",
    args: [token0, token1, fee, options.sqrtPriceX96],
  });
  const label = `V3 create pool ${token0}/${token1} fee ${fee}`;
  return peripheryTx(options, "positionManager", { data, gas: gasLimits.v3CreatePool, label });
}

/** Mints a V3 position through the position manager; it takes what the range needs of each amount. */
export function v3MintTx(
  options: V3PoolOptions & { tickLower: number; tickUpper: number; amount0: bigint; amount1: bigint },
): TxRequest {
  const { token0, token1, fee, tickLower, tickUpper } = options;
  const position = { token0, token1, fee, tickLower, tickUpper };
  const data = encodeFunctionData({
    abi: positionManagerAbi,
    functionName: "mint",
    args: [
      {
        ...position,
        amount0Desired: options.amount0,
        amount1Desired: options.amount1,
        amount0Min: 0n,
        amount1Min: 0n,
        recipient: options.from,
        deadline,
      },
    ],
  });
  const label = `V3 mint [${tickLower}, ${tickUpper}] in ${token0}/${token1} fee ${fee}`;
  return peripheryTx(options, "positionManager", { data, gas: gasLimits.v3Mint, label });
}

/**
 * Removes `liquidity` from a V3 position and collects the tokens (and fees) to the owner, in one
 * transaction (the position manager's multicall), as the Uniswap interface does.
 */
export function v3RemoveLiquidityTx(options: {
  periphery: PeripheryAddresses;
  from: Address;
  tokenId: bigint;
  liquidity: bigint;
}): TxRequest {
  const decrease = encodeFunctionData({
    abi: positionManagerAbi,
    functionName: "decreaseLiquidity",
    args: [
      { tokenId: options.tokenId, liquidity: options.liquidity, amount0Min: 0n, amount1Min: 0n, deadline },
    ],
  });
  const collect = encodeFunctionData({
    abi: positionManagerAbi,
    functionName: "collect",
    args: [
      { tokenId: options.tokenId, recipient: options.from, amount0Max: maxUint128, amount1Max: maxUint128 },
    ],
  });
  return {
    from: options.from,
    to: options.periphery.positionManager,
    data: encodeFunctionData({
      abi: positionManagerAbi,
      functionName: "multicall",
      args: [[decrease, collect]],
    }),
    gas: gasLimits.v3DecreaseAndCollect,
    label: `V3 remove ${options.liquidity} liquidity of position ${options.tokenId}`,
  };
}

/** The position manager has no token descriptor: tokenURI() is not needed by anything here. */
export const noTokenDescriptor = zeroAddress;
