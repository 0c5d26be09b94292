import path from "node:path";
import { encodeFunctionData, parseAbi } from "viem";
import { loadConfig, projectRoot } from "../config/load.js";
import type { ChainConfig, Config, ReferenceTokens } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import type { Fixture } from "../replay/fixture.js";
import { readFixture } from "../replay/fixture.js";
import { ReplayError, replayFixtures } from "../replay/replay.js";
import { createRpcClient } from "../rpc/client.js";
import { openDatabase } from "../runtime/database.js";

/** The sample configuration of real chains: its reference tokens price replays of chains 1, 56 and 137. */
const realChainsConfig = path.join(projectRoot, "config", "mainnet.example.json");

const erc20 = parseAbi(["function balanceOf(address) view returns (uint256)"]);
/** How long the node may take to tell a pool's starting balances. */
const BALANCES_TIMEOUT_MS = 20_000;

/**
 * `--balances` values: `RESERVE0,RESERVE1` (the only recording's pool) or `POOL=RESERVE0,RESERVE1`,
 * raw integers. Returns the balances by pool address (lowercase) or by "" for the only pool.
 */
export function parseBalances(
  values: readonly string[],
): Map<string, { reserve0: bigint; reserve1: bigint }> {
  const out = new Map<string, { reserve0: bigint; reserve1: bigint }>();
  for (const value of values) {
    const match = /^(?:(0x[0-9a-fA-F]{40})=)?(\d{1,78}),(\d{1,78})$/.exec(value.trim());
    if (!match) {
      throw new ReplayError(
        `replay: --balances ${value}: expected RESERVE0,RESERVE1 or POOL=RESERVE0,RESERVE1 (the pool's raw token balances just before its first recorded log)`,
      );
    }
    out.set((match[1] ?? "").toLowerCase(), {
      reserve0: BigInt(match[2] as string),
      reserve1: BigInt(match[3] as string),
    });
  }
  return out;
}

