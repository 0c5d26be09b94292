/**
 * An indexer with the pricing attached that follows the head until it is killed: the failover
 * test runs two of these on one chain and SIGKILLs the active one. Logs JSON lines at debug level
 * on stdout ("writer lock taken", "standby for chain …", "batch committed", …).
 * Usage: TOKENMARKET_FAILOVER_CHILD='{"databaseUrl":…,"chains":[…],"pricing":{…},"nowMs":…,"options":{…}}'
 *   node --import tsx src/_test/failover-child.ts
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

const input = JSON.parse(process.env.TOKENMARKET_FAILOVER_CHILD ?? "{}") as ChildInput;
const logger = pino({ level: "debug" });
const db = createDb({ url: input.databaseUrl, max: 4, applicationName: "tokenmarket-failover-child" });
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
  options: { ...input.options, follow: true, progressBar: false },
});
process.once("SIGTERM", () => {
  void indexer.stop().then(async () => {
    await db.end();
    process.exit(0);
  });
});
await indexer.start();
