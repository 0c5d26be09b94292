/**
 * The DEX families' cost (bench:scale, part "families"): the indexer with the pricing backfills
 * the mainnet-shaped BNB Chain twice in the same run, from block 0 into a fresh database each
 * time: once with the profile's whole mix (PancakeSwap V2, V3, Infinity CL and Bin, Uniswap V4,
 * THENA's Algebra) and once restricted to V2 and V3 (`withFamilies`, the chain as it was before
 * the other families). Per variant: the batches' time from the indexer's "batch committed" lines
 * (fetch, prepare and commit, the pricing included; median and p90 per batch, and per swap), the
 * JSON-RPC calls per swap by method (the indexer's own RPC metrics), and the swaps per family.
 */
import { pino } from "pino";
import { chainSchema } from "../src/config/schema.js";
import { createPricing } from "../src/pricing/pricing.js";
import { createRpcMetrics } from "../src/rpc/metrics.js";
import { shapeChainConfig } from "../src/shape/profiles.js";
import { startShapeServer } from "../src/shape/server.js";
import { createIndexer } from "../src/sync/indexer.js";
import { withScratchDb } from "./database.js";

export type FamiliesSettings = { pools: number; tokens: number; historyBlocks: number };

type BatchLine = {
  swaps: number;
  elapsed_ms: number;
  fetch_ms: number;
  prepare_ms: number;
  commit_ms: number;
};

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number);
};
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** One backfill of the BNB profile (restricted to `families` when given) with pricing. */
async function backfill(
  serverUrl: string,
  settings: FamiliesSettings,
  families: readonly string[] | undefined,
) {
  const node = await startShapeServer({
    profile: "bnb",
    ...(families ? { families } : {}),
    pools: settings.pools,
    tokens: settings.tokens,
    historyBlocks: settings.historyBlocks,
    live: false,
    port: 0,
  });
  try {
    const u = node.chain.universe;
    const head = node.chain.head();
    const swapsByFamily: Record<string, number> = {};
    node.chain.blocks(0, head, (block) => {
      for (const tx of block.txs) {
        const name = u.poolInfo(tx.pool).protocol;
        if (tx.kind === "swap") swapsByFamily[name] = (swapsByFamily[name] ?? 0) + 1;
      }
      return true;
    });
    return await withScratchDb(serverUrl, { name: "families", max: 6 }, async (db) => {
      const chain = chainSchema.parse({ ...shapeChainConfig(u.profile, node.url), confirmations: 0 });
      const config = { chains: [chain], pricing: { liquidityFloorUsd: 50_000, maxDeviation: 0.05 } };
      const lines: BatchLine[] = [];
      const logger = pino(
        { level: "debug" },
        {
          write(line: string) {
            const entry = JSON.parse(line) as { msg?: string } & BatchLine;
            if (entry.msg === "batch committed") lines.push(entry);
          },
        },
      );
      const metrics = createRpcMetrics();
      const indexer = createIndexer({
        config,
        db,
        logger,
        derived: createPricing({ config, logger }),
        // Batches of about 2,000 logs, so that a batch's time is one among many (as bench:stats does).
        options: { follow: false, progressBar: false, targetLogsPerBatch: 2000 },
        rpcMetrics: metrics,
      });
      const started = performance.now();
      await indexer.start();
      await indexer.done();
      const elapsedMs = performance.now() - started;
      const [status] = indexer.status();
      if (status?.phase !== "stopped" || status.indexedBlock !== head)
        throw new Error(`the backfill did not reach the head: ${status?.phase} ${status?.error ?? ""}`);
      const { rows } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM swaps WHERE chain_id = $1",
        [chain.id],
      );
      const swaps = rows[0]?.n ?? 0;
      const json = await metrics.registry.getMetricsAsJSON();
      const callsByMethod: Record<string, number> = {};
      for (const v of json.find((m) => m.name === "tokenmarket_rpc_calls_total")?.values ?? [])
        callsByMethod[String(v.labels.method)] = v.value;
      const calls = sum(Object.values(callsByMethod));
      const ms = lines.map((l) => l.elapsed_ms);
      return {
        dexes: u.profile.dexes.map((d) => d.name),
        blocks: head + 1,
        swaps,
        swapsByFamily,
        elapsedMs: Math.round(elapsedMs),
        swapsPerSecond: Math.round(swaps / (elapsedMs / 1000)),
        batches: lines.length,
        batchMs: { median: percentile(ms, 0.5), p90: percentile(ms, 0.9), max: Math.max(0, ...ms) },
        swapsPerBatch: Math.round(swaps / Math.max(1, lines.length)),
        msPerSwap: Math.round((sum(ms) / Math.max(1, swaps)) * 1000) / 1000,
        stepsMs: {
          fetch: sum(lines.map((l) => l.fetch_ms)),
          prepare: sum(lines.map((l) => l.prepare_ms)),
          commit: sum(lines.map((l) => l.commit_ms)),
        },
        calls,
        callsPerSwap: Math.round((calls / swaps) * 1000) / 1000,
        callsByMethod,
      };
    });
  } finally {
    await node.close();
  }
}

/** Both variants, the whole mix first; `ratio`: the mix's per-swap time and calls over V2/V3's. */
export async function benchFamilies(args: FamiliesSettings & { serverUrl: string; log(line: string): void }) {
  const { serverUrl, log, ...settings } = args;
  log(
    `families: BNB Chain, ${settings.pools} pools, ${settings.historyBlocks} trading blocks, every family …`,
  );
  const mix = await backfill(serverUrl, settings, undefined);
  log(
    `families: ${mix.swaps} swaps, ${mix.batchMs.median} ms a batch (median), ${mix.callsPerSwap} calls a swap`,
  );
  log("families: the same profile with V2 and V3 only …");
  const v2v3 = await backfill(serverUrl, settings, ["v2", "v3"]);
  log(
    `families: ${v2v3.swaps} swaps, ${v2v3.batchMs.median} ms a batch (median), ${v2v3.callsPerSwap} calls a swap`,
  );
  return {
    settings,
    mix,
    v2v3,
    ratio: {
      msPerSwap: Math.round((mix.msPerSwap / v2v3.msPerSwap) * 100) / 100,
      callsPerSwap: Math.round((mix.callsPerSwap / v2v3.callsPerSwap) * 100) / 100,
    },
  };
}
