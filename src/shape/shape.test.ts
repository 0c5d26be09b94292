import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createPublicClient, decodeEventLog, type Hex, http, parseAbi } from "viem";
import { erc20Abi, v2FactoryAbi, v2PairAbi, v3FactoryAbi, v3PoolAbi } from "../devnet/abis.js";
import { RangeTooLargeError } from "../internal/errors.js";
import { createSilentLogger } from "../internal/logger.js";
import { createRpcClient } from "../rpc/client.js";
import { classifyRpcError } from "../rpc/errors.js";
import { readTokens } from "../sync/tokens.js";
import {
  MAX_SQRT_RATIO,
  MAX_TICK,
  MIN_SQRT_RATIO,
  MIN_TICK,
  sqrtRatioAtTick,
  tickAtSqrtRatio,
} from "./math.js";
import { MULTICALL3 } from "./rpc.js";
import { type ShapeServer, type ShapeServerOptions, startShapeServer } from "./server.js";

type RpcLog = { address: Hex; topics: [Hex, ...Hex[]]; data: Hex; blockNumber: Hex; logIndex: Hex };
type Answer<T> = { result?: T; error?: { code: number; message: string } };

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<Answer<T>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as Answer<T>;
}
async function result<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const answer = await rpc<T>(url, method, params);
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}
const hex = (n: number) => `0x${n.toString(16)}`;
// The profiles' Uniswap V2 and V3 DEXes: the chain these checks were written for, unchanged by
// the other families' venues (their logs are checked in families.test.ts).
const start = (options: Partial<ShapeServerOptions>) =>
  startShapeServer({
    profile: "ethereum",
    families: ["v2", "v3"],
    pools: 300,
    tokens: 120,
    historyBlocks: 120,
    live: false,
    port: 0,
    ...options,
  });

const abi = [...v2FactoryAbi, ...v3FactoryAbi, ...v2PairAbi, ...v3PoolAbi, ...erc20Abi];

