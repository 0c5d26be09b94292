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

function fail(error) {
  const message = { type: "error", code: error?.code ?? "ERROR", message: String(error?.message ?? error) };
  if (process.connected) process.send(message, () => process.exit(1));
  else process.exit(1);
}

async function main() {
  const options = JSON.parse(process.env.TOKENMARKET_DEVNET_NODE ?? "{}");
  // Hardhat's own JsonRpcServer has no "error" listener (a taken port would crash the process
  // with a stack trace), so its handler is mounted on servers whose errors we report. The port
  // is taken first: a busy port fails in milliseconds instead of after loading Hardhat.
  let handler;
  const server = http.createServer((req, res) => {
    if (handler !== undefined) return handler.handleHttp(req, res);
    res.writeHead(503).end();
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
  handler = new JsonRpcHandler(provider);
  const wss = new WebSocketServer({ server });
  wss.on("connection", handler.handleWs);
  wss.on("error", () => {}); // errors of the shared listener are reported by the http server
  process.send({ type: "ready", port: server.address().port });
}

main().catch(fail);
