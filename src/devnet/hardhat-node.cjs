// The child process of node.ts: runs a Hardhat 2 (EDR) JSON-RPC node on 127.0.0.1.
//
// Protocol with the parent over the IPC channel:
//   child → parent  { type: "ready", port }              listening (port resolved when 0 was asked)
//   child → parent  { type: "error", code, message }     could not start; the child then exits
// The child exits by itself when the IPC channel closes: the parent died (even by SIGKILL) or
// stopped it, so a devnet node never outlives the process that started it.
const http = require("node:http");
const path = require("node:path");

process.on("disconnect", () => process.exit(0));
// A Ctrl-C in the terminal reaches the whole process group, this node included; the parent
// stops it (SIGTERM) after the indexer has stopped reading it, or by exiting (disconnect).
process.on("SIGINT", () => {});

function fail(error) {
  const message = { type: "error", code: error?.code ?? "ERROR", message: String(error?.message ?? error) };
  if (process.connected) process.send(message, () => process.exit(1));
  else process.exit(1);
}

// Every EDR response holds the execution trace of what it ran (every EVM step: a Uniswap swap
// makes megabytes) until its small JS wrapper is garbage-collected. V8 does not see that native
// memory, so it rarely collects, and the node would grow by gigabytes over a simulated week. A
// minor collection after the requests of each event-loop turn frees the traces at once (the
// launcher passes --expose-gc); it costs well under a millisecond.
let collectionPending = false;
function collectGarbageSoon() {
  if (collectionPending || typeof global.gc !== "function") return;
  collectionPending = true;
  setImmediate(() => {
    collectionPending = false;
    global.gc({ type: "minor" });
  });
}

/**
 * The provider with its requests run one at a time, in arrival order. Hardhat's handler runs the
 * requests of a JSON-RPC batch concurrently, and EDR gives each its own blocking thread that
 * then waits for EDR's single lock: a batch of a hundred calls made a hundred threads (over 500
 * in a simulated week), each keeping its own allocator heap, and gigabytes of memory. In order,
 * there is one thread at a time, and a batch is executed in its order (sends, then evm_mine).
 */
function serialize(provider) {
  let tail = Promise.resolve();
  return {
    request(args) {
      const run = () => provider.request(args);
      const result = tail.then(run, run);
      tail = result.then(
        () => {},
        () => {},
      );
      return result;
    },
    // The websocket handler subscribes to the provider's notifications.
    addListener: (event, listener) => provider.addListener(event, listener),
    removeListener: (event, listener) => provider.removeListener(event, listener),
    on: (event, listener) => provider.on(event, listener),
  };
}

async function main() {
  const options = JSON.parse(process.env.TOKENMARKET_DEVNET_NODE ?? "{}");
  // Hardhat's own JsonRpcServer has no "error" listener (a taken port would crash the process
  // with a stack trace), so its handler is mounted on servers whose errors we report. The port
  // is taken first: a busy port fails in milliseconds instead of after loading Hardhat.
  let handler;
  const server = http.createServer((req, res) => {
    if (handler === undefined) return res.writeHead(503).end();
    res.on("finish", collectGarbageSoon);
    return handler.handleHttp(req, res);
  });
  server.keepAliveTimeout = 60_000;
  server.on("error", fail);
  await new Promise((resolve) => server.listen(options.port, "127.0.0.1", resolve));

  // Hardhat reads its global parameters from HARDHAT_* variables when loaded as a library.
  process.env.HARDHAT_CONFIG = path.join(__dirname, "hardhat.config.cjs");
  const hre = require("hardhat");
  const { JsonRpcHandler } = require("hardhat/internal/hardhat-network/jsonrpc/handler");
  const { WebSocketServer } = require("ws");
  const provider = hre.network.provider;
  // Creates the EDR provider now, so that the first client request is not the slow one and a bad
  // configuration fails the start instead of a later request.
  await provider.request({ method: "eth_chainId" });
  handler = new JsonRpcHandler(serialize(provider));
  const wss = new WebSocketServer({ server });
  wss.on("connection", (ws) => {
    ws.on("message", collectGarbageSoon);
    return handler.handleWs(ws);
  });
  wss.on("error", () => {}); // errors of the shared listener are reported by the http server
  process.send({ type: "ready", port: server.address().port });
}

main().catch(fail);
