/**
 * The indexer with the pricing attached, in a child process. Two uses, one child:
 * - `follow: false` (the crash test): runs until its chains have caught up and exits 0 (1 if a
 *   chain failed); the test SIGKILLs it at random moments and restarts it.
 * - `follow: true` (the failover test): follows the head until it is killed (SIGTERM stops it
 *   cleanly); the test runs two of these on one chain and SIGKILLs the active one.
 * Logs JSON lines at debug level on stdout ("priced batch", "writer lock taken", "standby for
 * chain …", "batch committed", …).
 * Usage: TOKENMARKET_PRICING_CHILD='{"databaseUrl":…,"chains":[…],"pricing":{…},"nowMs":…,"follow":…,"options":{…}}'
 *   node --import tsx src/_test/pricing-indexer-child.ts
 */
import { pino } from "pino";
import { chainSchema } from "../config/schema.js";
import { createPricing } from "../pricing/pricing.js";
import { createDb } from "../store/db.js";
import { createIndexer } from "../sync/indexer.js";
import type { IndexerOptions } from "../sync/options.js";
import { runChildToEnd } from "./indexer-run.js";

type ChildInput = {
  databaseUrl: string;
  chains: unknown[];
  pricing: { liquidityFloorUsd: number; maxDeviation: number };
  nowMs: number;
  /** Follow the head until killed instead of exiting once caught up. */
  follow?: boolean;
  options?: Partial<IndexerOptions>;
};

const input = JSON.parse(process.env.TOKENMARKET_PRICING_CHILD ?? "{}") as ChildInput;
const follow = input.follow ?? false;
const logger = pino({ level: "debug" });
const db = createDb({
  url: input.databaseUrl,
  max: 4,
  applicationName: follow ? "tokenmarket-failover-child" : "tokenmarket-pricing-child",
});
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
  options: { ...input.options, follow, progressBar: false },
});
if (follow) {
  process.once("SIGTERM", () => {
    void indexer.stop().then(async () => {
      await db.end();
      process.exit(0);
    });
  });
  await indexer.start();
} else {
  await runChildToEnd(indexer, db, logger, "pricing child");
}
