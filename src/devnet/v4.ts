// Uniswap V4 on the devnet: the PoolManager and its test routers as published in
// `@uniswap/v4-core` (compiled by Uniswap: solc 0.8.26, via-IR, EVM cancun), the hooks the demo's
// pools use, and the transactions that initialise, trade and provide liquidity. Pure: these only
// read the npm artifacts and encode; deploy.ts and the simulator send.
import {
  type Address,
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  encodePacked,
  type Hex,
  keccak256,
  numberToHex,
  parseAbi,
  zeroAddress,
} from "viem";
import { artifactHex, npmArtifact } from "./artifacts.js";
import type { TxRequest } from "./transactions.js";

/** The contracts of `@uniswap/v4-core` the devnet deploys, by their artifact's name under `out/`. */
export type V4Artifact =
  | "PoolManager"
  | "PoolSwapTest"
  | "PoolModifyLiquidityTest"
  | "PoolDonateTest"
  | "EmptyTestHooks";

function readArtifact(name: V4Artifact): { bytecode: Hex; deployedBytecode: Hex } {
  const artifact = npmArtifact<{ bytecode: { object: string }; deployedBytecode: { object: string } }>(
    `@uniswap/v4-core/out/${name}.sol/${name}.json`,
  );
  return {
    bytecode: artifactHex(artifact.bytecode.object),
    deployedBytecode: artifactHex(artifact.deployedBytecode.object),
  };
}

/** Creation code of a v4-core contract as published on npm. */
export function v4Bytecode(name: V4Artifact): Hex {
  return readArtifact(name).bytecode;
}

/** Runtime code of a v4-core contract as published on npm (placed at a hook address with hardhat_setCode). */
export function v4RuntimeCode(name: V4Artifact): Hex {
  return readArtifact(name).deployedBytecode;
}

const poolKeyType =
  "(address currency0, address currency1, uint24 fee, int24 tickSpacing, address hooks)" as const;

export const poolManagerAbi = parseAbi([
  "constructor(address initialOwner)",
  `function initialize(${poolKeyType} key, uint160 sqrtPriceX96) returns (int24 tick)`,
]);
export const poolSwapTestAbi = parseAbi([
  "constructor(address manager)",
  `function swap(${poolKeyType} key, (bool zeroForOne, int256 amountSpecified, uint160 sqrtPriceLimitX96) params, (bool takeClaims, bool settleUsingBurn) testSettings, bytes hookData) payable returns (int256 delta)`,
]);
export const poolModifyLiquidityTestAbi = parseAbi([
  "constructor(address manager)",
  `function modifyLiquidity(${poolKeyType} key, (int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt) params, bytes hookData) payable returns (int256 delta)`,
]);
export const poolDonateTestAbi = parseAbi([
  "constructor(address manager)",
  `function donate(${poolKeyType} key, uint256 amount0, uint256 amount1, bytes hookData) payable returns (int256 delta)`,
]);

/** The PoolManager's events (v4-core IPoolManager), to find them in the node's logs. */
export const poolManagerEventsAbi = parseAbi([
  "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)",
  "event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)",
  "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)",
  "event Donate(bytes32 indexed id, address indexed sender, uint256 amount0, uint256 amount1)",
]);

/** A V4 pool's key; its PoolId is the hash of it. */
export type PoolKey = {
  currency0: Address;
  currency1: Address;
  fee: number;
  tickSpacing: number;
  hooks: Address;
};

/** PoolId: keccak256(abi.encode(key)), as v4-core's PoolIdLibrary computes it. */
export function poolIdOf(key: PoolKey): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: "address" }, { type: "address" }, { type: "uint24" }, { type: "int24" }, { type: "address" }],
      [key.currency0, key.currency1, key.fee, key.tickSpacing, key.hooks],
    ),
  );
}

/**
 * Hook permission flags (v4-core Hooks.sol): a hook's address carries them in its low 14 bits and
 * the PoolManager calls exactly the hooks whose bit is set.
 */
export const hookFlags = {
  beforeSwap: 1 << 7,
  afterSwap: 1 << 6,
  beforeSwapReturnDelta: 1 << 3,
} as const;

