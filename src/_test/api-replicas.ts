import type { DeployedPool } from "../devnet/deploy.js";
import { createDb } from "../store/db.js";
import { migrate } from "../store/migrate.js";
import type { createApiClient } from "./http-client.js";
import type { IndexerDevnet } from "./indexer-devnet.js";

type Client = Awaited<ReturnType<typeof createApiClient>>;

/** /readyz as the tests of reads from replicas look at it. */
type ReadyzAnswer = {
  status: string;
  reasons: string[];
  reads: { source: string; replicas: { host: string; state: string; lag_seconds: number | null }[] };
};

/** A server's /readyz (it needs no key). */
export const readinessOf = async (client: Client) =>
  (await client.get("/readyz", {}, { key: null })).body as ReadyzAnswer;

/**
 * One request to every data endpoint about the devnet's WETH (its trades and candles in `pool`,
 * the candles over `candles`): what a server reading from a replica must answer as the primary does.
 */
export function wethDataRequests(
  devnet: IndexerDevnet,
  pool: string,
  candles: { from: string; to: string },
): [string, Record<string, string | number>][] {
  const id = (address: string) => `${address.toLowerCase()}:${devnet.chainId}`;
  const tokens = devnet.deployment.tokens;
  const weth = id(tokens.WETH.address);
  return [
    ["/v1/tokens/search", { searchString: "WETH" }],
    ["/v1/tokens/metadata", { tokenId: weth }],
    ["/v1/tokens/line-chart", { tokenId: weth, days: 1 }],
    ["/v1/tokens/candle-chart", { tokenId: weth, days: 1, interval: 60 }],
    ["/v1/tokens/price-provenance", { tokenId: weth }],
    ["/v1/coins/price", { symbol: "ETH" }],
    ["/api/v1/assets", { asset_ids: `${weth},${id(tokens.USDC.address)}` }],
    ["/api/v1/candles", { asset_id: weth, pair_id: id(pool), interval: "5m", ...candles }],
    ["/api/v1/trades", { asset_id: weth, pair_id: id(pool) }],
    ["/api/v1/pairs", { asset_id: weth }],
  ];
}

/** The schema migrated into a database (the primary's `prepare`, before the standby copies it). */
export async function migrateAt(url: string): Promise<void> {
  const db = createDb({ url, max: 1 });
  try {
    await migrate(db);
  } finally {
    await db.end();
  }
}

/**
 * The devnet's WETH/USDC V2 pair, traded in 4 blocks after the history: the simulated market is
 * quiet at night (UTC), so a short history, run at some hours, holds no trade of this pair; these
 * trades make the compared answers (WETH's line chart, the pair's candles and trades) independent
 * of the hour of the run.
 */
export async function tradedWethUsdc(devnet: IndexerDevnet): Promise<DeployedPool> {
  const pool = devnet.deployment.pools.find((p) => p.key === "v2:WETH/USDC");
  if (pool === undefined) throw new Error("the devnet has no WETH/USDC V2 pair");
  await devnet.mineSwaps({ blocks: 4, swapsPerBlock: 2, seed: 12, pools: [pool] });
  return pool;
}
