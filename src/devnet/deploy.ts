import {
  type Address,
  decodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  stringToHex,
} from "viem";
import { LaunchError } from "../internal/errors.js";
import { createSilentLogger, type Logger } from "../internal/logger.js";
import {
  bytes32MetadataTokenAbi,
  devnetTokenAbi,
  positionManagerAbi,
  revertingDecimalsTokenAbi,
} from "./abis.js";
import {
  initCodeHash,
  uniswapBytecode,
  V2_PAIR_INIT_CODE_HASH,
  V3_POOL_INIT_CODE_HASH,
} from "./artifacts.js";
import { type CompiledContracts, compileDevnetContracts } from "./compile.js";
import { devnetFamilies, devnetFamilyOf, type PoolDeposit } from "./families/index.js";
import { deployTx } from "./families/shared.js";
import { type Protocol, poolSpecs, type TokenKey, type TokenMetadataKind, tokenSpecs } from "./market.js";
import { approveTx, gasLimits, type PeripheryAddresses, wethDepositTx } from "./periphery.js";
import { createRandom } from "./random.js";
import { createDevnetRpc, type DevnetRpc } from "./rpc.js";
import { executeTransactions, readNonces, type TxRequest } from "./transactions.js";
import { nativeCurrency, type PoolKey } from "./v4.js";

export type DeployedToken = {
  key: TokenKey;
  address: Address;
  /** What symbol() and name() answer (decoded from bytes32 for the MKR-like token). */
  symbol: string;
  name: string;
  /** What decimals() answers; null when it reverts. */
  decimals: number | null;
  /** The unit of its amounts in the simulator (decimals, or 18 when decimals() reverts). */
  unitDecimals: number;
  metadata: TokenMetadataKind;
  /** USD price its pools were initialised at. */
  initialPriceUsd: number;
};

export type DeployedPool = {
  key: string;
  /** The pool's contract; for V4 its 32-byte PoolId inside the PoolManager. */
  address: Address;
  protocol: Protocol;
  /** Hundredths of a bip; 3000 for V2 pairs. */
  fee: number;
  /** V3, V4 and Algebra. */
  tickSpacing: number | null;
  /** V4: the hook contract (address zero for none); null for V2 and V3. */
  hooks: Address | null;
  /** V4: the PoolManager that holds the pool (its state is read there); null for V2 and V3. */
  poolManager: Address | null;
  /** token0 is address zero (the native coin) on a V4 pool against ETH; its key is then WETH's, whose price it has. */
  token0: Address;
  token1: Address;
  token0Key: TokenKey;
  token1Key: TokenKey;
  /** USD value of both sides deposited at deployment. */
  initialLiquidityUsd: number;
};

/** A V3 position minted at deployment (token ids are sequential from 1). */
export type DeployedPosition = {
  tokenId: number;
  poolKey: string;
  owner: Address;
  tickLower: number;
  tickUpper: number;
};

/** Everything deployed on the devnet; plain JSON-compatible data. */
export type Deployment = {
  chainId: number;
  seed: number;
  accounts: {
    /** Deployed every contract, holds the initial liquidity; nonce 0 must be free. */
    deployer: Address;
    /** Add and remove liquidity during the simulated history. */
    liquidityProviders: Address[];
    /** Trade in the simulated history. */
    traders: Address[];
  };
  weth: Address;
  tokens: Record<TokenKey, DeployedToken>;
  v2: { factory: Address; router: Address; pairInitCodeHash: Hex };
  v3: { factory: Address; positionManager: Address; swapRouter: Address; poolInitCodeHash: Hex };
  /** v4-core's PoolManager and its test routers (PoolSwapTest, PoolModifyLiquidityTest, PoolDonateTest). */
  v4: { poolManager: Address; swapRouter: Address; modifyLiquidityRouter: Address; donateRouter: Address };
  /** Algebra Integral's factory and pool deployer, and the package's TestAlgebraCallee that mints and swaps. */
  algebra: { factory: Address; poolDeployer: Address; callee: Address };
  pools: DeployedPool[];
  positions: DeployedPosition[];
  /** The last block of the deployment; everything after it is trading. */
  blockNumber: number;
};

