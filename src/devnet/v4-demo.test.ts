/**
 * Uniswap V4 on the demo, over real HTTP: the devnet's V4 pools (v4-core's PoolManager from npm)
 * indexed and priced like the V2 and V3 ones. FROG trades only on a V4 pool against the native
 * coin; the native coin prices as WETH does; a pool whose hook may return deltas never moves a price.
 */
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Address, Hex } from "viem";
import { type ApiClient, type ApiPipeline, startApiPipeline } from "../_test/api-server.js";
import type { Pipeline } from "../_test/pipeline.js";
import { v4KeyOf } from "./deploy.js";
import { decodePoolStates, poolRawPrice, poolStateCalls } from "./pool-state.js";
import { createDevnetRpc } from "./rpc.js";
import { executeTransactions, readNonces } from "./transactions.js";
import { v4SwapTx } from "./v4.js";

type Row = Record<string, unknown>;
const native = "0x0000000000000000000000000000000000000000";

describe("Uniswap V4 on the demo, over HTTP", () => {
  let pipeline: Pipeline;
  let served: ApiPipeline | undefined;
  let api: ApiClient;
  const chain = 31337;
  const id = (address: string) => `${address.toLowerCase()}:${chain}`;
  const pool = (key: string) => {
    const found = pipeline.deployment.pools.find((p) => p.key === key);
    assert.ok(found, key);
    return found;
  };

  before(async () => {
    served = await startApiPipeline({ keyName: "v4", pipeline: { historyDays: 1 } });
    ({ pipeline, api } = served);
  });
  after(() => served?.close());

  const usdPrices = async (addresses: readonly string[]) => {
    const answer = await api.get("/api/v1/assets", { asset_ids: addresses.map(id).join(",") });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return (answer.body as Row[]).map((r) => r.usd_price);
  };

  it("a token that trades only on a V4 native-ETH pool has a USD price, pairs, a line chart, candles and a search hit", async () => {
    const frog = pipeline.deployment.tokens.FROG.address;
    const frogPool = pool("v4:FROG/ETH:10000");
    const [price] = await usdPrices([frog]);
    const provenance = await api.get("/v1/tokens/price-provenance", { tokenId: id(frog) });
    const pairList = await api.get("/api/v1/pairs", { asset_id: id(frog) });
    assert.ok(
      typeof price === "number" && price > 0,
      `FROG's USD price: ${price} ${JSON.stringify(provenance.body)} ${JSON.stringify(pairList.body)}`,
    );

    const pairs = (await api.get("/api/v1/pairs", { asset_id: id(frog) })).body as Row[];
    assert.equal(pairs.length, 1, JSON.stringify(pairs));
    const [pair] = pairs as [Row];
    assert.equal(pair.pair_id, id(frogPool.address));
    assert.match(String(pair.pair_id), /^0x[0-9a-f]{64}:31337$/);
    assert.equal(pair.factory_name, "Uniswap V4");
    assert.deepEqual([pair.token0_address, pair.token1_address].sort(), [id(native), id(frog)].sort());

    const chart = (await api.get("/v1/tokens/line-chart", { tokenId: id(frog), days: 2 })).body as {
      labels: string[];
      data: number[];
    };
    assert.ok(chart.data.length > 0 && chart.data.every((v) => v > 0), `${chart.data.length} hours`);

    const candles = await api.get("/api/v1/candles", {
      asset_id: id(frog),
      pair_id: id(frogPool.address),
      interval: "1h",
      from: new Date(pipeline.until.getTime() - 36 * 3_600_000).toISOString(),
      to: pipeline.until.toISOString(),
    });
    assert.equal(candles.status, 200, JSON.stringify(candles.body));
    assert.ok(
      (candles.body as Row[]).some((c) => Number(c.volume) > 0),
      "traded hours",
    );

    const found = (await api.get("/v1/tokens/search", { searchString: "frog" })).body as Row[];
    assert.ok(
      found.some((t) => t.contract === frog),
      `search finds FROG: ${JSON.stringify(found.map((t) => t.contract))}`,
    );
  });

  it("the native coin and the wrapped native token answer the same USD price", async () => {
    const [eth, weth] = await usdPrices([native, pipeline.deployment.tokens.WETH.address]);
    assert.ok(typeof weth === "number" && weth > 0);
    assert.equal(eth, weth);
  });

  it("a return-delta hook pool pushed 10x by one trade moves no USD price, and its trade is listed", async () => {
    const { deployment } = pipeline;
    const target = pool("v4:UNI/USDC:3000:delta-hook");
    const rpc = createDevnetRpc(pipeline.rpcUrl);
    const tokens = Object.values(deployment.tokens).map((t) => t.address);
    await pipeline.waitIndexed();
    const before = await usdPrices([native, ...tokens]);
    const stateBefore = decodePoolStates([target], await rpc.batch<Hex>(poolStateCalls([target])));
    const s0 = stateBefore.get(target.key);
    assert.ok(s0?.protocol === "v3");
    // Token1 in to raise the price of token0 in token1 tenfold: Δy = L·(√(10P) − √P), 5 % on top for the fee.
    const sqrtP = Math.sqrt(poolRawPrice(s0));
    const amountIn = BigInt(Math.ceil(Number(s0.liquidity) * sqrtP * (Math.sqrt(10) - 1) * 1.05));
    const trader = deployment.accounts.traders[0] as Address;
    const nonces = await readNonces(rpc, [trader]);
    await rpc.request("evm_setAutomine", [false]);
    const [receipt] = await executeTransactions(rpc, nonces, [
      v4SwapTx({
        router: deployment.v4.swapRouter,
        from: trader,
        key: v4KeyOf(target),
        zeroForOne: false,
        amountIn,
      }),
    ]);
    assert.ok(receipt);
    const s1 = decodePoolStates([target], await rpc.batch<Hex>(poolStateCalls([target]))).get(target.key);
    assert.ok(s1);
    assert.ok(poolRawPrice(s1) / poolRawPrice(s0) >= 10, `pushed ${poolRawPrice(s1) / poolRawPrice(s0)}x`);
    await pipeline.waitIndexed(Number(receipt.blockNumber));

    assert.deepEqual(await usdPrices([native, ...tokens]), before, "no USD price moved");
    const trades = (
      await api.get("/api/v1/trades", {
        asset_id: id(deployment.tokens.UNI.address),
        pair_id: id(target.address),
      })
    ).body as Row[];
    assert.ok(
      trades.some((t) => t.hash === receipt.transactionHash && t.hook_may_rewrite_amounts === true),
      `the push is listed: ${JSON.stringify(trades[0])}`,
    );
  });
});
