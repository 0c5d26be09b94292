import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeEventLog, type Hex, parseAbi, toEventSelector } from "viem";
import { createTestDb, type TestDb } from "../_test/db.js";
import { chainSchema } from "../config/schema.js";
import { erc20Abi, v2FactoryAbi, v2PairAbi, v3FactoryAbi, v3PoolAbi } from "../devnet/abis.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { createIndexer } from "../sync/indexer.js";
import { tickAtSqrtRatio } from "./math.js";
import { type ShapeProfileName, shapeChainConfig } from "./profiles.js";
import { type ShapeServer, startShapeServer } from "./server.js";

// The events as the protocols publish them (v4-core IPoolManager, PancakeSwap Infinity's
// ICLPoolManager and IBinPoolManager, Algebra's IAlgebraFactory), decoded by viem: each profile's
// mix of DEX families (and PancakeSwap V3's Swap) is generated ABI-exact and indexed by the pipeline's own decoders.
const managerAbi = parseAbi([
  "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)",
  "event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)",
  "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)",
  "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, address hooks, uint24 fee, bytes32 parameters, uint160 sqrtPriceX96, int24 tick)",
  "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee, uint16 protocolFee)",
  "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, address hooks, uint24 fee, bytes32 parameters, uint24 activeId)",
  "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint24 activeId, uint24 fee, uint16 protocolFee)",
  "event Mint(bytes32 indexed id, address indexed sender, uint256[] ids, bytes32 salt, bytes32[] amounts, bytes32 compositionFee, bytes32 feeToProtocol)",
  "event Burn(bytes32 indexed id, address indexed sender, uint256[] ids, bytes32 salt, bytes32[] amounts)",
]);
const otherAbi = parseAbi([
  "event Pool(address indexed token0, address indexed token1, address pool)",
  "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint128 protocolFeesToken0, uint128 protocolFeesToken1)",
]);
const contractAbi = [...v2FactoryAbi, ...v3FactoryAbi, ...v2PairAbi, ...v3PoolAbi, ...erc20Abi, ...otherAbi];

type RpcLog = { address: Hex; topics: [Hex, ...Hex[]]; data: Hex; transactionHash: Hex };
type Args = Record<string, unknown>;

const v3SwapTopic = toEventSelector(
  "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)",
);
const PROFILES: ShapeProfileName[] = ["ethereum", "bnb", "polygon"];
const CENTER_BIN = 2 ** 23;

async function getLogs(url: string): Promise<RpcLog[]> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getLogs",
      params: [{ fromBlock: "0x0", toBlock: "latest" }],
    }),
  });
  return ((await response.json()) as { result: RpcLog[] }).result;
}

/** A managed pool as its events tell it: fee, spacing or bin step, liquidity and balances. */
type ManagedPool = { fee: bigint; binStep: number | null; liquidity: bigint; r0: bigint; r1: bigint };

/**
 * Checks one profile's logs: every log decodes with the published ABIs; in the managers' pools,
 * Swap's liquidity is the sum of the ModifyLiquidity deltas, its tick that of its price, the
 * swapper pays one side and receives the other, the fee is the pool's; a Bin pool's active bin
 * is the bin of its balances' price, (1 + binStep / 10,000)^(activeId − 2^23). Returns the
 * events counted by family (the managers' by their DEX).
 */
function checkLogs(server: ShapeServer, logs: RpcLog[]): Map<string, number> {
  const dexes = new Map(server.chain.universe.profile.dexes.map((d) => [d.factory as string, d]));
  const pools = new Map<string, ManagedPool>();
  const counts = new Map<string, number>();
  const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const log of logs) {
    const dex = dexes.get(log.address);
    if (!dex?.family.poolsInFactory) {
      const event = decodeEventLog({ abi: contractAbi, data: log.data, topics: log.topics, strict: true });
      if (event.eventName === "Pool") count(`${dex?.family.name} Pool`);
      if (event.eventName === "Swap" && log.topics[0] === v3SwapTopic) count("v3-shaped Swap");
      continue;
    }
    const event = decodeEventLog({ abi: managerAbi, data: log.data, topics: log.topics, strict: true });
    const args = event.args as Args;
    const id = args.id as string;
    count(`${dex.family.name} ${event.eventName}`);
    if (event.eventName === "Initialize") {
      const binStep = "activeId" in args ? Number((BigInt(args.parameters as Hex) >> 16n) & 0xffffn) : null;
      pools.set(id, { fee: BigInt(args.fee as number), binStep, liquidity: 0n, r0: 0n, r1: 0n });
      if ("tick" in args) assert.equal(args.tick, tickAtSqrtRatio(args.sqrtPriceX96 as bigint));
      continue;
    }
    const pool = pools.get(id);
    assert.ok(pool, `${event.eventName} of an initialised pool ${id}`);
    if (event.eventName === "ModifyLiquidity") pool.liquidity += args.liquidityDelta as bigint;
    if (event.eventName === "Mint" || event.eventName === "Burn") {
      const packed = BigInt((args.amounts as Hex[])[0] as Hex);
      const sign = event.eventName === "Mint" ? 1n : -1n;
      pool.r0 += sign * (packed & ((1n << 128n) - 1n));
      pool.r1 += sign * (packed >> 128n);
    }
    if (event.eventName !== "Swap") continue;
    const [a0, a1] = [args.amount0 as bigint, args.amount1 as bigint];
    assert.ok((a0 < 0n && a1 > 0n) || (a1 < 0n && a0 > 0n), "the swapper pays one side, receives the other");
    assert.equal(BigInt(args.fee as number), pool.fee, "the fee charged is the pool's");
    if (pool.binStep === null) {
      assert.equal(args.liquidity, pool.liquidity, "Swap liquidity = the sum of ModifyLiquidity deltas");
      assert.equal(args.tick, tickAtSqrtRatio(args.sqrtPriceX96 as bigint), "tick of the sqrt price");
      continue;
    }
    pool.r0 -= a0;
    pool.r1 -= a1;
    // The active bin after the swap is the bin nearest to the pool's balances' price.
    const bins = Math.log(Number(pool.r1) / Number(pool.r0)) / Math.log(1 + pool.binStep / 10_000);
    const activeId = Number(args.activeId);
    assert.ok(
      Math.abs(activeId - CENTER_BIN - bins) <= 0.5 + 1e-9,
      `bin ${activeId} of ${bins + CENTER_BIN}`,
    );
  }
  return counts;
}

