import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { historyReceiptSwaps, type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { assertSameDump, dumpIndexedData, type IndexedDump } from "../_test/indexer-dump.js";
import { assertSwapsMatch, type ExpectedSwap, readSwapsFromReceipts } from "../_test/indexer-receipts.js";
import { indexOnce } from "../_test/indexer-run.js";
import { type ChainConfig, chainSchema } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { createRpcMetrics, type RpcMetrics } from "../rpc/metrics.js";
import { startHealthServer } from "../runtime/health-server.js";
import { shapeChainConfig, shapeProfiles } from "../shape/profiles.js";
import { type ShapeServer, type ShapeServerOptions, startShapeServer } from "../shape/server.js";
import type { Db } from "../store/db.js";

// Every transaction source (a block's receipts, the block with its transactions, each
// transaction by hash) must store the very same swaps, maker and exchange included; the probe
// must pick what the node serves: Hardhat 2 lacks eth_getBlockReceipts (a real node without it),
// and the synthetic chain is told to refuse methods or leave fields out.

type Run = {
  db: Db;
  dump: IndexedDump;
  calls: Record<string, number>;
  source: string | undefined;
  metrics: RpcMetrics;
};

/** Indexes `chain` into a fresh database until caught up; the dump, calls by method and the source used. */
async function indexWith(db: Db, chain: ChainConfig): Promise<Run & { phase: string; error: string | null }> {
  const metrics = createRpcMetrics();
  const status = await indexOnce(db, chain, { rpcMetrics: metrics });
  const json = await metrics.registry.getMetricsAsJSON();
  const calls: Record<string, number> = {};
  for (const v of json.find((m) => m.name === "tokenmarket_rpc_calls_total")?.values ?? [])
    calls[String(v.labels.method)] = v.value;
  const source = json
    .find((m) => m.name === "tokenmarket_indexer_transaction_source")
    ?.values.find((v) => v.value === 1)?.labels.source;
  return {
    db,
    dump: await dumpIndexedData(db, [chain.id]),
    calls,
    source: source === undefined ? undefined : String(source),
    metrics,
    phase: status?.phase ?? "none",
    error: status?.error ?? null,
  };
}

/** Databases of the runs, dropped after each group of tests. */
const databases: TestDb[] = [];
const dropDatabases = () => Promise.all(databases.splice(0).map((d) => d.drop()));

/** indexWith in a database of its own (kept until the group's end), which must end cleanly. */
async function indexFresh(chain: ChainConfig): Promise<Run> {
  const testDb = await createTestDb();
  databases.push(testDb);
  const run = await indexWith(testDb.db, chain);
  assert.equal(run.phase, "stopped", `the run ended cleanly (${run.error ?? "no error"})`);
  return run;
}

describe("transaction sources on the Hardhat devnet (no eth_getBlockReceipts)", () => {
  let devnet: IndexerDevnet;
  let head: number;
  const runs = new Map<string, Run>();
  before(async () => {
    devnet = await startIndexerDevnet({ historyDays: 1, seed: 13 });
    head = await devnet.head();
    for (const source of ["transactions", "fullBlocks", "auto"]) {
      runs.set(source, await indexFresh(devnet.chain({ transactionSource: source })));
    }
  });
  after(async () => {
    await Promise.all([devnet?.stop(), dropDatabases()]);
  });

  it("stores the receipts' swaps, maker and exchange included, whatever the source", async () => {
    const expected = await historyReceiptSwaps(devnet, head);
    const makers = new Set(expected.map((s) => s.maker));
    assert.ok(makers.size > 1, "swaps of several makers");
    const reference = runs.get("transactions") as Run;
    await assertSwapsMatch(reference.db, devnet.chainId, expected, { fromBlock: 0, toBlock: head });
    await assertSwapsMatch((runs.get("auto") as Run).db, devnet.chainId, expected, {
      fromBlock: 0,
      toBlock: head,
    });
    for (const source of ["fullBlocks", "auto"]) {
      assertSameDump((runs.get(source) as Run).dump, reference.dump, `${source} vs per-transaction`);
    }
  });

  it("probes: auto reads full blocks, the first choice, shown in /metrics", async () => {
    const auto = runs.get("auto") as Run;
    assert.equal(auto.source, "fullBlocks", "the probe chose full blocks");
    assert.equal(auto.calls.eth_getTransactionByHash ?? 0, 0, "no call per transaction");
    assert.equal(auto.calls.eth_getBlockReceipts ?? 0, 0, "receipts not asked: full blocks are served");
    const perTx = runs.get("transactions") as Run;
    assert.equal(perTx.source, "transactions");
    assert.ok(
      (perTx.calls.eth_getTransactionByHash ?? 0) > (auto.calls.eth_getBlockByNumber ?? 0) / 2,
      `per-transaction reads: ${JSON.stringify(perTx.calls)}`,
    );
    // The indexer role's /metrics, over HTTP.
    const health = await startHealthServer({
      config: { chains: [devnet.chain()], indexer: { host: "127.0.0.1", port: 0 } },
      logger: createSilentLogger(),
      status: () => [],
      extraMetrics: [auto.metrics.registry],
    });
    try {
      const text = await (await fetch(`${health.url}/metrics`)).text();
      const chain = `chain_id="${devnet.chainId}"`;
      assert.match(
        text,
        new RegExp(`tokenmarket_indexer_transaction_source\\{${chain},source="fullBlocks"\\} 1`),
      );
      assert.match(
        text,
        new RegExp(`tokenmarket_indexer_transaction_source\\{${chain},source="blockReceipts"\\} 0`),
      );
    } finally {
      await health.close();
    }
  });

  it("stops the chain with a message naming the setting when the configured source is not served", async () => {
    const testDb = await createTestDb();
    try {
      const run = await indexWith(testDb.db, devnet.chain({ transactionSource: "blockReceipts" }));
      assert.equal(run.phase, "failed", "a configuration the node cannot serve stops the chain");
      assert.match(run.error ?? "", /chains\[\]\.transactionSource is "blockReceipts"/);
      // The node's refusal is counted as such in /metrics.
      const errors = (await run.metrics.registry.getMetricsAsJSON()).find(
        (m) => m.name === "tokenmarket_rpc_errors_total",
      );
      assert.ok(
        errors?.values.some(
          (v) =>
            v.labels.method === "eth_getBlockReceipts" && v.labels.kind === "unsupported" && v.value === 1,
        ),
        JSON.stringify(errors?.values),
      );
      const { rows } = await testDb.db.query<{ n: number }>("SELECT count(*)::int AS n FROM swaps");
      assert.equal(rows[0]?.n, 0, "nothing indexed");
    } finally {
      await testDb.drop();
    }
  });
});

describe("transaction sources on the synthetic chain", () => {
  const profile = shapeProfiles["uniswap-v2"];
  // The same seed and genesis time on every server: the same chain, hashes and times included.
  const base: ShapeServerOptions = {
    profile: "uniswap-v2",
    seed: 5,
    historyBlocks: 3000,
    live: false,
    genesisTimeMs: Date.UTC(2025, 0, 1),
    port: 0,
  };
  const servers: ShapeServer[] = [];
  const serve = async (options: Partial<ShapeServerOptions> = {}) => {
    const server = await startShapeServer({ ...base, ...options });
    servers.push(server);
    return server;
  };
  const chainOf = (server: ShapeServer, transactionSource: string) =>
    chainSchema.parse({ ...shapeChainConfig(profile, server.url), confirmations: 0, transactionSource });
  let server: ShapeServer;
  let reference: Run;
  let swapBlocks = 0;
  let swapTxs = 0;
  /** The independent reading of the receipts over the last 1,000 blocks. */
  let expected: ExpectedSwap[];
  let window: { fromBlock: number; toBlock: number };
  before(async () => {
    server = await serve();
    reference = await indexFresh(chainOf(server, "transactions"));
    const head = server.chain.head();
    server.chain.blocks(0, head, (block) => {
      const swaps = block.txs.filter((tx) => tx.kind === "swap").length;
      swapTxs += swaps;
      if (swaps > 0) swapBlocks++;
      return true;
    });
    const u = server.chain.universe;
    const pools = Array.from({ length: u.poolsAt(head) }, (_, i) => u.poolInfo(i)).map((p) => ({
      address: p.address,
      protocol: p.protocol,
      token0: u.tokenAddress(p.token0),
      token1: u.tokenAddress(p.token1),
    }));
    window = { fromBlock: head - 1000, toBlock: head };
    expected = await readSwapsFromReceipts({ rpcUrl: server.url, pools, ...window });
  });
  after(async () => {
    await Promise.all([...servers.map((s) => s.close()), dropDatabases()]);
  });

  it("stores the receipts' swaps per transaction", async () => {
    assert.ok(swapTxs > 500, `hundreds of swaps (${swapTxs}) in ${swapBlocks} blocks`);
    assert.ok(swapBlocks < server.chain.head() / 4, "most blocks without trades");
    assert.ok(expected.length > 100, `a sample of swaps (${expected.length})`);
    await assertSwapsMatch(reference.db, profile.chainId, expected, window);
    assert.equal(reference.calls.eth_getBlockReceipts ?? 0, 0, "no block-level call per transaction");
    assert.ok(
      (reference.calls.eth_getTransactionByHash ?? 0) >= swapTxs,
      `one eth_getTransactionByHash per swap (${reference.calls.eth_getTransactionByHash} for ${swapTxs})`,
    );
  });

  it("stores the same data from receipts and from full blocks, with one call per block with swaps", async () => {
    for (const source of ["blockReceipts", "fullBlocks"] as const) {
      const run = await indexFresh(chainOf(server, source));
      assert.equal(run.source, source);
      assertSameDump(run.dump, reference.dump, `${source} vs per-transaction`);
      await assertSwapsMatch(run.db, profile.chainId, expected, window);
      assert.equal(run.calls.eth_getTransactionByHash ?? 0, 0, `${source}: no call per transaction`);
      const method = source === "blockReceipts" ? "eth_getBlockReceipts" : "eth_getBlockByNumber";
      assert.ok(
        (run.calls[method] ?? 0) >= swapBlocks,
        `${source}: ${method} for each of the ${swapBlocks} blocks with swaps (${run.calls[method]})`,
      );
      if (source === "blockReceipts") {
        // The receipts' logs carry blockTimestamp: no header for the blocks with swaps.
        const headers = run.calls.eth_getBlockByNumber ?? 0;
        assert.ok(
          headers < (reference.calls.eth_getBlockByNumber ?? 0) - swapBlocks / 2,
          `headers only for the range ends and the reorg window (${headers})`,
        );
      }
    }
  });

  it("probes: full blocks first, then receipts (with or without times), then transactions", async () => {
    const cases: { options: Partial<ShapeServerOptions>; expected: string }[] = [
      { options: {}, expected: "fullBlocks" },
      { options: { refuseMethods: ["eth_getBlockReceipts"] }, expected: "fullBlocks" },
      { options: { fullTransactions: false }, expected: "blockReceipts" },
      { options: { logTimestamps: false, fullTransactions: false }, expected: "blockReceipts" },
      {
        options: { refuseMethods: ["eth_getBlockReceipts"], fullTransactions: false },
        expected: "transactions",
      },
    ];
    for (const { options, expected } of cases) {
      const node = await serve(options);
      const run = await indexFresh(chainOf(node, "auto"));
      const label = JSON.stringify(options);
      assert.equal(run.source, expected, `${label}: the probe chose ${run.source}`);
      assertSameDump(run.dump, reference.dump, `auto on ${label}`);
      if (expected !== "transactions")
        assert.equal(run.calls.eth_getTransactionByHash ?? 0, 0, `${label}: no call per transaction`);
    }
  });
});
