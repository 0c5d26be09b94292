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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}/`,
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