/** A recording's pool balances just before its first log, read from the chain's node (an archive node for old blocks). */
async function balancesFromChain(
  chain: ChainConfig,
  fixture: Fixture,
  logger: Logger,
): Promise<{ reserve0: bigint; reserve1: bigint }> {
  const m = fixture.manifest;
  const block = (fixture.logs[0]?.blockNumber ?? 1) - 1;
  const rpc = createRpcClient({
    chain,
    logger,
    options: { attempts: 2, timeoutMs: BALANCES_TIMEOUT_MS / 2 },
    signal: AbortSignal.timeout(BALANCES_TIMEOUT_MS),
  });
  const data = encodeFunctionData({ abi: erc20, functionName: "balanceOf", args: [m.pool] });
  const [r0, r1] = await rpc.calls(
    [
      { to: m.token0.address, data },
      { to: m.token1.address, data },
    ],
    block,
  );
  if (!r0 || !r1 || r0 === "0x" || r1 === "0x")
    throw new Error(
      `balanceOf(${m.pool}) at block ${block} gave no answer (a node without that block's state?)`,
    );
  return { reserve0: BigInt(r0), reserve1: BigInt(r1) };
}

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
  /** `--balances` values (parseBalances). */
  balances?: readonly string[] | undefined;
  /** The configuration file, as the user named it (for the commands printed at the end). */
  configFile?: string | undefined;
}): Promise<number> {
  const { config, logger } = options;
  if (options.dirs.length === 0) {
    console.error(
      "usage: tokenmarket replay DIR… [--balances RESERVE0,RESERVE1 | --balances POOL=RESERVE0,RESERVE1 …] (each DIR holds manifest.json and logs.raw.csv)",
    );
    return 2;
  }
  // Every file is read and checked before the database is touched: a malformed file stores nothing.
  const fixtures = options.dirs.map((dir) => readFixture(path.resolve(dir)));
  const given = parseBalances(options.balances ?? []);
  if (given.has("") && fixtures.length > 1) {
    throw new ReplayError(
      "replay: --balances RESERVE0,RESERVE1 fits one recording; name the pool: --balances POOL=RESERVE0,RESERVE1",
    );
  }
  const references = new Map<number, ReferenceTokens>(config.chains.map((c) => [c.id, c.referenceTokens]));
  const chainIds = [...new Set(fixtures.map((f) => f.manifest.chainId))];
  const unconfigured = chainIds.filter((id) => !references.has(id));
  if (unconfigured.length > 0) {
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
  // Starting balances: given, in the manifest, or read from the configured chain's node.
  const withoutBalances: Fixture[] = [];
  for (const fixture of fixtures) {
    const m = fixture.manifest;
    const balances = given.get(m.pool) ?? given.get("");
    if (balances) {
      m.balances = balances;
      continue;
    }
    if (m.balances) continue;
    const chain = config.chains.find((c) => c.id === m.chainId && c.rpc.length > 0);
    if (chain) {
      try {
        m.balances = await balancesFromChain(chain, fixture, logger.child({ chain_id: chain.id }));
        logger.info({ pool: m.pool, ...m.balances }, "replay: starting balances read from the chain");
        continue;
      } catch (error) {
        logger.warn(
          { err: error, pool: m.pool },
          "replay: the starting balances could not be read from the chain",
        );
      }
    }
    withoutBalances.push(fixture);
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
    console.log(
      howToSee({ config, configFile: options.configFile, fixtures, unconfigured, withoutBalances }),
    );
    return 0;
  } finally {
    await database.close();
  }
}

/** What the user runs to see the replayed data over HTTP, and why some of it may be missing. */
function howToSee(args: {
  config: Config;
  configFile: string | undefined;
  fixtures: readonly Fixture[];
  unconfigured: readonly number[];
  withoutBalances: readonly Fixture[];
}): string {
  const { config, fixtures, unconfigured } = args;
  const lines: string[] = [""];
  let env = "";
  if (unconfigured.length > 0) {
    const sample = path.relative(process.cwd(), realChainsConfig) || realChainsConfig;
    lines.push(
      `chain ${unconfigured.join(", ")} is not in this configuration (${args.configFile ?? "config/devnet.json"}): a process started with it does not serve the data (400 "network … is not configured").`,
      `Serve it with a configuration that has the chain, such as ${sample}:`,
    );
    env = `TOKENMARKET_CONFIG=${sample} `;
  } else {
    lines.push("To see the data (with the configuration and environment of this command):");
  }
  const host = config.api.host === "0.0.0.0" ? "127.0.0.1" : config.api.host;
  const base = `http://${host}:${config.api.port}`;
  const m = fixtures[0]?.manifest as Fixture["manifest"];
  const logs = fixtures[0]?.logs ?? [];
  const from = new Date((logs[0]?.blockTimestamp ?? 0) * 1000).toISOString().replace(".000", "");
  const to = new Date(((logs.at(-1)?.blockTimestamp ?? 0) + 1) * 1000).toISOString().replace(".000", "");
  lines.push(
    `  ${env}npx tokenmarket serve          # the API on ${base} (beside a running demo: add TOKENMARKET_API_PORT=<another port>)`,
    `  KEY=$(${env}npx tokenmarket keys create --name replay | grep -o 'tm_[A-Za-z0-9_-]*')`,
    `  curl -H "x-api-key: $KEY" "${base}/api/v1/candles?pair_id=${m.pool}:${m.chainId}&asset_id=${m.token1.address}:${m.chainId}&interval=1h&from=${from}&to=${to}"`,
    "No indexer follows a replayed chain, so /readyz answers 503 for it; the data endpoints answer all the same.",
  );
  if (args.withoutBalances.length > 0) {
    lines.push(
      `Without the pool's starting balances (${args.withoutBalances.map((f) => f.manifest.pool).join(", ")}) its liquidity is unknown, so its trades give no USD price to a token that is not a stablecoin (usd_price null).`,
      "Give them with --balances RESERVE0,RESERVE1 (raw token balances just before the first recorded log), or configure an RPC URL of the chain whose node has that block's state.",
    );
  }
  return lines.join("\n");
}
