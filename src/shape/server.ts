import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { createShapeChain, type ShapeChain } from "./chain.js";
import { type ShapeProfileName, shapeProfiles, withFamilies } from "./profiles.js";
import { createShapeRpc, type ProviderLimits, RpcError, type ShapeRpcOptions } from "./rpc.js";
import { createUniverse } from "./universe.js";

export type ShapeServerOptions = {
  profile: ShapeProfileName;
  /** Only the DEXes of these families (names as `pools.protocol`); default: all of the profile's. */
  families?: readonly string[];
  seed?: number;
  pools?: number;
  tokens?: number;
  /** Trading blocks at start, after the creation era. */
  historyBlocks?: number;
  live?: boolean;
  genesisTimeMs?: number;
  creationsPerBlock?: number;
  /** Overrides the profile's mean swaps per block. */
  swapsPerBlock?: number;
  segmentBlocks?: number;
  cacheBlocks?: number;
  limits?: ProviderLimits;
  /** Logs carry `blockTimestamp` as recent nodes give it (default true; see ShapeRpcOptions). */
  logTimestamps?: boolean;
  /** JSON-RPC methods the node does not serve (answered with -32601, as geth does). */
  refuseMethods?: readonly string[];
  /** False: blocks come with transaction hashes only, even when full transactions are asked for. */
  fullTransactions?: boolean;
  /** JSON-RPC calls per second before HTTP 429 (0: no limit). */
  rateLimit?: number;
  /** Answer size and per-call time bounds (ShapeRpcOptions.bounds); none by default. */
  bounds?: ShapeRpcOptions["bounds"];
  host?: string;
  port?: number;
};

export type ShapeServer = {
  url: string;
  /**
   * The same node over WebSocket (ws://, same port): JSON-RPC calls, and `eth_subscribe`
   * `["newHeads"]`, whose notifications carry each new head's header as it appears.
   */
  wsUrl: string;
  port: number;
  chain: ShapeChain;
  /**
   * Holds every request received from now on unanswered until `resume()` (a node that stalls,
   * as a SIGSTOPped devnet does): lets a test look at the client while it is stuck at a known point.
   */
  pause(): void;
  /**
   * Pauses (as `pause()`) when a request holding a call that `match`es arrives, that request
   * included, and resolves then: a client stopped at a known point of its work (a batch in flight).
   */
  pauseAt(match: (method: string, params: unknown[]) => boolean): Promise<void>;
  resume(): void;
  close(): Promise<void>;
};

const RATE_LIMITED =
  "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput";

