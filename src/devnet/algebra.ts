// Algebra Integral on the devnet: the factory, pool deployer and pool as published in
// `@cryptoalgebra/integral-core` (compiled by Algebra, hardhat artifacts with bytecode and ABI: no
// solc here), and its test callee (TestAlgebraCallee, the package's own router for mints and
// swaps). Pure: these only read the npm artifacts and encode; deploy.ts and the simulator send.
import {
  type Address,
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  keccak256,
  maxUint128,
  numberToHex,
  parseAbi,
} from "viem";
import { npmArtifact } from "./artifacts.js";
import type { TxRequest } from "./transactions.js";
import { MAX_SQRT_PRICE, MIN_SQRT_PRICE } from "./v4.js";

/** The contracts of `@cryptoalgebra/integral-core` the devnet deploys (artifacts under `artifacts/contracts/`). */
export type AlgebraArtifact = "AlgebraFactory" | "AlgebraPoolDeployer" | "AlgebraPool" | "TestAlgebraCallee";

/** Creation code of an Algebra Integral contract as published on npm. */
export function algebraBytecode(name: AlgebraArtifact): Hex {
  const folder = name === "TestAlgebraCallee" ? "test/" : "";
  const path = `@cryptoalgebra/integral-core/artifacts/contracts/${folder}${name}.sol/${name}.json`;
  return npmArtifact<{ bytecode: Hex }>(path).bytecode;
}

export const algebraFactoryAbi = parseAbi([
  "constructor(address _poolDeployer)",
  "function createPool(address tokenA, address tokenB, bytes data) returns (address pool)",
  "function poolByPair(address tokenA, address tokenB) view returns (address)",
  "function defaultCommunityFee() view returns (uint16)",
]);
export const algebraPoolDeployerAbi = parseAbi(["constructor(address _factory)"]);
export const algebraPoolAbi = parseAbi([
  "function initialize(uint160 initialPrice)",
  "function globalState() view returns (uint160 price, int24 tick, uint16 lastFee, uint8 pluginConfig, uint16 communityFee, bool unlocked)",
  "function liquidity() view returns (uint128)",
  "function burn(int24 bottomTick, int24 topTick, uint128 amount, bytes data) returns (uint256 amount0, uint256 amount1)",
  "function collect(address recipient, int24 bottomTick, int24 topTick, uint128 amount0Requested, uint128 amount1Requested) returns (uint128 amount0, uint128 amount1)",
]);
/** The pool's events as Integral 1.2.5 emits them (Swap and Burn carry the plugin's fee), to find them in the node's logs. */
export const algebraPoolEventsAbi = parseAbi([
  "event Pool(address indexed token0, address indexed token1, address pool)",
  "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick, uint24 overrideFee, uint24 pluginFee)",
  "event Burn(address indexed owner, int24 indexed bottomTick, int24 indexed topTick, uint128 liquidityAmount, uint256 amount0, uint256 amount1, uint24 pluginFee)",
  "event Mint(address sender, address indexed owner, int24 indexed bottomTick, int24 indexed topTick, uint128 liquidityAmount, uint256 amount0, uint256 amount1)",
  "event Collect(address indexed owner, address recipient, int24 indexed bottomTick, int24 indexed topTick, uint128 amount0, uint128 amount1)",
]);
export const algebraCalleeAbi = parseAbi([
  "function mint(address pool, address recipient, int24 bottomTick, int24 topTick, uint128 amount) returns (uint256 amount0Owed, uint256 amount1Owed, uint256 resultLiquidity)",
  "function swapExact0For1(address pool, uint256 amount0In, address recipient, uint160 limitSqrtPrice)",
  "function swapExact1For0(address pool, uint256 amount1In, address recipient, uint160 limitSqrtPrice)",
]);

/** Gas limits of the Algebra transactions (limits, not costs: the base fee is zero). */
export const algebraGasLimits = {
  deploy: 16_000_000n,
  createPool: 8_000_000n,
  initialize: 300_000n,
  mint: 1_000_000n,
  swap: 1_000_000n,
  burn: 400_000n,
  collect: 300_000n,
} as const;

/** Hash of the pool's creation code: the CREATE2 init code hash of every pool of the deployer. */
export function algebraPoolInitCodeHash(): Hex {
  return keccak256(algebraBytecode("AlgebraPool"));
}

/**
 * A pool's address: CREATE2 by the pool deployer, salted with the sorted tokens (a pool of the
 * factory's own, not a custom deployer's), as the factory's computePoolAddress computes it.
 */
export function algebraPoolAddress(poolDeployer: Address, token0: Address, token1: Address): Address {
  return getContractAddress({
    opcode: "CREATE2",
    from: poolDeployer,
    salt: keccak256(encodeAbiParameters([{ type: "address" }, { type: "address" }], [token0, token1])),
    bytecodeHash: algebraPoolInitCodeHash(),
  }).toLowerCase() as Address;
}