describe("the synthetic chain's logs are what the Uniswap contracts emit", () => {
  let server: ShapeServer;
  let logs: RpcLog[];
  before(async () => {
    server = await start({});
    logs = await result<RpcLog[]>(server.url, "eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]);
  });
  after(() => server?.close());

  it("TickMath matches the contract's known values", () => {
    assert.equal(sqrtRatioAtTick(0), 1n << 96n);
    assert.equal(sqrtRatioAtTick(MIN_TICK), MIN_SQRT_RATIO);
    assert.equal(sqrtRatioAtTick(MAX_TICK), MAX_SQRT_RATIO);
    assert.equal(tickAtSqrtRatio(MIN_SQRT_RATIO), MIN_TICK);
    assert.equal(tickAtSqrtRatio(MAX_SQRT_RATIO - 1n), MAX_TICK - 1);
    for (const tick of [-200_000, -1, 1, 12_345, 276_324]) {
      assert.equal(tickAtSqrtRatio(sqrtRatioAtTick(tick)), tick);
      assert.equal(tickAtSqrtRatio(sqrtRatioAtTick(tick) - 1n), tick - 1);
    }
  });

  it("decodes with viem and the real ABIs; Sync is the running reserves; V3 price, tick and liquidity agree", async () => {
    const pools = new Map<
      string,
      { v3: boolean; r0: bigint; r1: bigint; liquidity: bigint; sync?: [bigint, bigint] | undefined }
    >();
    const counts = new Map<string, number>();
    for (const log of logs) {
      const event = decodeEventLog({ abi, data: log.data, topics: log.topics, strict: true });
      const name = `${event.eventName}`;
      // PairCreated's last parameter has no name: viem then gives the arguments as a list.
      const args = (
        Array.isArray(event.args)
          ? { token0: event.args[0], token1: event.args[1], pair: event.args[2] }
          : event.args
      ) as Record<string, unknown>;
      const pool = pools.get(log.address);
      counts.set(name, (counts.get(name) ?? 0) + 1);
      if (name === "PairCreated" || name === "PoolCreated") {
        const address = ((args.pair ?? args.pool) as string).toLowerCase();
        assert.ok(
          (args.token0 as string).toLowerCase() < (args.token1 as string).toLowerCase(),
          "sorted tokens",
        );
        pools.set(address, { v3: name === "PoolCreated", r0: 0n, r1: 0n, liquidity: 0n });
        continue;
      }
      if (name === "Transfer") continue;
      assert.ok(pool, `${name} of a created pool`);
      if (name === "Sync") {
        // The pair emits Sync just before its Mint, Burn or Swap: checked once that event is applied.
        pool.sync = [args.reserve0 as bigint, args.reserve1 as bigint];
        continue;
      }
      if (!pool.v3 && (name === "Mint" || name === "Burn" || name === "Swap")) {
        const a = args as Record<string, bigint>;
        if (name === "Swap") {
          assert.ok((a.amount0In as bigint) > 0n !== (a.amount1In as bigint) > 0n, "one side in");
          assert.ok(
            (a.amount0In as bigint) > 0n
              ? (a.amount1Out as bigint) > 0n && a.amount0Out === 0n
              : (a.amount0Out as bigint) > 0n && a.amount1Out === 0n,
            "the other side out",
          );
        }
        const sign = name === "Burn" ? -1n : 1n;
        pool.r0 +=
          name === "Swap" ? (a.amount0In as bigint) - (a.amount0Out as bigint) : sign * (a.amount0 as bigint);
        pool.r1 +=
          name === "Swap" ? (a.amount1In as bigint) - (a.amount1Out as bigint) : sign * (a.amount1 as bigint);
        assert.deepEqual(pool.sync, [pool.r0, pool.r1], `Sync = running reserves after ${name}`);
        pool.sync = undefined;
      } else if (name === "Mint") {
        pool.liquidity += args.amount as bigint;
        pool.r0 += args.amount0 as bigint;
        pool.r1 += args.amount1 as bigint;
      } else if (name === "Burn") {
        pool.liquidity -= args.amount as bigint;
      } else if (name === "Collect") {
        pool.r0 -= args.amount0 as bigint;
        pool.r1 -= args.amount1 as bigint;
      } else if (name === "Swap") {
        const a = args as {
          amount0: bigint;
          amount1: bigint;
          sqrtPriceX96: bigint;
          liquidity: bigint;
          tick: number;
        };
        assert.ok(
          (a.amount0 > 0n && a.amount1 <= 0n) || (a.amount1 > 0n && a.amount0 <= 0n),
          "one side in, other out",
        );
        assert.equal(a.liquidity, pool.liquidity, "Swap liquidity = Mint − Burn");
        assert.equal(a.tick, tickAtSqrtRatio(a.sqrtPriceX96), "tick of the sqrt price");
        assert.ok(sqrtRatioAtTick(a.tick) <= a.sqrtPriceX96 && a.sqrtPriceX96 < sqrtRatioAtTick(a.tick + 1));
        const floatTick = Math.floor(Math.log((Number(a.sqrtPriceX96) / 2 ** 96) ** 2) / Math.log(1.0001));
        assert.ok(Math.abs(floatTick - a.tick) <= 1, "tick = floor(log_1.0001(price))");
        pool.r0 += a.amount0;
        pool.r1 += a.amount1;
      } else if (name === "Initialize") {
        const a = args as { sqrtPriceX96: bigint; tick: number };
        assert.equal(a.tick, tickAtSqrtRatio(a.sqrtPriceX96));
      }
    }
    for (const name of [
      "PairCreated",
      "PoolCreated",
      "Swap",
      "Sync",
      "Mint",
      "Burn",
      "Collect",
      "Initialize",
      "Transfer",
    ]) {
      assert.ok((counts.get(name) ?? 0) > 0, `some ${name} logs (${counts.get(name) ?? 0})`);
    }
    // The pools' balances and reserves as the contracts answer them equal the logs' running sums.
    const client = createPublicClient({ transport: http(server.url, { batch: true }) });
    const sample = [...pools.entries()].slice(0, 60);
    for (const [address, pool] of sample) {
      const info = server.chain.universe.poolInfo(server.chain.universe.poolIndex(address) as number);
      if (pool.v3) {
        const [b0, b1, liquidity] = await Promise.all([
          client.readContract({
            address: server.chain.universe.tokenAddress(info.token0),
            abi: erc20Abi,
            functionName: "balanceOf",
            args: [address as Hex],
          }),
          client.readContract({
            address: server.chain.universe.tokenAddress(info.token1),
            abi: erc20Abi,
            functionName: "balanceOf",
            args: [address as Hex],
          }),
          client.readContract({ address: address as Hex, abi: v3PoolAbi, functionName: "liquidity" }),
        ]);
        assert.deepEqual([b0, b1, liquidity], [pool.r0, pool.r1, pool.liquidity], `V3 pool ${address}`);
      } else {
        const [r0, r1] = await client.readContract({
          address: address as Hex,
          abi: v2PairAbi,
          functionName: "getReserves",
        });
        assert.deepEqual([r0, r1], [pool.r0, pool.r1], `V2 pool ${address}`);
      }
    }
  });

  it("filters by address lists and topic OR-lists, and by block hash", async () => {
    const swap = logs.find(
      (l) =>
        l.topics.length === 3 &&
        l.topics[0] === "0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822",
    );
    assert.ok(swap, "a V2 swap");
    const other = logs.find((l) => l.address !== swap.address && l.topics[0] === swap.topics[0]) as RpcLog;
    const sync = "0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1";
    const picked = await result<RpcLog[]>(server.url, "eth_getLogs", [
      {
        fromBlock: "0x0",
        toBlock: "latest",
        address: [swap.address, other.address.toUpperCase()],
        topics: [[swap.topics[0], sync]],
      },
    ]);
    const expected = logs.filter(
      (l) =>
        (l.address === swap.address || l.address === other.address) &&
        (l.topics[0] === swap.topics[0] || l.topics[0] === sync),
    );
    assert.deepEqual(picked, expected);
    const byTrader = await result<RpcLog[]>(server.url, "eth_getLogs", [
      { fromBlock: "0x0", toBlock: "latest", topics: [null, null, swap.topics[2]] },
    ]);
    assert.ok(byTrader.length > 0 && byTrader.every((l) => l.topics[2] === swap.topics[2]));
    const block = await result<{ hash: Hex }>(server.url, "eth_getBlockByNumber", [swap.blockNumber, false]);
    const inBlock = await result<RpcLog[]>(server.url, "eth_getLogs", [{ blockHash: block.hash }]);
    assert.deepEqual(
      inBlock,
      logs.filter((l) => l.blockNumber === swap.blockNumber),
    );
  });

  it("serves blocks, transactions and receipts that agree with each other", async () => {
    const head = Number(await result<string>(server.url, "eth_blockNumber"));
    const client = createPublicClient({ transport: http(server.url) });
    const block = await client.getBlock({ blockNumber: BigInt(head), includeTransactions: true });
    assert.ok(block.transactions.length > 50, "a mainnet-like block");
    const parent = await client.getBlock({ blockNumber: BigInt(head - 1) });
    assert.equal(block.parentHash, parent.hash);
    assert.equal(Number(block.timestamp - parent.timestamp), 12, "Ethereum's 12 s");
    const byHash = await client.getBlock({ blockHash: block.hash });
    assert.equal(byHash.number, block.number);
    const tx = block.transactions[5] as (typeof block.transactions)[number];
    const receipt = await client.getTransactionReceipt({ hash: tx.hash });
    const again = await client.getTransaction({ hash: tx.hash });
    assert.equal(again.from, tx.from);
    assert.equal(receipt.blockHash, block.hash);
    const all = await result<{ logs: RpcLog[] }[]>(server.url, "eth_getBlockReceipts", [hex(head)]);
    assert.equal(all.length, block.transactions.length);
    const blockLogs = await result<RpcLog[]>(server.url, "eth_getLogs", [
      { fromBlock: hex(head), toBlock: hex(head) },
    ]);
    assert.deepEqual(
      all.flatMap((r) => r.logs),
      blockLogs,
    );
    assert.equal(
      await result(server.url, "eth_getBlockByNumber", [hex(head + 1), false]),
      null,
      "no block above the head",
    );
    const balance = await client.getBalance({ address: tx.from });
    assert.equal(typeof balance, "bigint");
  });
});

describe("token metadata with the real world's oddities", () => {
  let server: ShapeServer;
  before(async () => {
    server = await start({ tokens: 3000 });
  });
  after(() => server?.close());

  it("answers eth_call (single, batched and through Multicall3) as the odd tokens do", async () => {
    const u = server.chain.universe;
    const metas = Array.from({ length: u.tokenCount }, (_, i) => u.tokenMeta(i));
    const find = (what: string, test: (m: (typeof metas)[number]) => boolean) => {
      const found = metas.find(test);
      assert.ok(found, `a token with ${what}`);
      return found;
    };
    const bytes32 = find("bytes32 symbol", (m) => m.symbol.kind === "bytes32");
    const noDecimals = find("reverting decimals", (m) => m.decimals === null);
    const emptyName = find("empty name", (m) => m.name.kind === "string" && m.name.value === "");
    const unicode = find("unicode name", (m) => /[^ -~]/.test(m.name.value));
    const zero = find("zero supply", (m) => m.totalSupply === 0n);
    const huge = find("77-digit supply", (m) => m.totalSupply.toString().length === 77);
    const reverting = find("reverting name", (m) => m.name.kind === "revert");
    const client = createRpcClient({ chain: { id: 1, rpc: [server.url] }, logger: createSilentLogger() });
    const tokens = await readTokens(
      client,
      [bytes32, noDecimals, emptyName, unicode, zero, huge, reverting].map((m) => m.address),
      "latest",
    );
    const [t32, tDec, tEmpty, tUni, tZero, tHuge, tRev] = tokens as [
      (typeof tokens)[number],
      ...typeof tokens,
    ];
    assert.equal(t32.symbol, bytes32.symbol.value, "bytes32 symbol decoded");
    assert.equal(tDec?.decimals, null, "reverting decimals → null");
    assert.equal(tDec?.name, noDecimals.name.value);
    assert.equal(tEmpty?.name, null, "empty name → null");
    assert.equal(tUni?.name, unicode.name.value, "unicode kept");
    assert.equal(tZero?.totalSupply, 0n);
    assert.equal(tHuge?.totalSupply?.toString().length, 77);
    assert.equal(tRev?.name, null, "reverting name → null");
    assert.equal(tRev?.symbol, null);

    const viemClient = createPublicClient({ transport: http(server.url) });
    const results = await viemClient.multicall({
      multicallAddress: MULTICALL3,
      allowFailure: true,
      contracts: [
        { address: noDecimals.address, abi: erc20Abi, functionName: "decimals" },
        { address: unicode.address, abi: erc20Abi, functionName: "name" },
        { address: huge.address, abi: erc20Abi, functionName: "totalSupply" },
        {
          address: u.referenceCount > 0 ? u.tokenAddress(0) : huge.address,
          abi: erc20Abi,
          functionName: "symbol",
        },
      ],
    });
    assert.equal(results[0]?.status, "failure", "reverting decimals through Multicall3");
    assert.deepEqual(
      results.slice(1).map((r) => r.result),
      [unicode.name.value, huge.totalSupply, "WETH"],
    );
    const code = await viemClient.getCode({ address: MULTICALL3 });
    assert.ok(code && code.length > 2, "Multicall3 has code");
    await client.close();
  });
});

describe("provider limits", () => {
  it("Infura: more than 10,000 logs is refused with Infura's message, classified as a range error", async () => {
    const server = await start({ limits: "infura" });
    try {
      const answer = await rpc(server.url, "eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]);
      assert.equal(answer.error?.code, -32005);
      assert.match(
        answer.error?.message ?? "",
        /^query returned more than 10000 results\. Try with this block range \[0x0, 0x[0-9a-f]+\]\.$/,
      );
      assert.ok(classifyRpcError(answer.error, "eth_getLogs") instanceof RangeTooLargeError);
      const small = await result<unknown[]>(server.url, "eth_getLogs", [
        { fromBlock: "0x0", toBlock: "0x2" },
      ]);
      assert.ok(small.length > 0 && small.length <= 10_000);
    } finally {
      await server.close();
    }
  });

  it("Alchemy: any size within 2K blocks, at most 10K logs over more; its message; HTTP 429 over the rate limit", async () => {
    const server = await start({ limits: "alchemy", historyBlocks: 2100, swapsPerBlock: 3, rateLimit: 20 });
    try {
      const head = Number(await result<string>(server.url, "eth_blockNumber"));
      const wide = await rpc(server.url, "eth_getLogs", [{ fromBlock: "0x0", toBlock: hex(head) }]);
      assert.equal(wide.error?.code, -32602);
      assert.match(
        wide.error?.message ?? "",
        /^Log response size exceeded\. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response\./,
      );
      assert.ok(classifyRpcError(wide.error, "eth_getLogs") instanceof RangeTooLargeError);
      const within = await result<unknown[]>(server.url, "eth_getLogs", [
        { fromBlock: hex(head - 1999), toBlock: hex(head) },
      ]);
      assert.ok(within.length > 10_000, `over 10K logs within 2K blocks (${within.length})`);
      const batch = Array.from({ length: 25 }, (_, id) => ({
        jsonrpc: "2.0",
        id,
        method: "eth_chainId",
        params: [],
      }));
      const response = await fetch(server.url, { method: "POST", body: JSON.stringify(batch) });
      assert.equal(response.status, 429);
      assert.equal(response.headers.get("retry-after"), "1");
      assert.match(await response.text(), /exceeded its compute units per second capacity/);
    } finally {
      await server.close();
    }
  });
});

describe("determinism, reorgs, broken headers and the clock", () => {
  it("the same seed gives the same chain; another seed another one", async () => {
    const [a, b, c] = await Promise.all([start({ seed: 7 }), start({ seed: 7 }), start({ seed: 8 })]);
    try {
      for (const n of [0, 1, 50, 121]) {
        const [ha, hb, hc] = await Promise.all(
          [a, b, c].map((s) => result<{ hash: string }>(s.url, "eth_getBlockByNumber", [hex(n), false])),
        );
        assert.ok(ha?.hash, `block ${n} exists`);
        assert.equal(ha?.hash, hb?.hash, `block ${n}`);
        assert.notEqual(ha?.hash, hc?.hash);
      }
      const [la, lb] = await Promise.all(
        [a, b].map((s) => result<unknown[]>(s.url, "eth_getLogs", [{ fromBlock: "0x60", toBlock: "0x70" }])),
      );
      assert.deepEqual(la, lb);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it("shape_reorg replaces the last blocks with another fork; shape_unlinkedHeaders breaks the links", async () => {
    const server = await start({});
    try {
      const head = Number(await result<string>(server.url, "eth_blockNumber"));
      const before = await Promise.all(
        [head - 3, head - 2, head].map((n) =>
          result<{ hash: string }>(server.url, "eth_getBlockByNumber", [hex(n), false]),
        ),
      );
      const logsBefore = await result<RpcLog[]>(server.url, "eth_getLogs", [
        { fromBlock: hex(head - 1), toBlock: hex(head) },
      ]);
      const reorg = await result<{ from: number; to: number }>(server.url, "shape_reorg", [3]);
      assert.deepEqual([reorg.from, reorg.to], [head - 2, head]);
      const afterBlocks = await Promise.all(
        [head - 3, head - 2, head].map((n) =>
          result<{ hash: string; parentHash: string }>(server.url, "eth_getBlockByNumber", [hex(n), false]),
        ),
      );
      assert.equal(afterBlocks[0]?.hash, before[0]?.hash, "below the fork: unchanged");
      assert.notEqual(afterBlocks[1]?.hash, before[1]?.hash, "in the fork: another block");
      assert.equal(afterBlocks[1]?.parentHash, before[0]?.hash, "the fork links to the common ancestor");
      assert.equal(
        await result(server.url, "eth_getBlockByHash", [before[2]?.hash, false]),
        null,
        "the old head is gone",
      );
      const logsAfter = await result<RpcLog[]>(server.url, "eth_getLogs", [
        { fromBlock: hex(head - 1), toBlock: hex(head) },
      ]);
      assert.notDeepEqual(logsAfter, logsBefore, "other trades");
      await result(server.url, "shape_unlinkedHeaders", [head - 10, 2]);
      const [p, n] = await Promise.all(
        [head - 11, head - 10].map((x) =>
          result<{ hash: string; parentHash: string }>(server.url, "eth_getBlockByNumber", [hex(x), false]),
        ),
      );
      assert.notEqual(n?.parentHash, p?.hash, "an unlinked header");
      await result(server.url, "shape_unlinkedHeaders", [head - 10, 0]);
      const healed = await result<{ parentHash: string }>(server.url, "eth_getBlockByNumber", [
        hex(head - 10),
        false,
      ]);
      assert.equal(healed.parentHash, p?.hash);
    } finally {
      await server.close();
    }
  });

  it("a live chain's head advances at the profile's block time (BNB Chain: 0.75 s)", async () => {
    const server = await start({ profile: "bnb", live: true });
    try {
      // The node's head is a function of its clock (this process's): n ms later it has moved by
      // floor or ceil of n / 750 blocks. Each read is bracketed by this clock, so the bounds
      // below hold however slowly the machine runs.
      const blockTimeMs = server.chain.universe.profile.blockTimeMs;
      assert.equal(blockTimeMs, 750);
      const headAt = async () => {
        const before = Date.now();
        const head = Number(await result<string>(server.url, "eth_blockNumber"));
        return { head, before, after: Date.now() };
      };
      const first = await headAt();
      let later = first;
      const deadline = Date.now() + 30_000;
      while (later.head - first.head < 2) {
        assert.ok(Date.now() < deadline, `the head stays at ${later.head}`);
        await new Promise((r) => setTimeout(r, 50));
        later = await headAt();
      }
      const second = later.head;
      const moved = second - first.head;
      const least = Math.floor((later.before - first.after) / blockTimeMs);
      const most = Math.ceil((later.after - first.before) / blockTimeMs);
      assert.ok(moved >= least && moved <= most, `${moved} blocks, between ${least} and ${most}`);
      const asked = Date.now();
      const latest = await result<{ timestamp: string }>(server.url, "eth_getBlockByNumber", [
        "latest",
        false,
      ]);
      const answered = Date.now();
      // The head is the last block whose time has come: dated within one block time before now
      // (whole seconds, rounded down).
      const dated = Number(latest.timestamp) * 1000;
      assert.ok(dated <= answered && dated > asked - blockTimeMs - 1000, `the head is dated now (${dated})`);
      const logs = await result<RpcLog[]>(server.url, "eth_getLogs", [
        { fromBlock: hex(second), toBlock: hex(second) },
      ]);
      const pancakeSwap = parseAbi([
        "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint128 protocolFeesToken0, uint128 protocolFeesToken1)",
      ]);
      const swaps = logs.filter(
        (l) => l.topics[0] === "0x19b47279256b2a23a1665c810c8d55a1758940ee09377d4f8d26497a3577dc83",
      );
      assert.ok(swaps.length > 0, "PancakeSwap V3 swaps");
      for (const l of swaps)
        decodeEventLog({ abi: pancakeSwap, data: l.data, topics: l.topics, strict: true });
    } finally {
      await server.close();
    }
  });
  it("announces each new head over WebSocket (eth_subscribe newHeads), as the indexer's client watches it", async () => {
    const server = await start({ profile: "bnb", live: true });
    const client = createRpcClient({
      chain: { id: 56, rpc: [server.url], ws: server.wsUrl },
      logger: createSilentLogger(),
    });
    try {
      const seen: { head: number; at: number }[] = [];
      const unwatch = client.watchHeads((head) => seen.push({ head, at: Date.now() }));
      const deadline = Date.now() + 30_000;
      while (seen.length < 3) {
        assert.ok(Date.now() < deadline, `heads announced: ${seen.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      unwatch();
      for (let i = 1; i < seen.length; i++) assert.ok((seen[i]?.head ?? 0) > (seen[i - 1]?.head ?? 0));
      // An announced head is one the node has: it answers it (or a later one) over HTTP.
      const now = Number(await result<string>(server.url, "eth_blockNumber"));
      assert.ok(
        now >= (seen.at(-1)?.head ?? Number.POSITIVE_INFINITY),
        `announced ${seen.at(-1)?.head}, head ${now}`,
      );
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("a million pools", () => {
  it("starts in modest memory, and answers at the head and for its last pool (time to first answer reported)", async () => {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const server = await start({ pools: 1_000_000, tokens: 300_000, historyBlocks: 20 });
    try {
      const head = Number(await result<string>(server.url, "eth_blockNumber"));
      const firstAnswerMs = performance.now() - started;
      const rssGrowth = process.memoryUsage().rss - rssBefore;
      process.stderr.write(
        `# 1,000,000 pools / 300,000 tokens: first answer after ${firstAnswerMs.toFixed(0)} ms, RSS +${(rssGrowth / 1048576).toFixed(0)} MB\n`,
      );
      assert.ok(rssGrowth < 100 * 1048576, `RSS grew by ${rssGrowth} bytes`);
      const u = server.chain.universe;
      assert.equal(u.poolsAt(head) >= 1_000_000, true);
      const last = u.poolInfo(999_999);
      const client = createPublicClient({ transport: http(server.url) });
      const reserves =
        last.protocol === "v2"
          ? await client.readContract({ address: last.address, abi: v2PairAbi, functionName: "getReserves" })
          : [await client.readContract({ address: last.address, abi: v3PoolAbi, functionName: "liquidity" })];
      assert.ok(reserves[0] > 0n, "the last pool of the creation era has liquidity");
      const logs = await result<RpcLog[]>(server.url, "eth_getLogs", [
        { fromBlock: hex(head - 1), toBlock: hex(head) },
      ]);
      assert.ok(logs.length > 300, "two mainnet blocks of logs at the head");
      const creations = await result<RpcLog[]>(server.url, "eth_getLogs", [
        {
          fromBlock: hex(u.creationEraBlocks),
          toBlock: hex(u.creationEraBlocks),
          address: u.profile.dexes.map((d) => d.factory),
        },
      ]);
      assert.equal(
        creations.length,
        1_000_000 - (u.creationEraBlocks - 1) * 500,
        "the creation era's last block",
      );
    } finally {
      await server.close();
    }
  });
});

describe("what the synthetic node serves besides its chain", () => {
  it("gives logs their block's time, and answers as an older node or a gateway would when told", async () => {
    const modern = await start({});
    const older = await start({
      logTimestamps: false,
      refuseMethods: ["eth_getBlockReceipts"],
      fullTransactions: false,
    });
    try {
      const head = Number(await result<string>(modern.url, "eth_blockNumber"));
      const block = await result<{ timestamp: Hex; transactions: { hash: Hex; from: Hex }[] }>(
        modern.url,
        "eth_getBlockByNumber",
        [hex(head), true],
      );
      const receipts = await result<{ transactionHash: Hex; from: Hex; logs: { blockTimestamp: Hex }[] }[]>(
        modern.url,
        "eth_getBlockReceipts",
        [hex(head)],
      );
      const logs = await result<{ blockTimestamp: Hex }[]>(modern.url, "eth_getLogs", [
        { fromBlock: hex(head), toBlock: hex(head) },
      ]);
      assert.ok(logs.length > 0);
      for (const log of [...logs, ...receipts.flatMap((r) => r.logs)])
        assert.equal(log.blockTimestamp, block.timestamp, "each log carries its block's timestamp");
      assert.deepEqual(
        receipts.map((r) => [r.transactionHash, r.from]),
        block.transactions.map((t) => [t.hash, t.from]),
        "receipts and full transactions agree",
      );

      const refused = await rpc(older.url, "eth_getBlockReceipts", [hex(head)]);
      assert.equal(
        refused.error?.code,
        -32601,
        "eth_getBlockReceipts refused as geth refuses a method it lacks",
      );
      const hashes = await result<{ transactions: unknown[] }>(older.url, "eth_getBlockByNumber", [
        hex(head),
        true,
      ]);
      assert.ok(
        hashes.transactions.length > 0 && hashes.transactions.every((t) => typeof t === "string"),
        "transaction hashes only",
      );
      const plain = await result<Record<string, unknown>[]>(older.url, "eth_getLogs", [
        { fromBlock: hex(head), toBlock: hex(head) },
      ]);
      assert.ok(
        plain.length > 0 && plain.every((l) => !("blockTimestamp" in l)),
        "logs without blockTimestamp",
      );
    } finally {
      await Promise.all([modern.close(), older.close()]);
    }
  });

  it("the uniswap-v2 profile: one Uniswap V2 factory, most blocks without a trade", async () => {
    const server = await startShapeServer({
      profile: "uniswap-v2",
      historyBlocks: 2000,
      live: false,
      port: 0,
    });
    try {
      const { chain } = server;
      let active = 0;
      let swaps = 0;
      chain.blocks(chain.universe.creationEraBlocks + 1, chain.head(), (block) => {
        const n = block.txs.filter((t) => t.kind === "swap").length;
        if (n > 0) active++;
        swaps += n;
        return true;
      });
      assert.ok(active > 40 && active < 200, `about one block in twenty trades (${active} of 2000)`);
      assert.ok(
        swaps / active > 6 && swaps / active < 14,
        `about 10 swaps a trading block (${swaps / active})`,
      );
      const pools = Array.from({ length: chain.universe.poolsAt(chain.head()) }, (_, i) =>
        chain.universe.poolInfo(i),
      );
      assert.deepEqual([...new Set(pools.map((p) => p.dex))], [0], "every pool is Uniswap V2's");
      const pairs = new Set(pools.map((p) => `${p.token0}/${p.token1}`));
      assert.equal(pairs.size, pools.length, "the factory never holds a pair twice");
    } finally {
      await server.close();
    }
  });
});