/** What the deployment gives every account, per token (the deployer gets it on top of the pools' needs). */
const fundingUsd = 50_000_000;
/** Accounts the roles need: the deployer, four liquidity providers and at least twenty traders. */
const minAccounts = 25;
const liquidityProviderCount = 4;

/** Our contracts deployed by the deployer after the Uniswap ones, in this order (nonce 6 onwards). */
const uniswapNonces = { weth: 0, v2Factory: 1, v2Router: 2, v3Factory: 3, positionManager: 4, swapRouter: 5 };
const firstTokenNonce = 6;

/**
 * The deployment's addresses and amounts, computed without a node: contract addresses follow
 * from the deployer's nonces (CREATE) and pool addresses from the factories (CREATE2), so the
 * same accounts give the same addresses on every start. The seed only moves initial prices
 * (±3 %), never an address.
 */
export function planDeployment(options: {
  chainId: number;
  seed: number;
  accounts: readonly Address[];
}): Deployment {
  const accounts = options.accounts.map((a) => a.toLowerCase() as Address);
  if (accounts.length < minAccounts) {
    throw new LaunchError(
      `the devnet needs at least ${minAccounts} unlocked accounts, the node has ${accounts.length}`,
    );
  }
  const deployer = accounts[0] as Address;
  const created = (nonce: number) =>
    getContractAddress({ from: deployer, nonce: BigInt(nonce) }).toLowerCase() as Address;
  const random = createRandom(options.seed).fork("initial-prices");

  const tokens = {} as Record<TokenKey, DeployedToken>;
  let nonce = firstTokenNonce;
  for (const spec of tokenSpecs) {
    const stable = spec.dailyVolatility === 0;
    // Drawn for every token (stablecoins too) so that one token's draw never shifts another's.
    const jitter = Math.exp(0.03 * random.normal());
    tokens[spec.key] = {
      key: spec.key,
      address: spec.key === "WETH" ? created(uniswapNonces.weth) : created(nonce++),
      symbol: spec.symbol,
      name: spec.name,
      decimals: spec.metadata === "reverting-decimals" ? null : spec.decimals,
      unitDecimals: spec.decimals,
      metadata: spec.metadata,
      initialPriceUsd: stable ? spec.priceUsd : roundPrice(spec.priceUsd * jitter),
    };
  }

  // After the tokens and the transaction enabling V3's fee tier 100: the PoolManager and its routers.
  const v4Nonce = firstTokenNonce + tokenSpecs.length;
  const v4 = {
    poolManager: created(v4Nonce),
    swapRouter: created(v4Nonce + 1),
    modifyLiquidityRouter: created(v4Nonce + 2),
    donateRouter: created(v4Nonce + 3),
  };
  // Then Algebra's factory, its pool deployer (whose address the factory's constructor takes) and the callee.
  const algebra = {
    factory: created(v4Nonce + 4),
    poolDeployer: created(v4Nonce + 5),
    callee: created(v4Nonce + 6),
  };
  const v2 = {
    factory: created(uniswapNonces.v2Factory),
    router: created(uniswapNonces.v2Router),
    pairInitCodeHash: V2_PAIR_INIT_CODE_HASH,
  };
  const v3 = {
    factory: created(uniswapNonces.v3Factory),
    positionManager: created(uniswapNonces.positionManager),
    swapRouter: created(uniswapNonces.swapRouter),
    poolInitCodeHash: V3_POOL_INIT_CODE_HASH,
  };
  const pools: DeployedPool[] = [];
  const positions: DeployedPosition[] = [];
  for (const spec of poolSpecs) {
    // A native-coin V4 pool holds ETH itself where the others hold WETH.
    const side = (key: TokenKey) =>
      spec.native === true && key === "WETH" ? { ...tokens.WETH, address: nativeCurrency } : tokens[key];
    const [t0, t1] = sortTokens(side(spec.base), side(spec.quote));
    const family = devnetFamilyOf(spec.protocol);
    const placement = family.placePool(spec, t0.address, t1.address, { v2, v3, v4, algebra });
    pools.push({
      key: spec.key,
      address: placement.address,
      protocol: spec.protocol,
      fee: spec.fee,
      tickSpacing: placement.tickSpacing,
      hooks: placement.hooks,
      poolManager: placement.poolManager,
      token0: t0.address,
      token1: t1.address,
      token0Key: t0.key,
      token1Key: t1.key,
      initialLiquidityUsd: spec.fullRangeUsd + (spec.ranges ?? []).reduce((sum, r) => sum + r.usd, 0),
    });
    for (const ticks of family.deployerPositions(spec, placement, t0, t1)) {
      positions.push({ tokenId: positions.length + 1, poolKey: spec.key, owner: deployer, ...ticks });
    }
  }

  return {
    chainId: options.chainId,
    seed: options.seed,
    accounts: {
      deployer,
      liquidityProviders: accounts.slice(1, 1 + liquidityProviderCount),
      traders: accounts.slice(1 + liquidityProviderCount),
    },
    weth: tokens.WETH.address,
    tokens,
    v2,
    v3,
    v4,
    algebra,
    pools,
    positions,
    blockNumber: 0,
  };
}