describe("each profile's mix of DEX families on the mainnet-shaped chain", () => {
  const servers = new Map<ShapeProfileName, ShapeServer>();
  let testDb: TestDb;
  before(async () => {
    const started = await Promise.all(
      PROFILES.map((profile) =>
        startShapeServer({
          profile,
          pools: 400,
          tokens: 200,
          historyBlocks: 30,
          swapsPerBlock: 20,
          live: false,
          port: 0,
        }),
      ),
    );
    for (const [i, p] of PROFILES.entries()) servers.set(p, started[i] as ShapeServer);
    testDb = await createTestDb();
  });
  after(async () => {
    await Promise.all([...servers.values()].map((s) => s.close()));
    await testDb?.drop();
  });

  it("writes every family's logs as its contracts emit them", async () => {
    const expected: Record<ShapeProfileName, string[]> = {
      ethereum: ["v4 Initialize", "v4 ModifyLiquidity", "v4 Swap"],
      bnb: [
        "infinity-cl Initialize",
        "infinity-cl ModifyLiquidity",
        "infinity-cl Swap",
        "infinity-bin Initialize",
        "infinity-bin Mint",
        "infinity-bin Swap",
        "v4 Swap",
        "algebra Pool",
      ],
      polygon: ["algebra Pool", "v4 Initialize", "v4 Swap"],
      "uniswap-v2": [],
    };
    for (const [profile, server] of servers) {
      const counts = checkLogs(server, await getLogs(server.url));
      for (const key of expected[profile]) assert.ok((counts.get(key) ?? 0) > 0, `${profile}: ${key} logs`);
      // Algebra's swaps have Uniswap V3's topic: only their pool tells them apart.
      assert.ok((counts.get("v3-shaped Swap") ?? 0) > 0);
    }
  });

  it("the pipeline indexes every family's pools and trades", async () => {
    const chains = PROFILES.map((p) => {
      const server = servers.get(p) as ShapeServer;
      return chainSchema.parse({
        ...shapeChainConfig(server.chain.universe.profile, server.url),
        confirmations: 0,
      });
    });
    const config = { chains, pricing: { liquidityFloorUsd: 50_000, maxDeviation: 0.05 } };
    const logger = createSilentLogger();
    const indexer = createIndexer({
      config,
      db: testDb.db,
      logger,
      derived: createPricing({ config, logger }),
      options: { follow: false, progressBar: false },
    });
    await indexer.start();
    await indexer.done();
    for (const status of indexer.status()) assert.equal(status.phase, "stopped", status.error ?? "no error");

    for (const [profile, server] of servers) {
      const { chain } = server;
      const u = chain.universe;
      const head = chain.head();
      const want = new Map<string, { pools: number; swaps: number }>();
      const of = (pool: number) => {
        const name = u.poolInfo(pool).protocol;
        const entry = want.get(name) ?? { pools: 0, swaps: 0 };
        want.set(name, entry);
        return entry;
      };
      for (let i = 0; i < u.poolsAt(head); i++) of(i).pools++;
      chain.blocks(0, head, (block) => {
        for (const tx of block.txs) if (tx.kind === "swap") of(tx.pool).swaps++;
        return true;
      });
      const { rows } = await testDb.db.query<{ protocol: string; pools: string; swaps: string }>(
        `SELECT p.protocol, count(DISTINCT p.address) AS pools, count(s.pool) AS swaps
         FROM pools p LEFT JOIN swaps s ON s.chain_id = p.chain_id AND s.pool = p.address
         WHERE p.chain_id = $1 GROUP BY p.protocol`,
        [u.profile.chainId],
      );
      const got = new Map(rows.map((r) => [r.protocol, { pools: Number(r.pools), swaps: Number(r.swaps) }]));
      assert.deepEqual(got, want, `${profile}: pools and swaps of each family`);
      for (const d of u.profile.dexes)
        assert.ok((want.get(d.family.name)?.swaps ?? 0) > 0, `${profile}: ${d.name} trades`);
    }
  });
});
