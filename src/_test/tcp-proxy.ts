import { createConnection, createServer, type Socket } from "node:net";

export type TcpProxy = {
  port: number;
  /**
   * A network cut: every connection through the proxy stops carrying bytes, both ways, without
   * being closed (no FIN, no RST), as when a cable is pulled or a firewall drops the packets.
   */
  cut(): void;
  close(): Promise<void>;
};

/** A TCP proxy on 127.0.0.1 to `target`, whose connections can be cut silently. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let cut = false;
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => sockets.delete(s));
    }
    const forward = (from: Socket, to: Socket) =>
      from.on("data", (chunk) => {
        if (!cut) to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    // After the cut, a close on one side never reaches the other either.
    client.on("end", () => cut || upstream.end());
    upstream.on("end", () => cut || client.end());
  });
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("the proxy has no port");
  return {
    port: address.port,
    cut: () => {
      cut = true;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