/**
 * Deploys the market on a fresh node: WETH9, the official Uniswap V2 and V3 contracts, the
 * tokens, every pool with its liquidity; funds every unlocked account with each token (and
 * wrapped ETH) and approves the routers and the position manager for it, so any account can
 * trade at once. Deterministic: see planDeployment.
 */
export async function deployMarket(options: {
  rpcUrl: string;
  seed: number;
  logger?: Logger;
  contracts?: CompiledContracts;
}): Promise<Deployment> {
  const startedAt = performance.now();
  const rpc = createDevnetRpc(options.rpcUrl);
  const [chainIdHex, accounts, automine] = await Promise.all([
    rpc.request<Hex>("eth_chainId"),
    rpc.request<Address[]>("eth_accounts"),
    rpc.request<boolean>("hardhat_getAutomine"),
  ]);
  const plan = planDeployment({ chainId: Number(chainIdHex), seed: options.seed, accounts });
  const { deployer } = plan.accounts;
  const nonces = await readNonces(rpc, accounts);
  if (nonces.get(deployer) !== 0) {
    throw new LaunchError(
      `deployMarket needs a fresh node: the deployer ${deployer} has already sent ${nonces.get(deployer)} transaction(s)`,
    );
  }
  for (const [name, expected] of [
    ["v2Pair", V2_PAIR_INIT_CODE_HASH],
    ["v3Pool", V3_POOL_INIT_CODE_HASH],
  ] as const) {
    if (initCodeHash(name) !== expected) {
      throw new LaunchError(
        `the npm artifact of ${name} does not hash to the init code hash the periphery expects`,
      );
    }
  }
  const contracts =
    options.contracts ?? compileDevnetContracts({ logger: options.logger ?? createSilentLogger() });

  await rpc.request("evm_setAutomine", [false]);
  try {
    // Contracts first, in the nonce order planDeployment assumed; everything else calls them, and
    // a call to an address without code would succeed silently.
    await executeTransactions(rpc, nonces, contractDeployments(plan, contracts));
    // What a family sets on the chain before any pool names it (V4: the hooks' code).
    for (const family of devnetFamilies()) await family.prepareChain?.(rpc);
    const receipts = await executeTransactions(
      rpc,
      nonces,
      [...fundingAndApprovals(plan), ...poolCreation(plan)],
      { perBlock: DEPLOYMENT_TXS_PER_BLOCK },
    );
    await verifyDeployment(rpc, plan);
    const blockNumber = Number(receipts.at(-1)?.blockNumber ?? 0);
    options.logger?.info(
      {
        pools: plan.pools.length,
        tokens: Object.keys(plan.tokens).length,
        block: blockNumber,
        elapsed_ms: Math.round(performance.now() - startedAt),
      },
      "devnet market deployed",
    );
    return { ...plan, blockNumber };
  } finally {
    await rpc.request("evm_setAutomine", [automine]);
  }
}

/**
 * The funding, approvals and pools go in blocks of this many transactions: their receipts are
 * checked, and a receipt's cost grows with its block (see executeTransactions).
 */
const DEPLOYMENT_TXS_PER_BLOCK = 32;

