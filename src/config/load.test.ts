import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { ConfigError } from "../internal/errors.js";
import { chainsWithoutRpc, loadConfig, parseConfig, projectRoot, requireRpcUrls } from "./load.js";

const example = path.join(projectRoot, "config", "mainnet.example.json");

async function writeConfig(value: unknown): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "tm-config-"));
  const file = path.join(dir, "config.json");
  writeFileSync(file, JSON.stringify(value));
  return file;
}

function errorKey(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.key;
  }
  assert.fail("expected the configuration to be refused");
}

/** The key the ConfigError names when the example configuration is loaded with `env`. */
const exampleErrorKey = (env: Record<string, string>) => errorKey(() => loadConfig({ file: example, env }));

describe("configuration", () => {
  it("parses the shipped mainnet example with chains 1, 56 and 137", () => {
    const config = loadConfig({ file: example, env: {} });
    assert.deepEqual(
      config.chains.map((c) => c.id),
      [1, 56, 137],
    );
    const bsc = config.chains.find((c) => c.id === 56);
    assert.equal(
      bsc?.dexes.find((d) => d.protocol === "v3")?.swapEvent,
      "pancake",
      "PancakeSwap V3 has the 9-field Swap",
    );
    assert.equal(
      config.chains[0]?.referenceTokens.wrappedNative,
      "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
      "addresses are lowercased",
    );
    assert.equal(config.coins.BNB?.chain, 56);
    // Every DEX family the registry knows, at the real factories and managers of each chain.
    assert.deepEqual(
      config.chains.map((c) => c.dexes.map((d) => d.protocol)),
      [
        ["v2", "v3", "v2", "v4"],
        ["v2", "v3", "infinity-cl", "infinity-bin", "v4", "algebra"],
        ["v2", "v3", "algebra", "v4"],
      ],
    );
    assert.deepEqual(
      config.chains.map((c) => c.dexes.find((d) => d.protocol === "v4")?.deployedBlock),
      [21688329, 45970610, 66980384],
      "the PoolManagers' deployment blocks, where the factory scan starts",
    );
  });

  it("parses the default devnet configuration", () => {
    const config = loadConfig({ env: {} });
    assert.equal(config.devnet.enabled, true);
    assert.ok(config.chains.some((c) => c.id === config.devnet.chainId && c.devnet));
  });

  it("names the key of a bad value", async () => {
    const fresh = () => JSON.parse(JSON.stringify(loadConfig({ file: example, env: {} })));
    const raw = fresh();
    raw.chains[1].dexes[0].factory = "0x1234";
    assert.equal(
      errorKey(() => parseConfig(raw)),
      "chains.1.dexes.0.factory",
    );
    const file = await writeConfig({ ...fresh(), api: { port: "eighty" } });
    assert.equal(
      errorKey(() => loadConfig({ file, env: {} })),
      "api.port",
    );
    assert.equal(
      errorKey(() => parseConfig({ ...fresh(), colour: "blue" })),
      "(root)",
    );
    // A logo host joins the page's Content-Security-Policy: an origin, nothing that could widen it.
    assert.deepEqual(fresh().web.logoHosts.slice(0, 1), ["https://assets.coingecko.com"]);
    for (const bad of [
      "*",
      "https://x.example; script-src *",
      "http://x.example",
      "https://x.example/logos",
    ]) {
      assert.equal(
        errorKey(() => parseConfig({ ...fresh(), web: { logoHosts: [bad] } })),
        "web.logoHosts.0",
        bad,
      );
    }
  });

  it("refuses a coin on an unconfigured chain and a duplicated chain id", () => {
    const raw = JSON.parse(JSON.stringify(loadConfig({ file: example, env: {} })));
    raw.coins.FOO = { chain: 10, token: raw.chains[0].referenceTokens.wrappedNative };
    assert.equal(
      errorKey(() => parseConfig(raw)),
      "coins.FOO.chain",
    );
    delete raw.coins.FOO;
    raw.chains.push({ ...raw.chains[0] });
    assert.equal(
      errorKey(() => parseConfig(raw)),
      "chains.3.id",
    );
  });

  it("applies environment overrides, and names the key when one is bad", () => {
    const config = loadConfig({
      file: example,
      env: {
        DATABASE_URL: "postgres://u:p@127.0.0.1:5432/x",
        TOKENMARKET_RPC_137: "https://a.invalid, https://b.invalid",
        TOKENMARKET__pricing__liquidityFloorUsd: "1234",
        TOKENMARKET_API_PORT: "9090",
      },
    });
    assert.equal(config.database.url, "postgres://u:p@127.0.0.1:5432/x");
    assert.deepEqual(config.chains.find((c) => c.id === 137)?.rpc, [
      "https://a.invalid",
      "https://b.invalid",
    ]);
    assert.equal(config.pricing.liquidityFloorUsd, 1234);
    assert.equal(config.api.port, 9090);
    assert.equal(
      exampleErrorKey({ TOKENMARKET__pricing__liquidityFloorUsd: "-5" }),
      "pricing.liquidityFloorUsd",
    );
    assert.equal(exampleErrorKey({ TOKENMARKET_RPC_1: "not a url" }), "chains.0.rpc.0");
  });

  it("TOKENMARKET_CHAINS runs only the listed chains, with their coins", () => {
    const config = loadConfig({ file: example, env: { TOKENMARKET_CHAINS: "137, 1" } });
    assert.deepEqual(
      config.chains.map((c) => c.id),
      [1, 137],
    );
    assert.ok(Object.values(config.coins).every((coin) => coin.chain === 1 || coin.chain === 137));
    assert.ok("MATIC" in config.coins && !("BNB" in config.coins));
    assert.equal(exampleErrorKey({ TOKENMARKET_CHAINS: "1,x" }), "TOKENMARKET_CHAINS");
    assert.equal(exampleErrorKey({ TOKENMARKET_CHAINS: "10" }), "TOKENMARKET_CHAINS");
  });

  it("names the RPC variables of chains that have only a placeholder URL", () => {
    const config = loadConfig({ file: example, env: { TOKENMARKET_RPC_56: "https://bsc.example" } });
    assert.deepEqual(
      chainsWithoutRpc(config).map((c) => c.id),
      [1, 137],
    );
    assert.throws(
      () => requireRpcUrls(config),
      /no JSON-RPC URL for chain 1 \(Ethereum\), 137 \(Polygon\): set TOKENMARKET_RPC_1, TOKENMARKET_RPC_137 .* TOKENMARKET_CHAINS=56/,
    );
    assert.doesNotThrow(() =>
      requireRpcUrls(
        loadConfig({
          file: example,
          env: { TOKENMARKET_RPC_56: "https://bsc.example", TOKENMARKET_CHAINS: "56" },
        }),
      ),
    );
    assert.deepEqual(
      chainsWithoutRpc(loadConfig({ env: {} })),
      [],
      "the devnet chain gets its URL from the devnet",
    );
  });

  it("keeps every row by default and refuses a retention shorter than the statistics need", () => {
    const config = loadConfig({ env: {} });
    assert.deepEqual(config.storage.retention, { swapsDays: null, candles1mDays: null, series5mDays: null });
    const fresh = () => JSON.parse(JSON.stringify(loadConfig({ env: {} })));
    const raw = fresh();
    raw.storage.retention = { swapsDays: 90, candles1mDays: 0, series5mDays: 30 };
    assert.deepEqual(parseConfig(raw).storage.retention, {
      swapsDays: 90,
      candles1mDays: 0,
      series5mDays: 30,
    });
    for (const bad of [1, -1, 2.5, "30"]) {
      const value = fresh();
      value.storage.retention.candles1mDays = bad;
      assert.equal(
        errorKey(() => parseConfig(value)),
        "storage.retention.candles1mDays",
        `${bad} is refused`,
      );
    }
    const env = loadConfig({ env: { TOKENMARKET__storage__retention__swapsDays: "90" } });
    assert.equal(env.storage.retention.swapsDays, 90, "set from the environment");
  });

  it("says which file it cannot read", () => {
    assert.equal(
      errorKey(() => loadConfig({ file: "/nonexistent/config.json", env: {} })),
      "file",
    );
  });
});
