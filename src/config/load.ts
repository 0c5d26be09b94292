import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../internal/errors.js";
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
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("TOKENMARKET__") || value === undefined) continue;
    const keys = name.slice("TOKENMARKET__".length).split("__").filter(Boolean);
    if (keys.length > 0) set(keys, parseValue(value));
  }
  return config;
}

function parseValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
