/**
 * Runs the indexer in a child process until its chains have caught up, for the crash test (which
 * SIGKILLs it at random moments and restarts it). Logs JSON lines at debug level on stdout, the
 * "batch committed" ones included, and exits 0 when done.
 * Usage: TOKENMARKET_INDEXER_CHILD='{"databaseUrl":…,"chains":[…],"options":{…}}' node --import tsx indexer-child.ts
 */
import { pino } from "pino";
import { chainSchema } from "../config/schema.js";
import { createDb } from "../store/db.js";
import { noDerivedData } from "../sync/derived.js";
import { createIndexer } from "../sync/indexer.js";
import type { IndexerOptions } from "../sync/options.js";
import { runChildToEnd } from "./indexer-run.js";

type ChildInput = { databaseUrl: string; chains: unknown[]; options?: Partial<IndexerOptions> };

const input = JSON.parse(process.env.TOKENMARKET_INDEXER_CHILD ?? "{}") as ChildInput;
const logger = pino({ level: "debug" });
const db = createDb({ url: input.databaseUrl, max: 4, applicationName: "tokenmarket-indexer-child" });
const indexer = createIndexer({
  config: { chains: input.chains.map((c) => chainSchema.parse(c)) },
  db,
  logger,
  derived: noDerivedData,
  options: { ...input.options, follow: false, progressBar: false },
});
await runChildToEnd(indexer, db, logger, "indexer child");