/** The demo's hooks: what each may do, and so which bits its address carries. */
export type HookKind = "swap" | "return-delta";

/**
 * Where each hook's code is placed (hardhat_setCode): v4-core's EmptyTestHooks, which answers every
 * hook with its selector and zero deltas, at an address whose low 14 bits are the permissions.
 * - "swap": beforeSwap and afterSwap, no return-delta permission: its pool's amounts are as paid;
 * - "return-delta": beforeSwap with beforeSwapReturnDelta: it may change a swap's amounts (here it
 *   returns zero), so the indexer must never let its pool set a price.
 */
export const hookAddresses: Readonly<Record<HookKind, Address>> = {
  swap: `0x${"0".repeat(36)}${(0x4000 | hookFlags.beforeSwap | hookFlags.afterSwap).toString(16)}` as Address,
  "return-delta":
    `0x${"0".repeat(36)}${(0x8000 | hookFlags.beforeSwap | hookFlags.beforeSwapReturnDelta).toString(16)}` as Address,
};

/** The native coin as a V4 currency. */
export const nativeCurrency: Address = zeroAddress;

/** Gas limits of the V4 transactions (limits, not costs: the base fee is zero). */
export const v4GasLimits = {
  deployManager: 8_000_000n,
  deployRouter: 3_000_000n,
  initialize: 500_000n,
  swap: 1_000_000n,
  modifyLiquidity: 1_000_000n,
  donate: 500_000n,
} as const;

/** TickMath's bounds of the sqrt price (Uniswap's; Algebra's are the same). */
export const MIN_SQRT_PRICE = 4295128739n;
export const MAX_SQRT_PRICE = 1461446703485210103287273052203988822378723970342n;

export function v4DeployManagerTx(from: Address, owner: Address): TxRequest {
  return {
    from,
    data: encodeDeployData({ abi: poolManagerAbi, bytecode: v4Bytecode("PoolManager"), args: [owner] }),
    gas: v4GasLimits.deployManager,
    label: "deploy PoolManager",
  };
}

export function v4DeployRouterTx(
  from: Address,
  name: "PoolSwapTest" | "PoolModifyLiquidityTest" | "PoolDonateTest",
  manager: Address,
): TxRequest {
  return {
    from,
    data: encodeDeployData({ abi: poolSwapTestAbi, bytecode: v4Bytecode(name), args: [manager] }),
    gas: v4GasLimits.deployRouter,
    label: `deploy ${name}`,
  };
}

/** The PoolManager (owned by its deployer) and the test routers that trade and provide through it, in nonce order. */
export const v4DeployTxs = (from: Address, manager: Address): TxRequest[] => [
  v4DeployManagerTx(from, from),
  ...(["PoolSwapTest", "PoolModifyLiquidityTest", "PoolDonateTest"] as const).map((name) =>
    v4DeployRouterTx(from, name, manager),
  ),
];

export function v4InitializeTx(options: {
  from: Address;
  manager: Address;
  key: PoolKey;
  sqrtPriceX96: bigint;
}): TxRequest {
  return {
    from: options.from,
    to: options.manager,
    data: encodeFunctionData({
      abi: poolManagerAbi,
      functionName: "initialize",
      args: [options.key, options.sqrtPriceX96],
    }),
    gas: v4GasLimits.initialize,
    label: `initialize V4 pool ${poolIdOf(options.key)}`,
  };
}

/**
 * Exact-input swap through PoolSwapTest (it takes the input with transferFrom, or from the value
 * sent when the input is the native coin, and pays the output to the sender). No price limit
 * beyond the protocol's bounds, as the routers' exact-input swaps without one.
 */