/** The deployment of the factory: its constructor names the pool deployer, deployed right after it. */
export function algebraDeployTxs(
  from: Address,
  addresses: { factory: Address; poolDeployer: Address },
): TxRequest[] {
  const deploy = (data: Hex, label: string): TxRequest => ({
    from,
    data,
    gas: algebraGasLimits.deploy,
    label: `deploy ${label}`,
  });
  return [
    deploy(
      encodeDeployData({
        abi: algebraFactoryAbi,
        bytecode: algebraBytecode("AlgebraFactory"),
        args: [addresses.poolDeployer],
      }),
      "AlgebraFactory",
    ),
    deploy(
      encodeDeployData({
        abi: algebraPoolDeployerAbi,
        bytecode: algebraBytecode("AlgebraPoolDeployer"),
        args: [addresses.factory],
      }),
      "AlgebraPoolDeployer",
    ),
    deploy(algebraBytecode("TestAlgebraCallee"), "TestAlgebraCallee"),
  ];
}

/** Creates the pool (the factory's `Pool` event) and sets its first price (the pool's `Initialize`). */
export function algebraCreatePoolTxs(options: {
  from: Address;
  factory: Address;
  pool: Address;
  token0: Address;
  token1: Address;
  sqrtPriceX96: bigint;
}): TxRequest[] {
  const { from } = options;
  return [
    {
      from,
      to: options.factory,
      data: encodeFunctionData({
        abi: algebraFactoryAbi,
        functionName: "createPool",
        args: [options.token0, options.token1, "0x"],
      }),
      gas: algebraGasLimits.createPool,
      label: `create Algebra pool ${options.pool}`,
    },
    {
      from,
      to: options.pool,
      data: encodeFunctionData({
        abi: algebraPoolAbi,
        functionName: "initialize",
        args: [options.sqrtPriceX96],
      }),
      gas: algebraGasLimits.initialize,
      label: `initialize Algebra pool ${options.pool}`,
    },
  ];
}

/**
 * Adds liquidity through TestAlgebraCallee: the position is `from`'s (the pool's `owner`), and
 * the callee pays the pool from `from`'s approved tokens in the mint callback.
 */
export function algebraMintTx(options: {
  callee: Address;
  from: Address;
  pool: Address;
  tickLower: number;
  tickUpper: number;
  liquidity: bigint;
}): TxRequest {
  return {
    from: options.from,
    to: options.callee,
    data: encodeFunctionData({
      abi: algebraCalleeAbi,
      functionName: "mint",
      args: [options.pool, options.from, options.tickLower, options.tickUpper, options.liquidity],
    }),
    gas: algebraGasLimits.mint,
    label: `Algebra mint ${options.liquidity} in ${options.pool}`,
  };
}

/**
 * Removes liquidity as its owner does, on the pool itself: Burn credits the position, Collect
 * pays it out (both are the pool's events).
 */
export function algebraRemoveLiquidityTxs(options: {
  from: Address;
  pool: Address;
  tickLower: number;
  tickUpper: number;
  liquidity: bigint;
}): TxRequest[] {
  const { from, pool, tickLower, tickUpper } = options;
  return [
    {
      from,
      to: pool,
      data: encodeFunctionData({
        abi: algebraPoolAbi,
        functionName: "burn",
        args: [tickLower, tickUpper, options.liquidity, "0x"],
      }),
      gas: algebraGasLimits.burn,
      label: `Algebra burn ${options.liquidity} in ${pool}`,
    },
    {
      from,
      to: pool,
      data: encodeFunctionData({
        abi: algebraPoolAbi,
        functionName: "collect",
        args: [from, tickLower, tickUpper, maxUint128, maxUint128],
      }),
      gas: algebraGasLimits.collect,
      label: `Algebra collect from ${pool}`,
    },
  ];
}

/** Exact-input swap through TestAlgebraCallee (it takes the input from `from` in the swap callback), no price limit beyond the protocol's bounds. */
export function algebraSwapTx(options: {
  callee: Address;
  from: Address;
  pool: Address;
  zeroForOne: boolean;
  amountIn: bigint;
}): TxRequest {
  const { zeroForOne } = options;
  return {
    from: options.from,
    to: options.callee,
    data: encodeFunctionData({
      abi: algebraCalleeAbi,
      functionName: zeroForOne ? "swapExact0For1" : "swapExact1For0",
      args: [
        options.pool,
        options.amountIn,
        options.from,
        zeroForOne ? MIN_SQRT_PRICE + 1n : MAX_SQRT_PRICE - 1n,
      ],
    }),
    gas: algebraGasLimits.swap,
    label: `Algebra swap ${options.amountIn} ${zeroForOne ? "0→1" : "1→0"} in ${options.pool}`,
  };
}

/**
 * AlgebraPool storage (Integral 1.2.5, fixed by the deployed bytecode): globalState packs the
 * price in the low 160 bits of slot 2; slot 9 packs prevTickGlobal and nextTickGlobal (24 bits
 * each) below the active liquidity (128 bits). deploy.test.ts checks them against the views.
 */
export const algebraStorage = {
  globalStateSlot: numberToHex(2),
  liquiditySlot: numberToHex(9),
  liquidityShift: 48n,
} as const;
