import { parseArgs } from "node:util";
import { BaseError, ConfigError } from "../internal/errors.js";
import { loadEnvFile } from "./env-file.js";
import { HEAP_LIMITED_COMMANDS, runWithHeapLimit, wantedHeapMb } from "./heap.js";

// The rest is imported when a command runs: a parent that only starts the command again with a
// heap limit (heap.ts) stays small.

const usage = `tokenmarket — market data for tokens on EVM chains

Usage:
  tokenmarket start [--config FILE]         start the service (demo: Postgres, devnet, simulator, indexer, API)
  tokenmarket index [--config FILE]         only the indexer and pricing (one writer per chain; health on indexer.port)
  tokenmarket serve [--config FILE]         only the API and the explorer page (any number, over one database)
  tokenmarket keys create --name NAME       create an API key and print it once
  tokenmarket keys list                     list API keys (never the keys themselves)
  tokenmarket keys revoke ID|NAME|PREFIX    revoke API keys
  tokenmarket migrate                       apply database migrations
  tokenmarket replay DIR… [--balances R0,R1] import recorded logs (manifest.json + logs.raw.csv) through indexing and pricing;
                                            --balances: the pool's raw token balances before the first log (or POOL=R0,R1)
  tokenmarket devnet --shape ethereum|bnb|polygon|uniswap-v2 [--port N] [--pools N] [--tokens N] [--seed N] [--history-blocks N] [--live false] …
                                            a mainnet-shaped synthetic JSON-RPC node for tests and benchmarks (docs/SHAPE.md)
  tokenmarket help                          this text

Options:
  --config FILE   configuration file (default: TOKENMARKET_CONFIG or config/devnet.json)

Environment overrides are listed in .env.example; a .env file in the working directory is read
at start (variables set in the real environment win).`;

async function main(argv: string[]): Promise<number> {
  // Before anything reads the environment (configuration, LOG_LEVEL); real variables win.
  loadEnvFile();
  const { createLogger } = await import("../internal/logger.js");
  // Internal: the devnet's history written by a process of its own (src/devnet/history-child.ts).
  if (argv[0] === "devnet-history") {
    const { runHistoryChild } = await import("../devnet/history-child.js");
    return runHistoryChild();
  }
  // The synthetic node has its own options (and needs no configuration file).
  if (argv[0] === "devnet") {
    const { runShapeDevnet } = await import("../shape/cli.js");
    return runShapeDevnet({ argv: argv.slice(1), logger: createLogger() });
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: "string" },
      name: { type: "string" },
      balances: { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === "help") {
    console.log(usage);
    return 0;
  }
  // The processes that hold a pricing market run with a V8 heap limit (heap.ts, docs/DEPLOY.md).
  if (HEAP_LIMITED_COMMANDS.has(command)) {
    const heapMb = wantedHeapMb(process.env, process.execArgv);
    if (heapMb !== null) return runWithHeapLimit(heapMb);
  }
  const { loadConfig } = await import("../config/load.js");
  const config = loadConfig(values.config === undefined ? {} : { file: values.config });
  const logger = createLogger();
  switch (command) {
    case "start":
      return (await import("./start.js")).runStart({ config, logger });
    case "index":
    case "serve":
      return (await import("./start.js")).runStart({ config, logger, role: command });
    case "keys":
      return (await import("./keys.js")).runKeys({ config, logger, args: rest, name: values.name });
    case "replay":
      return (await import("./replay.js")).runReplay({
        config,
        logger,
        dirs: rest,
        balances: values.balances,
        configFile: values.config ?? process.env.TOKENMARKET_CONFIG,
      });
    case "migrate":
      return (await import("./keys.js")).runKeys({ config, logger, args: ["migrate"] });
    default:
      console.error(`unknown command "${command}"\n\n${usage}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    // A bad configuration or a launch failure is the user's to fix: one clear line, no stack.
    if (error instanceof ConfigError || (error instanceof BaseError && !error.retryable)) {
      console.error(`tokenmarket: ${error.message}`);
    } else if (String((error as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS")) {
      console.error(`tokenmarket: ${(error as Error).message}\n\n${usage}`);
    } else {
      console.error(error);
    }
    process.exit(1);
  },
);
