import { parseArgs } from "node:util";
import { ConfigError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { type ShapeProfileName, shapeProfiles } from "./profiles.js";
import { NODE_BOUNDS, type ProviderLimits } from "./rpc.js";
import { startShapeServer } from "./server.js";

export const shapeUsage = `tokenmarket devnet --shape ethereum|bnb|polygon|uniswap-v2 [options]   a mainnet-shaped synthetic JSON-RPC node

Options:
  --port N              listen port (default 8545); --host H (default 127.0.0.1)
  --pools N             pools at the start of the history (default per profile)
  --tokens N            tokens (default per profile)
  --seed N              the chain's seed: the same seed gives the same chain (default 1)
  --history-blocks N    trading blocks before the start (default per profile)
  --live true|false     the head advances at the profile's block time (default true)
  --genesis-time T      block 0's time (ISO 8601 or seconds; default: the head is dated now)
  --swaps-per-block N   overrides the profile's mean
  --limits alchemy|infura|none   eth_getLogs limits and messages (default alchemy)
  --rate-limit N        JSON-RPC calls per second, then HTTP 429 (default 0: none)
  --creations-per-block N        pools created per block in the creation era (default 500)
  --log-timestamps true|false    logs carry blockTimestamp, as geth ≥ 1.16 and reth answer (default true)
  --refuse M1,M2        JSON-RPC methods the node does not serve, e.g. eth_getBlockReceipts
  --full-transactions true|false blocks asked with transactions carry them (default true)
  --families F1,F2      only the DEXes of these families, e.g. v2,v3 (default: the profile's mix)`;

/** `tokenmarket devnet --shape …`: runs the synthetic node until SIGINT/SIGTERM. */
export async function runShapeDevnet(args: { argv: string[]; logger: Logger }): Promise<number> {
  const { values } = parseArgs({
    args: args.argv,
    allowPositionals: true,
    strict: false,
    options: {
      shape: { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      pools: { type: "string" },
      tokens: { type: "string" },
      seed: { type: "string" },
      "history-blocks": { type: "string" },
      live: { type: "string" },
      "genesis-time": { type: "string" },
      "swaps-per-block": { type: "string" },
      limits: { type: "string" },
      "rate-limit": { type: "string" },
      "creations-per-block": { type: "string" },
      "log-timestamps": { type: "string" },
      refuse: { type: "string" },
      "full-transactions": { type: "string" },
      families: { type: "string" },
    },
  });
  const profile = String(values.shape ?? "");
  if (!(profile in shapeProfiles))
    throw new ConfigError(
      "devnet",
      `--shape must be one of ethereum, bnb, polygon, uniswap-v2\n\n${shapeUsage}`,
    );
  const int = (name: string): number | undefined => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0)
      throw new ConfigError("devnet", `--${name} must be a non-negative integer, not "${raw}"`);
    return n;
  };
  const limits = String(values.limits ?? "alchemy");
  if (!["alchemy", "infura", "none"].includes(limits))
    throw new ConfigError("devnet", "--limits must be alchemy, infura or none");
  const flag = (name: string): boolean => {
    const raw = String(values[name] ?? "true");
    if (raw !== "true" && raw !== "false") throw new ConfigError("devnet", `--${name} must be true or false`);
    return raw === "true";
  };
  const live = flag("live");
  const refuse = values.refuse === undefined ? [] : String(values.refuse).split(",").filter(Boolean);
  let genesisTimeMs: number | undefined;
  if (values["genesis-time"] !== undefined) {
    const raw = String(values["genesis-time"]);
    genesisTimeMs = /^\d+$/.test(raw) ? Number(raw) * 1000 : Date.parse(raw);
    if (Number.isNaN(genesisTimeMs))
      throw new ConfigError("devnet", `--genesis-time: "${raw}" is neither ISO 8601 nor seconds`);
  }
  const families =
    values.families === undefined ? undefined : String(values.families).split(",").filter(Boolean);
  const known = new Set(shapeProfiles[profile as ShapeProfileName].dexes.map((d) => d.family.name));
  const unknown = families?.filter((f) => !known.has(f)) ?? [];
  if (unknown.length > 0)
    throw new ConfigError(
      "devnet",
      `--families: ${unknown.join(", ")} not in ${profile}'s mix (${[...known].join(", ")})`,
    );
  const started = performance.now();
  const server = await startShapeServer({
    profile: profile as ShapeProfileName,
    families,
    port: int("port") ?? 8545,
    host: values.host === undefined ? undefined : String(values.host),
    pools: int("pools"),
    tokens: int("tokens"),
    seed: int("seed"),
    historyBlocks: int("history-blocks"),
    live,
    genesisTimeMs,
    swapsPerBlock: int("swaps-per-block"),
    limits: limits as ProviderLimits,
    rateLimit: int("rate-limit"),
    creationsPerBlock: int("creations-per-block"),
    logTimestamps: flag("log-timestamps"),
    refuseMethods: refuse,
    fullTransactions: flag("full-transactions"),
    // An operator's node stays responsive: no call holds it past a second, no answer is huge.
    bounds: NODE_BOUNDS,
  });
  const u = server.chain.universe;
  args.logger.info(
    {
      url: server.url,
      profile,
      chain_id: u.profile.chainId,
      head: server.chain.head(),
      pools: u.poolsAt(server.chain.head()),
      tokens: u.tokenCount,
      creation_era_blocks: u.creationEraBlocks,
      startup_ms: Math.round(performance.now() - started),
    },
    "synthetic chain serving JSON-RPC",
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  await server.close();
  return 0;
}
