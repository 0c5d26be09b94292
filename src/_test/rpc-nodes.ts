import { createServer as createHttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import type { Hex } from "viem";
import type { DevnetRpc } from "../devnet/rpc.js";
import { MULTICALL3 } from "../rpc/client.js";

/** A node that hangs: it accepts TCP connections and never answers a byte. */
export type SilentNode = { url: string; connections(): number; stop(): Promise<void> };

/**
 * Starts a "node" that accepts connections and reads requests but never answers: what a stuck
 * provider or a stopped process behind a live load balancer looks like to a client.
 */
export async function startSilentNode(): Promise<SilentNode> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("data", () => {}); // read and ignore: the request is never answered
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  const url = await listenLocal(server);
  return {
    url,
    connections: () => accepted,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Puts the real Multicall3 at its canonical address on a hardhat devnet, as on the main chains:
 * its published creation code (the copy viem ships for its own deployless calls) is run by an
 * eth_call, which returns the runtime code, and hardhat_setCode installs that.
 */
export async function installMulticall3(rpc: DevnetRpc): Promise<void> {
  // viem does not export the constant from its package entry; its module file is part of the package.
  const viemEntry = import.meta.resolve("viem");
  const { multicall3Bytecode } = (await import(new URL("./constants/contracts.js", viemEntry).href)) as {
    multicall3Bytecode: Hex;
  };
  const runtime = await rpc.request<Hex>("eth_call", [{ data: multicall3Bytecode }, "latest"]);
  if (!runtime || runtime === "0x") throw new Error("Multicall3's creation code returned no runtime code");
  await rpc.request("hardhat_setCode", [MULTICALL3, runtime]);
}

/** One JSON-RPC call as a scripted node received it. */
export type ScriptedCall = { method: string; params: unknown[] };

/** A node answering from a script: what it saw, HTTP request by HTTP request, is kept for tests. */
export type ScriptedNode = {
  url: string;
  /** The calls of each HTTP request, in arrival order; `batch` when it was a JSON-RPC batch. */
  requests(): { batch: boolean; calls: ScriptedCall[] }[];
  /** The most HTTP requests that were being answered at the same time. */
  maxInFlight(): number;
  stop(): Promise<void>;
};

/**
 * Starts a real HTTP JSON-RPC server whose answers come from `answer` (a result, or a thrown
 * `{ code, message }` as the call's JSON-RPC error): for answers a devnet cannot give, such as
 * ones too large for the client. Each answer is sent after `delayMs` (to let requests overlap).
 */
export async function startScriptedNode(
  answer: (call: ScriptedCall) => unknown,
  delayMs = 5,
): Promise<ScriptedNode> {
  const seen: { batch: boolean; calls: ScriptedCall[] }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const respond = (call: ScriptedCall & { id: unknown }) => {
    try {
      return { jsonrpc: "2.0", id: call.id, result: answer(call) };
    } catch (error) {
      const { code = -32000, message = String(error) } = error as { code?: number; message?: string };
      return { jsonrpc: "2.0", id: call.id, error: { code, message } };
    }
  };
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
      const calls = (Array.isArray(body) ? body : [body]) as (ScriptedCall & { id: unknown })[];
      seen.push({
        batch: Array.isArray(body),
        calls: calls.map((c) => ({ method: c.method, params: c.params })),
      });
      const answers = calls.map(respond);
      setTimeout(() => {
        inFlight--;
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
      }, delayMs);
    });
  });
  const url = await listenLocal(server);
  return {
    url,
    requests: () => seen,
    maxInFlight: () => maxInFlight,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Listens on a free port of 127.0.0.1; answers the server's URL. */
async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return `http://127.0.0.1:${address.port}/`;
}