function contractDeployments(plan: Deployment, contracts: CompiledContracts): TxRequest[] {
  const from = plan.accounts.deployer;
  // In the nonce order planDeployment assumed: WETH9, each family's contracts that come before the
  // tokens, the tokens, then each family's other contracts.
  const families = devnetFamilies().map((family) => family.contractTxs(plan));
  const txs: TxRequest[] = [
    deployTx(from, uniswapBytecode("weth9"), "WETH9"),
    ...families.flatMap((f) => f.beforeTokens),
  ];
  for (const spec of tokenSpecs) {
    if (spec.metadata === "weth9") continue;
    const data =
      spec.metadata === "bytes32"
        ? encodeDeployData({
            abi: bytes32MetadataTokenAbi,
            bytecode: contracts.Bytes32MetadataToken.bytecode,
            args: [
              stringToHex(spec.name, { size: 32 }),
              stringToHex(spec.symbol, { size: 32 }),
              spec.decimals,
            ],
          })
        : spec.metadata === "reverting-decimals"
          ? encodeDeployData({
              abi: revertingDecimalsTokenAbi,
              bytecode: contracts.RevertingDecimalsToken.bytecode,
              args: [spec.name, spec.symbol],
            })
          : encodeDeployData({
              abi: devnetTokenAbi,
              bytecode: contracts.DevnetToken.bytecode,
              args: [spec.name, spec.symbol, spec.decimals],
            });
    txs.push(deployTx(from, data, `token ${spec.key}`));
  }
  txs.push(...families.flatMap((f) => f.afterTokens));
  return txs;
}

/** The periphery contracts of a deployment, as the transaction builders of periphery.ts take them. */
export function peripheryOf(plan: Deployment): PeripheryAddresses {
  return {
    v2Router: plan.v2.router,
    swapRouter: plan.v3.swapRouter,
    positionManager: plan.v3.positionManager,
  };
}

/** A V4 pool's key (its PoolId is the pool's `address`). */
export function v4KeyOf(pool: DeployedPool): PoolKey {
  return {
    currency0: pool.token0,
    currency1: pool.token1,
    fee: pool.fee,
    tickSpacing: pool.tickSpacing ?? 0,
    hooks: pool.hooks ?? nativeCurrency,
  };
}

/** Raw amount of a token worth `usd` at its initial price. */
export function rawAmountForUsd(token: DeployedToken, usd: number): bigint {
  return BigInt(Math.floor((usd / token.initialPriceUsd) * 10 ** token.unitDecimals));
}

function fundingAndApprovals(plan: Deployment): TxRequest[] {
  const { deployer, liquidityProviders, traders } = plan.accounts;
  const everyone = [deployer, ...liquidityProviders, ...traders];
  const needs = liquidityNeeds(plan);
  const txs: TxRequest[] = [];
  for (const token of Object.values(plan.tokens)) {
    const funding = rawAmountForUsd(token, fundingUsd);
    if (token.key === "WETH") {
      for (const account of everyone) {
        const amount = account === deployer ? funding + (needs.get("WETH") ?? 0n) : funding;
        txs.push(wethDepositTx({ from: account, weth: plan.weth, amount }));
      }
      continue;
    }
    txs.push({
      from: deployer,
      to: token.address,
      data: encodeFunctionData({ abi: devnetTokenAbi, functionName: "mintEach", args: [everyone, funding] }),
      gas: 60_000n * BigInt(everyone.length) + 100_000n,
      label: `fund every account with ${token.key}`,
    });
    const extra = needs.get(token.key) ?? 0n;
    if (extra > 0n) {
      txs.push({
        from: deployer,
        to: token.address,
        data: encodeFunctionData({ abi: devnetTokenAbi, functionName: "mint", args: [deployer, extra] }),
        gas: gasLimits.transfer,
        label: `mint the pools' ${token.key} to the deployer`,
      });
    }
  }
  // Each family's spenders of every token, then those that take the tokens of its pools only
  // (fewer approvals to mine), in registry order.
  const families = devnetFamilies().map((family) => ({
    spenders: family.spenders(plan),
    tokens: new Set(
      plan.pools.filter((p) => devnetFamilyOf(p.protocol) === family).flatMap((p) => [p.token0, p.token1]),
    ),
  }));
  const everyToken = families.flatMap((f) => f.spenders.everyToken);
  for (const account of everyone) {
    for (const token of Object.values(plan.tokens)) {
      for (const spender of [
        ...everyToken,
        ...families.flatMap((f) => (f.tokens.has(token.address) ? f.spenders.ownTokens : [])),
      ]) {
        txs.push(
          approveTx({
            from: account,
            token: token.address,
            spender,
            label: `approve ${token.key} of ${account}`,
          }),
        );
      }
    }
  }
  return txs;
}

