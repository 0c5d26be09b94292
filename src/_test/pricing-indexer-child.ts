/**
 * The indexer with the pricing attached, in a child process until its chains have caught up:
 * the crash test SIGKILLs it at random moments and restarts it. Logs JSON lines at debug level on
 * stdout ("priced batch" among them) and exits 0 when done.
 * Usage: TOKENMARKET_PRICING_CHILD='{"databaseUrl":…,"chains":[…],"pricing":{…},"nowMs":…,"options":{…}}'
 *   node --import tsx src/_test/pricing-indexer-child.ts
 */
import { pino } from "pino";
import { chainSchema } from "../config/schema.js";
import { createPricing } from "../pricing/pricing.js";
import { createDb } from "../store/db.js";
import { createIndexer } from "../sync/indexer.js";
import type { IndexerOptions } from "../sync/options.js";

type ChildInput = {
  databaseUrl: string;
  chains: unknown[];
  pricing: { liquidityFloorUsd: number; maxDeviation: number };
  nowMs: number;
  options?: Partial<IndexerOptions>;
};

const input = JSON.parse(process.env.TOKENMARKET_PRICING_CHILD ?? "{}") as ChildInput;
const logger = pino({ level: "debug" });
const db = createDb({ url: input.databaseUrl, max: 4, applicationName: "tokenmarket-pricing-child" });
const chains = input.chains.map((c) => chainSchema.parse(c));
const pricing = createPricing({
  config: { pricing: input.pricing, chains },
  logger,
  now: () => new Date(input.nowMs),
});
const indexer = createIndexer({
  config: { chains },
  db,
  logger,
  derived: pricing,
  options: { ...input.options, follow: false, progressBar: false },
});
await indexer.start();
await indexer.done();
const failed = indexer.status().filter((s) => s.phase === "failed");
logger.info({ done: true, failed: failed.length }, "pricing child done");
await db.end();
process.exit(failed.length > 0 ? 1 : 0);