export function v4SwapTx(options: {
  router: Address;
  from: Address;
  key: PoolKey;
  zeroForOne: boolean;
  amountIn: bigint;
}): TxRequest {
  const { key, zeroForOne, amountIn } = options;
  const nativeIn = zeroForOne && key.currency0 === nativeCurrency;
  return {
    from: options.from,
    to: options.router,
    data: encodeFunctionData({
      abi: poolSwapTestAbi,
      functionName: "swap",
      args: [
        key,
        {
          zeroForOne,
          // Negative: exact input.
          amountSpecified: -amountIn,
          sqrtPriceLimitX96: zeroForOne ? MIN_SQRT_PRICE + 1n : MAX_SQRT_PRICE - 1n,
        },
        { takeClaims: false, settleUsingBurn: false },
        "0x",
      ],
    }),
    ...(nativeIn ? { value: amountIn } : {}),
    gas: v4GasLimits.swap,
    label: `V4 swap ${amountIn} ${zeroForOne ? "0→1" : "1→0"} in ${poolIdOf(key)}`,
  };
}

/**
 * Adds (liquidityDelta > 0) or removes liquidity through PoolModifyLiquidityTest. The position is
 * the router's, told apart by `salt`; an addition to a native-coin pool sends `value` (at least
 * the coin it needs; the router returns the rest).
 */
export function v4ModifyLiquidityTx(options: {
  router: Address;
  from: Address;
  key: PoolKey;
  tickLower: number;
  tickUpper: number;
  liquidityDelta: bigint;
  salt: Hex;
  value?: bigint;
}): TxRequest {
  return {
    from: options.from,
    to: options.router,
    data: encodeFunctionData({
      abi: poolModifyLiquidityTestAbi,
      functionName: "modifyLiquidity",
      args: [
        options.key,
        {
          tickLower: options.tickLower,
          tickUpper: options.tickUpper,
          liquidityDelta: options.liquidityDelta,
          salt: options.salt,
        },
        "0x",
      ],
    }),
    ...(options.value !== undefined && options.value > 0n ? { value: options.value } : {}),
    gas: v4GasLimits.modifyLiquidity,
    label: `V4 ${options.liquidityDelta > 0n ? "add" : "remove"} liquidity ${options.liquidityDelta} in ${poolIdOf(options.key)}`,
  };
}

/** A donation to a pool's in-range liquidity through PoolDonateTest. */
export function v4DonateTx(options: {
  router: Address;
  from: Address;
  key: PoolKey;
  amount0: bigint;
  amount1: bigint;
}): TxRequest {
  const { key, amount0, amount1 } = options;
  return {
    from: options.from,
    to: options.router,
    data: encodeFunctionData({
      abi: poolDonateTestAbi,
      functionName: "donate",
      args: [key, amount0, amount1, "0x"],
    }),
    ...(key.currency0 === nativeCurrency && amount0 > 0n ? { value: amount0 } : {}),
    gas: v4GasLimits.donate,
    label: `V4 donate ${amount0}/${amount1} to ${poolIdOf(key)}`,
  };
}

/** A position's salt: the provider's address, so each provider's position is its own. */
export function saltOf(account: Address): Hex {
  return encodeAbiParameters([{ type: "address" }], [account]);
}

// PoolManager storage (v4-core StateLibrary): `pools` is mapping slot 6; a pool's Pool.State
// starts at keccak256(poolId . 6) with Slot0 (sqrtPriceX96 in the low 160 bits) and its active
// liquidity three slots further.
const POOLS_SLOT = 6n;
const LIQUIDITY_OFFSET = 3n;

/** The storage slots of a pool's Slot0 and active liquidity inside the PoolManager. */
export function poolStateSlots(poolId: Hex): { slot0: Hex; liquidity: Hex } {
  const stateSlot = keccak256(encodePacked(["bytes32", "uint256"], [poolId, POOLS_SLOT]));
  return { slot0: stateSlot, liquidity: numberToHex(BigInt(stateSlot) + LIQUIDITY_OFFSET, { size: 32 }) };
}

/**
 * Liquidity L of a full-range-like position worth about `usd` at `sqrtPrice` (float, raw units):
 * each side holds about usd/2, amount1 ≈ L·√P, so L = half of it in token1 units over √P.
 */
export function liquidityForUsd(
  usd: number,
  sqrtPrice: number,
  token1: { priceUsd: number; decimals: number },
): bigint {
  const amount1 = (usd / 2 / token1.priceUsd) * 10 ** token1.decimals;
  return BigInt(Math.floor(amount1 / sqrtPrice));
}
