import * as assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pino } from "pino";
import { createSilentLogger } from "../internal/logger.js";
import { compileDevnetContracts, contractNames, shippedFile, sourcesKey } from "./compile.js";

describe("compileDevnetContracts", () => {
  const cacheDir = mkdtempSync(join(tmpdir(), "tokenmarket-solc-"));
  after(() => rmSync(cacheDir, { recursive: true, force: true }));

  it("compiles the Solidity sources in-process, then serves them from the cache", () => {
    // Whether solc ran is read from the log line only a compilation writes, not from timing.
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
    const compilations = () => lines.filter((l) => l.includes('"devnet contracts compiled"')).length;
    const cold = compileDevnetContracts({ logger, cacheDir, shipped: false });
    assert.equal(compilations(), 1, "the first call compiles");
    for (const name of contractNames) {
      assert.match(cold[name].bytecode, /^0x[0-9a-f]{200,}$/, `${name} has creation code`);
      assert.ok(cold[name].abi.length > 0, `${name} has an ABI`);
    }
    assert.equal(readdirSync(cacheDir).filter((f) => f.endsWith(".json")).length, 1, "one cache file");

    const cached = compileDevnetContracts({ logger, cacheDir, shipped: false });
    assert.equal(compilations(), 1, "the second call compiles nothing");
    assert.deepEqual(cached, cold, "the cache gives the same output");
  });

  it("ships the output of the current sources, so that a start loads no compiler", () => {
    const shipped = JSON.parse(readFileSync(shippedFile, "utf8")) as { key: string; contracts: unknown };
    assert.equal(
      shipped.key,
      sourcesKey(),
      "contracts/compiled.json is stale: regenerate it with `npx tsx src/devnet/compile.ts`",
    );
    const compiled = compileDevnetContracts({ logger: createSilentLogger(), cacheDir, shipped: false });
    assert.deepEqual(shipped.contracts, compiled, "the shipped output is solc's for these sources");
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
    const empty = mkdtempSync(join(tmpdir(), "tokenmarket-solc-empty-"));
    try {
      assert.deepEqual(compileDevnetContracts({ logger, cacheDir: empty }), compiled);
      assert.equal(lines.length, 0, "no compilation with an empty cache");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("gives the tokens their odd metadata: bytes32 name/symbol, a reverting decimals()", () => {
    const compiled = compileDevnetContracts({ logger: createSilentLogger(), cacheDir });
    const fn = (name: (typeof contractNames)[number], fnName: string) =>
      compiled[name].abi.find((item) => item.type === "function" && item.name === fnName);
    const output = (item: ReturnType<typeof fn>) =>
      item && "outputs" in item ? item.outputs[0]?.type : undefined;
    assert.equal(output(fn("Bytes32MetadataToken", "symbol")), "bytes32");
    assert.equal(output(fn("Bytes32MetadataToken", "name")), "bytes32");
    assert.equal(output(fn("DevnetToken", "symbol")), "string");
    assert.equal(output(fn("RevertingDecimalsToken", "decimals")), "uint8", "declared, but it reverts");
  });
});
