/**
 * One API process of bench/scale-out.ts: serves the fixture market from BENCH_DB_URL on a free
 * port with the rate-limit store BENCH_RATE_STORE, prints its URL on stdout, and runs until killed.
 */
import { blockTime, fixture, fixtureConfig } from "../src/_test/market-fixture.js";
import { startApi } from "../src/api/server.js";
import { createSilentLogger } from "../src/internal/logger.js";
import { createDb } from "../src/store/db.js";

const url = process.env.BENCH_DB_URL;
if (!url) throw new Error("BENCH_DB_URL is not set");
const store = process.env.BENCH_RATE_STORE === "memory" ? "memory" : "database";
const db = createDb({ url, max: 10 });
const api = await startApi({
  config: fixtureConfig({ api: { port: 0, rateLimit: { max: 100_000_000, windowMs: 60_000, store } } }),
  db,
  logger: createSilentLogger(),
  now: () => blockTime(fixture.indexedBlock),
  balanceReader: async ({ wallets }) => ({ blockNumber: 1n, decimals: 6, balances: wallets.map(() => 1n) }),
});
process.stdout.write(`${api.urls.base}\n`);
process.once("SIGTERM", () => {
  void api.close().then(() => db.end().finally(() => process.exit(0)));
});
