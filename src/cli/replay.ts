import path from "node:path";
import { loadConfig, projectRoot } from "../config/load.js";
import type { Config, ReferenceTokens } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { readFixture } from "../replay/fixture.js";
import { ReplayError, replayFixtures } from "../replay/replay.js";
import { openDatabase } from "../runtime/database.js";

/** The sample configuration of real chains: its reference tokens price replays of chains 1, 56 and 137. */
const realChainsConfig = path.join(projectRoot, "config", "mainnet.example.json");

/**
 * `tokenmarket replay DIR…`: imports recorded logs (a folder with manifest.json and logs.raw.csv
 * each) through the indexer's ingestion and pricing path into the configured database. Folders of
 * one chain are merged in block order. Reference tokens come from the configuration, or for the
 * chains 1, 56 and 137 when it does not have them, from config/mainnet.example.json.
 */
export async function runReplay(options: {
  config: Config;
  logger: Logger;
  dirs: string[];
}): Promise<number> {
  const { config, logger } = options;
  if (options.dirs.length === 0) {
    console.error("usage: tokenmarket replay DIR… (each DIR holds manifest.json and logs.raw.csv)");
    return 2;
  }
  // Every file is read and checked before the database is touched: a malformed file stores nothing.
  const fixtures = options.dirs.map((dir) => readFixture(path.resolve(dir)));
  const references = new Map<number, ReferenceTokens>(config.chains.map((c) => [c.id, c.referenceTokens]));
  const chainIds = [...new Set(fixtures.map((f) => f.manifest.chainId))];
  if (chainIds.some((id) => !references.has(id))) {
    for (const chain of loadConfig({ file: realChainsConfig, env: {} }).chains) {
      if (!references.has(chain.id)) references.set(chain.id, chain.referenceTokens);
    }
  }
  const unpriced = chainIds.filter((id) => !references.has(id));
  if (unpriced.length > 0) {
    throw new ReplayError(
      `replay: chain ${unpriced.join(", ")} is not configured: add it to the configuration with its referenceTokens, which price its trades`,
    );
  }
  const pricing = createPricing({
    config: {
      pricing: config.pricing,
      chains: [...references].map(([id, referenceTokens]) => ({ id, referenceTokens })),
    },
    logger: logger.child({ component: "pricing" }),
  });
  const database = await openDatabase({ config, logger, attach: true });
  try {
    const result = await replayFixtures({ db: database.db, derived: pricing, logger, fixtures });
    console.log(
      `replayed ${fixtures.length} recording(s) into ${database.where}: ${result.swaps} swaps, ${result.poolEvents} other pool events in ${result.batches} batches (${(result.elapsedMs / 1000).toFixed(1)} s)`,
    );
    return 0;
  } finally {
    await database.close();
  }
}
