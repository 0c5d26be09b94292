import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Abi, Hex } from "viem";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";

/** The contracts of src/devnet/contracts that the deployment deploys. */
export const contractNames = ["DevnetToken", "Bytes32MetadataToken", "RevertingDecimalsToken"] as const;
export type ContractName = (typeof contractNames)[number];
export type CompiledContract = { abi: Abi; bytecode: Hex };
export type CompiledContracts = Record<ContractName, CompiledContract>;

const require = createRequire(import.meta.url);
const contractsDir = join(import.meta.dirname, "contracts");
/**
 * The compiled output shipped with the sources, so that a fresh clone starts without loading
 * solc (8 s on a 2-core machine); used only while its key matches the sources, solc version and
 * settings (compile.test.ts checks that it does). Regenerate with `npx tsx src/devnet/compile.ts`.
 */
export const shippedFile = join(contractsDir, "compiled.json");
/** Beside the dependencies: removed with them, never committed, shared by every checkout user. */
export const defaultCacheDir = resolve(import.meta.dirname, "../../node_modules/.cache/tokenmarket");

const settings = {
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
};

type SolcOutput = {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
};

/** The shipped file: the key of what it was compiled from, and the output. */
type ShippedContracts = { key: string; contracts: CompiledContracts };

/**
 * Compiles the devnet's Solidity sources with solc-js in-process (no compiler download), or
 * reads the result from the shipped file or the cache when neither the sources nor the solc
 * version changed. `shipped: false` ignores the shipped file (its test compiles for real).
 */
export function compileDevnetContracts(options: {
  logger: Logger;
  cacheDir?: string;
  shipped?: boolean;
}): CompiledContracts {
  const { logger } = options;
  const key = sourcesKey();
  if (options.shipped !== false) {
    try {
      const shipped = JSON.parse(readFileSync(shippedFile, "utf8")) as ShippedContracts;
      if (shipped.key === key) return shipped.contracts;
    } catch {
      // Not shipped (or unreadable): the cache or solc below.
    }
  }
  const cacheDir = options.cacheDir ?? defaultCacheDir;
  const cacheFile = join(cacheDir, `devnet-contracts-${key}.json`);
  try {
    return JSON.parse(readFileSync(cacheFile, "utf8")) as CompiledContracts;
  } catch {
    // Not cached yet (or unreadable): compile below.
  }

  const startedAt = performance.now();
  const sources = readSources();
  const solcVersion = (require("solc/package.json") as { version: string }).version;
  // Loaded only on a cache miss: solc-js is an 8 MB emscripten module that takes a second to load.
  const solc = require("solc") as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(JSON.stringify({ language: "Solidity", sources, settings })),
  ) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new LaunchError(
      `devnet contracts do not compile: ${errors.map((e) => e.formattedMessage).join("\n")}`,
    );
  }
  const compiled = {} as CompiledContracts;
  for (const name of contractNames) {
    const contract = output.contracts?.[`${name}.sol`]?.[name];
    if (contract === undefined)
      throw new LaunchError(`devnet contract ${name} is missing from the solc output`);
    compiled[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  }
  mkdirSync(cacheDir, { recursive: true });
  // Written aside and renamed: parallel test files compiling at once never read half a file.
  const partial = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(compiled));
  renameSync(partial, cacheFile);
  // Outputs of earlier sources are never read again.
  for (const file of readdirSync(cacheDir)) {
    if (/^devnet-contracts-[0-9a-f]{16}\.json$/.test(file) && join(cacheDir, file) !== cacheFile) {
      rmSync(join(cacheDir, file), { force: true });
    }
  }
  logger.info(
    { solc_version: solcVersion, elapsed_ms: Math.round(performance.now() - startedAt) },
    "devnet contracts compiled",
  );
  return compiled;
}

function readSources(): Record<string, { content: string }> {
  return Object.fromEntries(
    readdirSync(contractsDir)
      .filter((file) => file.endsWith(".sol"))
      .sort()
      .map((file) => [file, { content: readFileSync(join(contractsDir, file), "utf8") }]),
  );
}

/** What a compiled output depends on: the sources, the solc version and the settings. */
export function sourcesKey(): string {
  const solcVersion = (require("solc/package.json") as { version: string }).version;
  return createHash("sha256")
    .update(JSON.stringify({ solcVersion, settings, sources: readSources() }))
    .digest("hex")
    .slice(0, 16);
}

/** Compiles with solc and writes the shipped file. */
export function writeShippedContracts(logger: Logger): void {
  const contracts = compileDevnetContracts({ logger, shipped: false });
  const shipped: ShippedContracts = { key: sourcesKey(), contracts };
  writeFileSync(shippedFile, `${JSON.stringify(shipped)}\n`);
}

// Run as a script: writes the shipped file. (No top-level await: see bin/cli-bundle.js.)
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void import("../internal/logger.js").then(({ createLogger }) => writeShippedContracts(createLogger()));
}