/** The amounts the deployer puts in the pools, per token. */
function liquidityNeeds(plan: Deployment): Map<TokenKey, bigint> {
  const needs = new Map<TokenKey, bigint>();
  const add = (key: TokenKey, amount: bigint) => needs.set(key, (needs.get(key) ?? 0n) + amount);
  for (const tx of poolDeposits(plan)) {
    // The native coin is the deployer's own ETH.
    if (tx.pool.token0 !== nativeCurrency) add(tx.token0Key, tx.amount0);
    add(tx.token1Key, tx.amount1);
  }
  return needs;
}

function poolDeposits(plan: Deployment): PoolDeposit[] {
  return plan.pools.flatMap((pool) => {
    const spec = poolSpecs.find((p) => p.key === pool.key);
    return spec === undefined ? [] : devnetFamilyOf(pool.protocol).deposits(pool, spec, plan);
  });
}

function poolCreation(plan: Deployment): TxRequest[] {
  // The pools created so far (a family that deposits more than once creates its pool on the first).
  const created = new Set<string>();
  return poolDeposits(plan).flatMap((deposit) =>
    devnetFamilyOf(deposit.pool.protocol).creationTxs(deposit, plan, created),
  );
}

/** Reads the pools back from the factories: a planned address that differs is a bug to fail on. */
async function verifyDeployment(rpc: DevnetRpc, plan: Deployment): Promise<void> {
  const checks = plan.pools.map((pool) => ({
    pool,
    check: devnetFamilyOf(pool.protocol).deploymentCheck(pool, plan),
  }));
  // A pool inside a manager (V4) is initialised when the manager holds a price for its id.
  const managed = checks.flatMap(({ pool, check }) => ("slot" in check ? [{ pool, ...check.slot }] : []));
  const slot0s = await rpc.batch<Hex>(
    managed.map(({ address, slot }) => ({ method: "eth_getStorageAt", params: [address, slot, "latest"] })),
  );
  managed.forEach(({ pool, address }, i) => {
    if (BigInt(slot0s[i] ?? "0x0") === 0n) {
      throw new LaunchError(
        `pool ${pool.key} (${pool.address}) is not initialised in its manager ${address}`,
      );
    }
  });
  // A pool of a factory is where the factory's lookup answers.
  const factoryPools = checks.flatMap(({ pool, check }) =>
    "lookup" in check ? [{ pool, lookup: check.lookup }] : [],
  );
  const calls = factoryPools.map(({ lookup }) => ({ method: "eth_call", params: [lookup, "latest"] }));
  calls.push({
    method: "eth_call",
    params: [
      {
        to: plan.v3.positionManager,
        data: encodeFunctionData({ abi: positionManagerAbi, functionName: "totalSupply" }),
      },
      "latest",
    ],
  });
  const results = await rpc.batch<Hex>(calls);
  factoryPools.forEach(({ pool }, i) => {
    const [actual] = decodeAbiParameters([{ type: "address" }], results[i] as Hex);
    if (actual.toLowerCase() !== pool.address) {
      throw new LaunchError(`pool ${pool.key} was deployed at ${actual}, not at the planned ${pool.address}`);
    }
  });
  const [positionCount] = decodeAbiParameters([{ type: "uint256" }], results.at(-1) as Hex);
  if (positionCount !== BigInt(plan.positions.length)) {
    throw new LaunchError(`${positionCount} V3 positions were minted, ${plan.positions.length} planned`);
  }
}

function sortTokens(a: DeployedToken, b: DeployedToken): [DeployedToken, DeployedToken] {
  return a.address.toLowerCase() < b.address.toLowerCase() ? [a, b] : [b, a];
}

/** Four significant digits: prices that read like quotes, not like noise. */
function roundPrice(price: number): number {
  return Number(price.toPrecision(4));
}
