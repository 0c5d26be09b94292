import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type Abi,
  type Address,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  hexToString,
  maxUint256,
} from "viem";
import { loadConfig } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { erc20Abi, positionManagerAbi, v2PairAbi, v3PoolAbi } from "./abis.js";
import { algebraFactoryAbi, algebraPoolAbi } from "./algebra.js";
import { type Deployment, deployMarket, planDeployment } from "./deploy.js";
import { type HardhatNode, startHardhatNode } from "./node.js";
import { decodePoolStates, poolStateCalls } from "./pool-state.js";
import { createDevnetRpc, type DevnetRpc, RpcCallError } from "./rpc.js";

const logger = createSilentLogger();

describe("deployMarket", () => {
  let node: HardhatNode;
  let rpc: DevnetRpc;
  let deployment: Deployment;
  let accounts: Address[];

  before(async () => {
    node = await startHardhatNode({ port: 0, chainId: 31337, logger });
    rpc = createDevnetRpc(node.rpcUrl);
    deployment = await deployMarket({ rpcUrl: node.rpcUrl, seed: 42, logger });
    accounts = await rpc.request<Address[]>("eth_accounts");
  });
  after(() => node?.stop());

  /** eth_call of a typed view function. */
  const read = async <const abi extends Abi>(
    to: Address,
    abi: abi,
    functionName: string,
    args: readonly unknown[] = [],
  ) => {
    const data = encodeFunctionData({ abi, functionName, args } as never);
    const result = await rpc.request<Hex>("eth_call", [{ to, data }, "latest"]);
    return decodeFunctionResult({ abi, functionName, data: result } as never) as unknown;
  };

  /** The USD value a pool holds (its two balances), at the tokens' initial prices. */
  const heldUsd = async (pool: Deployment["pools"][number]) => {
    let usd = 0;
    for (const key of [pool.token0Key, pool.token1Key]) {
      const token = deployment.tokens[key];
      const balance = (await read(token.address, erc20Abi, "balanceOf", [pool.address])) as bigint;
      usd += (Number(balance) / 10 ** token.unitDecimals) * token.initialPriceUsd;
    }
    return usd;
  };

  it("deploys at the addresses of config/devnet.json (the demo's default configuration)", () => {
    const config = loadConfig({
      file: new URL("../../config/devnet.json", import.meta.url).pathname,
      env: {},
    });
    const chain = config.chains.find((c) => c.id === 31337);
    assert.ok(chain, "the devnet chain is configured");
    assert.equal(chain.devnet, true);
    assert.deepEqual(
      chain.dexes.map((d) => [d.protocol, d.factory]),
      [
        ["v2", deployment.v2.factory],
        ["v3", deployment.v3.factory],
        ["v4", deployment.v4.poolManager],
        ["algebra", deployment.algebra.factory],
      ],
    );
    const { tokens } = deployment;
    assert.deepEqual(chain.referenceTokens.stablecoins, [
      tokens.USDC.address,
      tokens.USDT.address,
      tokens.DAI.address,
    ]);
    assert.equal(chain.referenceTokens.wrappedNative, tokens.WETH.address);
    assert.deepEqual(chain.referenceTokens.wrappedBtc, [tokens.WBTC.address]);
    assert.deepEqual(
      Object.fromEntries(Object.entries(config.coins).map(([symbol, coin]) => [symbol, coin.token])),
      {
        ETH: tokens.WETH.address,
        BTC: tokens.WBTC.address,
        USDC: tokens.USDC.address,
        USDT: tokens.USDT.address,
        DAI: tokens.DAI.address,
      },
    );
    assert.equal(config.devnet.chainId, 31337);
  });

  it("is deterministic: the plan (no node) gives the same addresses, for any seed", () => {
    const plan = planDeployment({ chainId: 31337, seed: 42, accounts });
    assert.deepEqual(
      { ...plan, blockNumber: deployment.blockNumber },
      deployment,
      "same seed, same deployment",
    );
    const other = planDeployment({ chainId: 31337, seed: 7, accounts });
    assert.deepEqual(
      other.pools.map((p) => p.address),
      deployment.pools.map((p) => p.address),
    );
    assert.deepEqual(
      Object.values(other.tokens).map((t) => t.address),
      Object.values(deployment.tokens).map((t) => t.address),
    );
    assert.notEqual(
      other.tokens.WETH.initialPriceUsd,
      deployment.tokens.WETH.initialPriceUsd,
      "the seed moves prices",
    );
    assert.equal(other.tokens.USDC.initialPriceUsd, 1, "stablecoins stay at $1");
  });

  it("deploys every token with the metadata it announces", async () => {
    for (const token of Object.values(deployment.tokens)) {
      if (token.metadata === "bytes32") {
        const symbol = await rpc.request<Hex>("eth_call", [
          { to: token.address, data: encodeFunctionData({ abi: erc20Abi, functionName: "symbol" }) },
          "latest",
        ]);
        assert.equal(symbol.length, 66, "symbol() answers one bytes32 word, not an ABI string");
        assert.equal(hexToString(symbol as Hex, { size: 32 }).replace(/\0+$/, ""), token.symbol);
        continue;
      }
      assert.equal(await read(token.address, erc20Abi, "symbol"), token.symbol);
      assert.equal(await read(token.address, erc20Abi, "name"), token.name);
      if (token.metadata === "reverting-decimals") {
        assert.equal(token.decimals, null);
        await assert.rejects(read(token.address, erc20Abi, "decimals"), RpcCallError, "decimals() reverts");
      } else {
        assert.equal(await read(token.address, erc20Abi, "decimals"), token.decimals);
      }
    }
    assert.equal(deployment.tokens.FAKEUSDC.symbol, "USDC", "the look-alike copies the symbol");
    assert.equal(deployment.tokens.FAKEUSDC.name, "USD Coin", "and the name");
    assert.notEqual(deployment.tokens.FAKEUSDC.address, deployment.tokens.USDC.address);
  });

  it("creates every pool on its protocol with its fee, tokens and liquidity", async () => {
    // V4 pools live inside the PoolManager (v4.test.ts checks them); the Algebra pool has a test below.
    const pools = deployment.pools.filter((p) => p.protocol === "v2" || p.protocol === "v3");
    const states = decodePoolStates(pools, await rpc.batch<Hex>(poolStateCalls(pools)));
    for (const pool of pools) {
      const abi = pool.protocol === "v2" ? v2PairAbi : v3PoolAbi;
      assert.equal(
        ((await read(pool.address, abi, "token0")) as string).toLowerCase(),
        pool.token0,
        pool.key,
      );
      assert.equal(
        ((await read(pool.address, abi, "token1")) as string).toLowerCase(),
        pool.token1,
        pool.key,
      );
      const state = states.get(pool.key);
      if (pool.protocol === "v3") {
        assert.equal(await read(pool.address, v3PoolAbi, "fee"), pool.fee, pool.key);
        // The storage slots the simulator reads agree with the pool's own view functions.
        const slot0 = (await read(pool.address, v3PoolAbi, "slot0")) as readonly [bigint];
        assert.deepEqual(state, {
          protocol: "v3",
          sqrtPriceX96: slot0[0],
          liquidity: await read(pool.address, v3PoolAbi, "liquidity"),
        });
      } else {
        const [reserve0, reserve1] = (await read(pool.address, v2PairAbi, "getReserves")) as readonly [
          bigint,
          bigint,
        ];
        assert.deepEqual(state, { protocol: "v2", reserve0, reserve1 });
      }
      // The USD value the pool holds, at the initial prices, is what the market asks for.
      const usd = await heldUsd(pool);
      assert.ok(Math.abs(usd / pool.initialLiquidityUsd - 1) < 0.01, `${pool.key}: $${Math.round(usd)}`);
    }
    const protocols = new Set(deployment.pools.map((p) => p.protocol));
    const fees = new Set(deployment.pools.filter((p) => p.protocol === "v3").map((p) => p.fee));
    assert.deepEqual([...protocols].sort(), ["algebra", "v2", "v3", "v4"]);
    assert.deepEqual(
      [...fees].sort((a, b) => a - b),
      [100, 500, 3000, 10_000],
    );
  });

  it("creates the Algebra Integral pool through its factory, at the planned address, with its liquidity", async () => {
    const [pool] = deployment.pools.filter((p) => p.protocol === "algebra");
    assert.ok(pool, "the market has an Algebra pool");
    assert.equal(
      (
        (await read(deployment.algebra.factory, algebraFactoryAbi, "poolByPair", [
          pool.token0,
          pool.token1,
        ])) as string
      ).toLowerCase(),
      pool.address,
    );
    assert.equal(
      await read(deployment.algebra.factory, algebraFactoryAbi, "defaultCommunityFee"),
      0,
      "no community fee leaves the pool",
    );
    // The storage slots the simulator reads agree with the pool's own view functions.
    const [state] = decodePoolStates([pool], await rpc.batch<Hex>(poolStateCalls([pool]))).values();
    const globalState = (await read(pool.address, algebraPoolAbi, "globalState")) as readonly [
      bigint,
      number,
      number,
    ];
    const liquidity = await read(pool.address, algebraPoolAbi, "liquidity");
    assert.deepEqual(state, { protocol: "v3", sqrtPriceX96: globalState[0], liquidity });
    assert.equal(globalState[2], pool.fee, "the factory's default fee, without a plugin");
    assert.ok((liquidity as bigint) > 0n);
    const usd = await heldUsd(pool);
    assert.ok(Math.abs(usd / pool.initialLiquidityUsd - 1) < 0.02, `${pool.key}: $${Math.round(usd)}`);
  });

  it("holds the odd cases the indexer and the pricing must meet", () => {
    const poolsOf = (key: string) =>
      deployment.pools.filter((p) => p.token0Key === key || p.token1Key === key);
    assert.ok(
      poolsOf("KIBL").length >= 2 &&
        poolsOf("KIBL").every((p) => p.token0Key === "WETH" || p.token1Key === "WETH"),
      "KIBL only against WETH",
    );
    const link = poolsOf("LINK")
      .filter((p) => p.protocol === "v2" || p.protocol === "v3")
      .map((p) => p.initialLiquidityUsd)
      .sort((a, b) => a - b);
    assert.ok(
      link.length === 2 && (link[0] ?? 0) > 20_000 && (link[0] ?? 0) < 100_000 && (link[1] ?? 0) > 1_000_000,
      "LINK: one thin, one deep",
    );
    const dust = poolsOf("DUST");
    assert.ok(
      dust.length === 1 && (dust[0]?.initialLiquidityUsd ?? 0) < 10_000,
      "DUST: one pool below a $10k floor",
    );
    assert.ok(
      poolsOf("FAKEUSDC").every((p) => p.initialLiquidityUsd < 10_000),
      "the look-alike sits in a thin pool",
    );
    assert.ok(
      poolsOf("NODEC").length > 0 && poolsOf("MKR").length > 0,
      "the odd-metadata tokens are in pools",
    );
  });

  it("funds every account with each token and approves the routers for it", async () => {
    const trader = deployment.accounts.traders.at(-1) as Address;
    assert.ok(deployment.accounts.traders.length >= 20, "at least twenty traders");
    for (const token of Object.values(deployment.tokens)) {
      assert.ok(
        ((await read(token.address, erc20Abi, "balanceOf", [trader])) as bigint) > 0n,
        `${token.key} balance`,
      );
      for (const spender of [deployment.v2.router, deployment.v3.swapRouter, deployment.v3.positionManager]) {
        assert.equal(await read(token.address, erc20Abi, "allowance", [trader, spender]), maxUint256);
      }
    }
  });

  it("mints the planned V3 positions with sequential ids", async () => {
    for (const position of deployment.positions) {
      const onChain = (await read(deployment.v3.positionManager, positionManagerAbi, "positions", [
        BigInt(position.tokenId),
      ])) as readonly unknown[];
      const pool = deployment.pools.find((p) => p.key === position.poolKey);
      assert.equal((onChain[2] as string).toLowerCase(), pool?.token0);
      assert.equal(onChain[4], pool?.fee);
      assert.equal(onChain[5], position.tickLower);
      assert.equal(onChain[6], position.tickUpper);
      assert.ok((onChain[7] as bigint) > 0n, "has liquidity");
    }
  });

  it("refuses a node it already deployed on: its addresses would not be the planned ones", async () => {
    await assert.rejects(deployMarket({ rpcUrl: node.rpcUrl, seed: 42, logger }), /fresh node/);
  });
});
