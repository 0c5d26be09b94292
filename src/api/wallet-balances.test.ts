import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { startTestDevnet, type TestDevnet } from "../_test/devnet.js";
import { unitsOf } from "../_test/exact.js";
import { type ApiAnswer, createApiClient } from "../_test/http-client.js";
import { pipelineConfig } from "../_test/pipeline.js";
import { installMulticall3, type SilentNode, startSilentNode } from "../_test/rpc-nodes.js";
import type { Config } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import { createApiServer } from "./server.js";
import { BALANCE_TIMEOUT_MS } from "./wallet-balances.js";

type Client = Awaited<ReturnType<typeof createApiClient>>;
type Balances = { walletBalances: { walletAddress: string; balance: number }[]; cumulativeBalance: number };

/** The sum of a counter's samples in /metrics text whose labels include all of `labels`. */
function counter(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      sum += Number(line.split(" ").pop());
  }
  return sum;
}

/**
 * GET /v1/wallets/token-balances against a real hardhat devnet through the shared RPC client:
 * the JSON-RPC batch path, the Multicall3 path (the real Multicall3 installed at its address),
 * non-tokens, and a node that never answers (bounded by BALANCE_TIMEOUT_MS, 504 naming the
 * network), with the calls counted in /metrics.
 */
describe("wallet balances over the RPC client", { timeout: 120_000 }, () => {
  let testDb: TestDb;
  let devnet: TestDevnet;
  let silent: SilentNode;
  let key: string;
  const servers: FastifyInstance[] = [];
  const chain = "31337";

  const serve = async (config: Config): Promise<Client> => {
    const app = createApiServer({ config, db: testDb.db, logger: createSilentLogger() });
    servers.push(app);
    await app.listen({ host: "127.0.0.1", port: 0 });
    return createApiClient(app, { key });
  };
  const withRpc = (rpc: string[]): Config => {
    const config = pipelineConfig(devnet.deployment, devnet.rpcUrl);
    return { ...config, chains: config.chains.map((c) => ({ ...c, rpc })) };
  };
  const read = (api: Client, contract: string, wallets: readonly string[]) =>
    api.get("/v1/wallets/token-balances", { contract, chain, wallets: wallets.join(",") });
  const metricsOf = async (api: Client) => (await api.get("/metrics", {}, { key: null })).text;

  /** The expected answer, from the node directly: raw balances of 6-decimal USDC. */
  const expected = async (wallets: readonly string[]) => {
    const raw = await Promise.all(wallets.map((w) => devnet.balanceOf("USDC", w as `0x${string}`)));
    assert.ok(raw.every((b) => b > 0n));
    return raw;
  };

  /** Each balance raw / 10^6 and their sum the exact sum of the raw balances, each rounded once. */
  function assertBalances(answer: ApiAnswer, wallets: readonly string[], raw: bigint[]) {
    assert.equal(answer.status, 200, answer.text);
    const body = answer.body as Balances;
    assert.deepEqual(
      body.walletBalances,
      wallets.map((walletAddress, i) => ({ walletAddress, balance: unitsOf(raw[i] as bigint, 6) })),
    );
    assert.equal(
      body.cumulativeBalance,
      unitsOf(
        raw.reduce((a, b) => a + b, 0n),
        6,
      ),
      "the exact sum, rounded once",
    );
    assert.match(answer.headers.get("x-balances-block") ?? "", /^31337=\d+$/);
  }

  before(async () => {
    [testDb, devnet, silent] = await Promise.all([createTestDb(), startTestDevnet(), startSilentNode()]);
    ({ key } = await createApiKey(testDb.db, "balances"));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await silent?.stop();
    await devnet?.stop();
    await testDb?.drop();
  });

  it("reads through one JSON-RPC batch where Multicall3 is not deployed, then through one Multicall3 eth_call", async () => {
    const usdc = devnet.token("USDC");
    const wallets = devnet.wallets.slice(0, 5).map((w) => w.toLowerCase());
    const balances = await expected(wallets);
    const calls = { chain_id: chain, method: "eth_call" };

    const batchApi = await serve(withRpc([devnet.rpcUrl]));
    assertBalances(await read(batchApi, usdc, wallets), wallets, balances);
    // decimals() and one balanceOf per wallet.
    assert.equal(
      counter(await metricsOf(batchApi), "tokenmarket_rpc_calls_total", calls),
      wallets.length + 1,
    );

    await installMulticall3(devnet.rpc);
    const multicallApi = await serve(withRpc([devnet.rpcUrl]));
    assertBalances(await read(multicallApi, usdc, wallets), wallets, balances);
    assert.equal(counter(await metricsOf(multicallApi), "tokenmarket_rpc_calls_total", calls), 1);

    // A contract that is not a token, and an address without code, are 400s on both paths.
    for (const api of [batchApi, multicallApi]) {
      for (const contract of [devnet.deployment.v2.factory, wallets[0] as string]) {
        const answer = await read(api, contract, wallets.slice(0, 1));
        assert.equal(answer.status, 400, answer.text);
        assert.match((answer.body as { message: string }).message, /not an ERC-20 token/);
      }
    }
  });

  it(`answers 504 naming the network within ${BALANCE_TIMEOUT_MS} ms when the node never answers`, async () => {
    const api = await serve(withRpc([`${silent.url}secret-path`]));
    const started = performance.now();
    const answer = await read(api, devnet.token("USDC"), devnet.wallets.slice(0, 2));
    const elapsed = performance.now() - started;
    assert.equal(answer.status, 504, answer.text);
    assert.match(
      (answer.body as { message: string }).message,
      /^could not read balances from network 31337 \(Devnet\): its node did not answer within 3 s; try again later$/,
    );
    assert.doesNotMatch(answer.text, /secret-path|127\.0\.0\.1/);
    // Before this bound existed the answer took 10.2 s (two 5 s viem timeouts).
    assert.ok(
      elapsed >= BALANCE_TIMEOUT_MS - 100 && elapsed < BALANCE_TIMEOUT_MS + 1000,
      `after ${elapsed} ms`,
    );
    const metrics = await metricsOf(api);
    assert.ok(
      counter(metrics, "tokenmarket_rpc_errors_total", { chain_id: chain, kind: "timeout" }) >= 1,
      metrics,
    );
  });

  it("fails over from a node that never answers to the next configured one, within the bound", async () => {
    const api = await serve(withRpc([silent.url, devnet.rpcUrl]));
    const wallets = devnet.wallets.slice(0, 3).map((w) => w.toLowerCase());
    const started = performance.now();
    const answer = await read(api, devnet.token("USDC"), wallets);
    const elapsed = performance.now() - started;
    assertBalances(answer, wallets, await expected(wallets));
    assert.ok(elapsed < BALANCE_TIMEOUT_MS, `after ${elapsed} ms`);
    assert.equal(counter(await metricsOf(api), "tokenmarket_rpc_failovers_total", { chain_id: chain }), 1);
  });
});
