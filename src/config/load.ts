import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, LaunchError } from "../internal/errors.js";
import { type Config, configSchema } from "./schema.js";

/** The project's root folder (where package.json is). */
export const projectRoot = path.resolve(import.meta.dirname, "../..");

/** The configuration used when neither --config nor TOKENMARKET_CONFIG names one: the devnet demo. */
export const defaultConfigPath = path.join(projectRoot, "config", "devnet.json");

type Env = Record<string, string | undefined>;

/**
 * Reads the configuration file, applies environment overrides and validates it once.
 * A bad value throws a ConfigError naming its key (for example `chains.0.rpc.0`).
 *
 * Environment overrides, applied in this order:
 * - `DATABASE_URL` → database.url
 * - `DATABASE_REPLICA_URLS` (comma-separated) → database.replicas, each with weight 1
 * - `TOKENMARKET_API_PORT` → api.port, `TOKENMARKET_API_HOST` → api.host
 * - `TOKENMARKET_RPC_<chainId>` (comma-separated) → that chain's rpc
 * - `TOKENMARKET_CHAINS` (comma-separated chain ids) → only these chains run; the others, and
 *   the coins priced on them, are left out (the devnet too when its chain is left out)
 * - `TOKENMARKET__<path>` with `__` between keys, e.g. `TOKENMARKET__pricing__liquidityFloorUsd=5000`;
 *   the value is parsed as JSON when it can be, else taken as a string.
 */
export function loadConfig(options: { file?: string; env?: Env } = {}): Config {
  const env = options.env ?? process.env;
  const file = options.file ?? env.TOKENMARKET_CONFIG ?? defaultConfigPath;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError("file", `cannot read ${file}: ${(error as Error).message}`);
  }
  return parseConfig(applyEnvOverrides(raw, env));
}

/** Validates a configuration object; a bad value throws a ConfigError naming its key. */
export function parseConfig(raw: unknown): Config {
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = issue?.path.length ? issue.path.join(".") : "(root)";
    let message = issue?.message ?? "invalid";
    if (issue?.code === "unrecognized_keys") message = `unknown key(s) ${issue.keys.join(", ")}`;
    throw new ConfigError(key, message);
  }
  const config = result.data;
  const ids = new Set<number>();
  config.chains.forEach((chain, i) => {
    if (ids.has(chain.id)) throw new ConfigError(`chains.${i}.id`, `chain id ${chain.id} appears twice`);
    ids.add(chain.id);
  });
  if (config.devnet.enabled && !ids.has(config.devnet.chainId)) {
    throw new ConfigError(
      "devnet.chainId",
      `chain ${config.devnet.chainId} is not among the configured chains`,
    );
  }
  for (const [symbol, coin] of Object.entries(config.coins)) {
    if (!ids.has(coin.chain))
      throw new ConfigError(`coins.${symbol}.chain`, `chain ${coin.chain} is not configured`);
  }
  return config;
}

function applyEnvOverrides(raw: unknown, env: Env): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const config = structuredClone(raw) as Record<string, unknown>;
  const set = (keys: string[], value: unknown) => {
    let node: Record<string, unknown> = config;
    for (const key of keys.slice(0, -1)) {
      const next = node[key];
      if (typeof next !== "object" || next === null) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[keys[keys.length - 1] as string] = value;
  };
  if (env.DATABASE_URL) set(["database", "url"], env.DATABASE_URL);
  if (env.DATABASE_REPLICA_URLS) {
    const urls = env.DATABASE_REPLICA_URLS.split(",")
      .map((u) => u.trim())
      .filter(Boolean);
    set(
      ["database", "replicas"],
      urls.map((url) => ({ url })),
    );
  }
  if (env.TOKENMARKET_API_PORT) set(["api", "port"], parseValue(env.TOKENMARKET_API_PORT));
  if (env.TOKENMARKET_API_HOST) set(["api", "host"], env.TOKENMARKET_API_HOST);
  const chains = Array.isArray(config.chains) ? (config.chains as Record<string, unknown>[]) : [];
  for (const chain of chains) {
    const urls = env[`TOKENMARKET_RPC_${String(chain.id)}`];
    if (urls) chain.rpc = urls.split(",").map((u) => u.trim());
  }
  if (env.TOKENMARKET_CHAINS) keepOnlyChains(config, env.TOKENMARKET_CHAINS);
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("TOKENMARKET__") || value === undefined) continue;
    const keys = name.slice("TOKENMARKET__".length).split("__").filter(Boolean);
    if (keys.length > 0) set(keys, parseValue(value));
  }
  return config;
}

/** TOKENMARKET_CHAINS=1,137: drops the other chains, their coins and, when its chain goes, the devnet. */
function keepOnlyChains(config: Record<string, unknown>, list: string): void {
  const ids = list.split(",").map((s) => s.trim());
  const bad = ids.find((id) => !/^\d+$/.test(id));
  if (bad !== undefined)
    throw new ConfigError(
      "TOKENMARKET_CHAINS",
      `"${bad}" is not a chain id (a comma-separated list of chain ids)`,
    );
  const keep = new Set(ids.map(Number));
  const chains = Array.isArray(config.chains) ? (config.chains as { id?: unknown }[]) : [];
  const unknown = [...keep].filter((id) => !chains.some((c) => c.id === id));
  if (unknown.length > 0)
    throw new ConfigError(
      "TOKENMARKET_CHAINS",
      `chain ${unknown.join(", ")} is not in the configuration file`,
    );
  config.chains = chains.filter((c) => keep.has(c.id as number));
  if (typeof config.coins === "object" && config.coins !== null) {
    config.coins = Object.fromEntries(
      Object.entries(config.coins as Record<string, { chain?: unknown }>).filter(([, coin]) =>
        keep.has(coin.chain as number),
      ),
    );
  }
  const devnet = (config.devnet ?? {}) as { enabled?: unknown; chainId?: unknown };
  if (!keep.has((devnet.chainId as number | undefined) ?? 31337))
    config.devnet = { ...devnet, enabled: false };
}

/**
 * Chains that cannot be indexed for want of a JSON-RPC URL: none configured, or only placeholders
 * (a host under the reserved `.invalid` domain, as in config/mainnet.example.json). A devnet chain
 * gets its URL from the devnet, so it never counts.
 */
export function chainsWithoutRpc(config: Config): Config["chains"] {
  return config.chains.filter(
    (chain) =>
      !(config.devnet.enabled && chain.id === config.devnet.chainId) &&
      chain.rpc.every((url) => {
        try {
          return new URL(url).hostname.endsWith(".invalid");
        } catch {
          return true;
        }
      }),
  );
}

/** Stops start-up with one message naming the environment variables to set, when a chain has no RPC URL. */
export function requireRpcUrls(config: Config): void {
  const missing = chainsWithoutRpc(config);
  if (missing.length === 0) return;
  const names = missing.map((c) => `TOKENMARKET_RPC_${c.id}`);
  const chains = missing.map((c) => `${c.id} (${c.name})`).join(", ");
  const others = config.chains.filter((c) => !missing.includes(c)).map((c) => c.id);
  throw new LaunchError(
    `no JSON-RPC URL for chain ${chains}: set ${names.join(", ")} to your node's URL (comma-separated for several)${
      others.length > 0
        ? `, or run only the chains that have one with TOKENMARKET_CHAINS=${others.join(",")}`
        : ", or choose the chains to run with TOKENMARKET_CHAINS=<ids>"
    }`,
  );
}

function parseValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