/** Starts the synthetic node: HTTP JSON-RPC (single calls and batches) on host:port. */
export async function startShapeServer(options: ShapeServerOptions): Promise<ShapeServer> {
  const chosen = shapeProfiles[options.profile];
  const base = options.families ? withFamilies(chosen, options.families) : chosen;
  const profile =
    options.swapsPerBlock === undefined ? base : { ...base, swapsPerBlock: options.swapsPerBlock };
  const universe = createUniverse(profile, {
    seed: (options.seed ?? 1) >>> 0,
    pools: options.pools ?? profile.defaults.pools,
    tokens: options.tokens ?? profile.defaults.tokens,
    creationsPerBlock: options.creationsPerBlock ?? 500,
  });
  const chain = createShapeChain({
    universe,
    historyBlocks: options.historyBlocks ?? profile.defaults.historyBlocks,
    live: options.live ?? true,
    genesisTimeMs: options.genesisTimeMs,
    segmentBlocks: options.segmentBlocks,
    cacheBlocks: options.cacheBlocks,
  });
  const rpc = createShapeRpc(chain, {
    limits: options.limits ?? "alchemy",
    logTimestamps: options.logTimestamps,
    refuseMethods: options.refuseMethods,
    fullTransactions: options.fullTransactions,
    bounds: options.bounds,
  });
  const rateLimit = options.rateLimit ?? 0;
  let windowStart = 0;
  let used = 0;

  const answer = (call: unknown) => {
    const { id, method, params } = callParts(call);
    try {
      if (typeof method !== "string") throw new RpcError(-32600, "invalid request");
      return { jsonrpc: "2.0", id, result: rpc.handle(method, Array.isArray(params) ? params : []) };
    } catch (error) {
      if (error instanceof RpcError) {
        return {
          jsonrpc: "2.0",
          id,
          error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
        };
      }
      return {
        jsonrpc: "2.0",
        id,
        error: { code: -32603, message: `internal error: ${(error as Error).message}` },
      };
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (trap && !held && matches(trap.match, chunks)) {
        held = [];
        trap.resolve();
        trap = null;
      }
      if (held) held.push(() => respond(res, chunks));
      else respond(res, chunks);
    });
  };

  let held: (() => void)[] | null = null;
  let trap: { match: (method: string, params: unknown[]) => boolean; resolve: () => void } | null = null;
  const matches = (match: (method: string, params: unknown[]) => boolean, chunks: Buffer[]) => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
      return (Array.isArray(body) ? body : [body]).some((c) => {
        const { method, params } = callParts(c);
        return typeof method === "string" && match(method, Array.isArray(params) ? params : []);
      });
    } catch {
      return false;
    }
  };
  const respond = (res: ServerResponse, chunks: Buffer[]) => {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      send(res, 200, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
      return;
    }
    const calls = Array.isArray(body) ? body.length : 1;
    if (rateLimit > 0) {
      const now = Date.now();
      if (now - windowStart >= 1000) {
        windowStart = now;
        used = 0;
      }
      if (used + calls > rateLimit) {
        res.setHeader("retry-after", "1");
        send(res, 429, { jsonrpc: "2.0", id: null, error: { code: 429, message: RATE_LIMITED } });
        return;
      }
      used += calls;
    }
    send(res, 200, Array.isArray(body) ? body.map(answer) : answer(body));
  };

  const server = createServer(onRequest);
  server.keepAliveTimeout = 60_000;

  // WebSocket: calls answered as over HTTP (no rate limit, no pause); newHeads subscriptions.
  const sockets = new WebSocketServer({ server });
  const heads = new Map<string, WebSocket>();
  let subscriptionCount = 0;
  let lastHead = chain.head();
  const watch = setInterval(() => {
    const head = chain.head();
    if (head === lastHead) return;
    lastHead = head;
    if (heads.size === 0) return;
    const header = answer({
      id: 0,
      method: "eth_getBlockByNumber",
      params: [`0x${head.toString(16)}`, false],
    });
    for (const [subscription, socket] of heads) {
      socket.send(
        JSON.stringify({
          jsonrpc: "2.0",
          method: "eth_subscription",
          params: { subscription, result: header.result },
        }),
      );
    }
  }, 10);
  watch.unref();
  sockets.on("connection", (socket) => {
    socket.on("message", (data) => {
      const reply = (call: unknown) => {
        const { id, method, params } = callParts(call);
        if (method === "eth_subscribe" && Array.isArray(params) && params[0] === "newHeads") {
          subscriptionCount += 1;
          const subscription = `0x${subscriptionCount.toString(16)}`;
          heads.set(subscription, socket);
          return { jsonrpc: "2.0", id, result: subscription };
        }
        if (method === "eth_unsubscribe" && Array.isArray(params)) {
          return { jsonrpc: "2.0", id, result: heads.delete(String(params[0])) };
        }
        return answer(call);
      };
      let body: unknown;
      try {
        body = JSON.parse(String(data));
      } catch {
        socket.send(
          JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } }),
        );
        return;
      }
      socket.send(JSON.stringify(Array.isArray(body) ? body.map(reply) : reply(body)));
    });
    socket.on("close", () => {
      for (const [subscription, s] of heads) if (s === socket) heads.delete(subscription);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8545, options.host ?? "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    wsUrl: `ws://${options.host ?? "127.0.0.1"}:${port}`,
    port,
    chain,
    pause: () => {
      held ??= [];
    },
    pauseAt: (match) =>
      new Promise<void>((resolve) => {
        trap = { match, resolve };
      }),
    resume: () => {
      const waiting = held ?? [];
      held = null;
      for (const go of waiting) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(watch);
        for (const socket of sockets.clients) socket.terminate();
        sockets.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A JSON-RPC call's id (null when absent), method and params, as sent (not yet checked). */
function callParts(call: unknown): { id: unknown; method: unknown; params: unknown } {
  const { id = null, method, params } = (call ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
  return { id, method, params };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
