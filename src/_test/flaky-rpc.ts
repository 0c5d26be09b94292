import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { seededRandom } from "./random.js";

/** Probabilities (0…1) of each fault, drawn per HTTP request (rangeTooLarge: per eth_getLogs call). */
export type FlakyRpcFaults = {
  /** Hold the request without answering for `holdMs`, then drop it: the client times out. */
  timeout?: number;
  /** HTTP 429 with Retry-After. */
  rateLimit?: number;
  /** HTTP 502 or 503. */
  serverError?: number;
  /** Destroy the connection without an answer. */
  drop?: number;
  /** A provider's "range too large" JSON-RPC error for an eth_getLogs call (messages of several providers). */
  rangeTooLarge?: number;
  /** eth_getLogs over more blocks than this is always refused with a range error (a provider's hard limit). */
  maxLogRange?: number;
};

export type FaultKind = "timeout" | "rateLimit" | "serverError" | "drop" | "rangeTooLarge";

export type FlakyRpcStats = {
  requests: number;
  timeout: number;
  rateLimit: number;
  serverError: number;
  drop: number;
  rangeTooLarge: number;
  forwarded: number;
  /** JSON-RPC calls received (each call of a batch counts once). */
  calls: number;
  /** Headers answered with a rewritten parentHash (see setUnlinked). */
  unlinked: number;
};

/** Blocks `from` to `to` (inclusive; no `to`: every later block too) whose headers do not link. */
export type UnlinkedBlocks = { from: number; to?: number };

export type FlakyRpc = {
  url: string;
  stats: FlakyRpcStats;
  /** Changes the fault rates (for example to none, to let a run finish cleanly). */
  setFaults(faults: FlakyRpcFaults): void;
  /**
   * Answers the headers of these blocks with a parentHash that is not their parent's hash (as
   * hardhat_mine's blocks, or a load balancer mixing two backends, do); null: faithful again.
   */
  setUnlinked(blocks: UnlinkedBlocks | null): void;
  /** Holds every request not yet forwarded to the node unanswered until `release()`. */
  hold(): void;
  release(): void;
  stop(): Promise<void>;
};

const rangeMessages = [
  { code: -32005, message: "query returned more than 10000 results" },
  {
    code: -32602,
    message: "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range",
  },
  { code: -32000, message: "block range is too wide" },
  { code: -32000, message: "exceed maximum block range: 50" },
];

type JsonRpcCall = { jsonrpc?: string; id?: unknown; method?: string; params?: unknown[] };

/**
 * A real HTTP JSON-RPC proxy in front of a node that injects the faults of real providers:
 * timeouts, HTTP 429 (with Retry-After), 5xx, dropped connections and range-too-large errors on
 * eth_getLogs (in JSON-RPC batches too, per call). Seeded, so a run's fault pattern repeats.
 */
export async function startFlakyRpc(options: {
  target: string;
  faults: FlakyRpcFaults;
  seed?: number;
  /** How long a "timeout" request is held before its connection is dropped (default 3 s). */
  holdMs?: number;
  /** Retry-After of the 429 answers, in seconds (default 0: come back at once). */
  retryAfterSeconds?: number;
  /**
   * Faults injected first, one per request in this order, before the random ones: every kind is
   * then sure to happen (rangeTooLarge waits for a request with an eth_getLogs call).
   */
  sequence?: FaultKind[];
  /** Headers that do not link from the start (see FlakyRpc.setUnlinked). */
  unlinked?: UnlinkedBlocks;
}): Promise<FlakyRpc> {
  let faults = { ...options.faults };
  let unlinked: UnlinkedBlocks | null = options.unlinked ?? null;
  const sequence = [...(options.sequence ?? [])];
  const random = seededRandom(options.seed ?? 1);
  const holdMs = options.holdMs ?? 3000;
  const stats: FlakyRpcStats = {
    requests: 0,
    timeout: 0,
    rateLimit: 0,
    serverError: 0,
    drop: 0,
    rangeTooLarge: 0,
    forwarded: 0,
    calls: 0,
    unlinked: 0,
  };
  /** A header of an unlinked block gets another parentHash: its own with the last digit changed. */
  const unlink = (result: unknown): unknown => {
    const block = result as { number?: string; parentHash?: string } | null;
    if (!unlinked || !block || typeof block.number !== "string" || typeof block.parentHash !== "string")
      return result;
    const n = Number(block.number);
    if (n < unlinked.from || (unlinked.to !== undefined && n > unlinked.to)) return result;
    stats.unlinked++;
    const last = block.parentHash.slice(-1) === "0" ? "1" : "0";
    return { ...block, parentHash: `${block.parentHash.slice(0, -1)}${last}` };
  };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let forced: FaultKind | undefined;
  let held: { promise: Promise<void>; release: () => void } | null = null;
  /** The forced fault of this request, or else a random draw. */
  const hit = (p: number | undefined, kind: FaultKind) =>
    forced !== undefined ? forced === kind : p !== undefined && p > 0 && random() < p;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    while (held) await held.promise;
    stats.requests++;
    forced = undefined;
    if (sequence.length > 0 && (sequence[0] !== "rangeTooLarge" || body.includes('"eth_getLogs"')))
      forced = sequence.shift();
    if (hit(faults.drop, "drop")) {
      stats.drop++;
      req.socket.destroy();
      return;
    }
    if (hit(faults.timeout, "timeout")) {
      stats.timeout++;
      const timer = setTimeout(() => {
        timers.delete(timer);
        req.socket.destroy();
      }, holdMs);
      timers.add(timer);
      return;
    }
    if (hit(faults.rateLimit, "rateLimit")) {
      stats.rateLimit++;
      res.writeHead(429, {
        "content-type": "application/json",
        "retry-after": String(options.retryAfterSeconds ?? 0),
      });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too Many Requests" } }),
      );
      return;
    }
    if (hit(faults.serverError, "serverError")) {
      stats.serverError++;
      res.writeHead(random() < 0.5 ? 502 : 503, { "content-type": "text/plain" });
      res.end("upstream unavailable");
      return;
    }

    let parsed: JsonRpcCall | JsonRpcCall[];
    try {
      parsed = JSON.parse(body) as JsonRpcCall | JsonRpcCall[];
    } catch {
      res.writeHead(400).end();
      return;
    }
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    stats.calls += calls.length;
    // A forced range error goes to the first eth_getLogs call; the others draw at random.
    let forceRange = forced === "rangeTooLarge";
    const answers: (unknown | undefined)[] = calls.map((call) => {
      if (call.method !== "eth_getLogs") return undefined;
      const force = forceRange;
      forceRange = false;
      forced = undefined;
      const filter = (call.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
      const width = Number(filter.toBlock) - Number(filter.fromBlock) + 1;
      const overLimit =
        faults.maxLogRange !== undefined && Number.isFinite(width) && width > faults.maxLogRange;
      if (!force && !overLimit && !hit(faults.rangeTooLarge, "rangeTooLarge")) return undefined;
      stats.rangeTooLarge++;
      const error = rangeMessages[Math.floor(random() * rangeMessages.length)];
      return { jsonrpc: "2.0", id: call.id, error };
    });
    const forward = calls.filter((_, i) => answers[i] === undefined);
    if (forward.length > 0) {
      stats.forwarded++;
      let upstream: unknown;
      try {
        const response = await fetch(options.target, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(Array.isArray(parsed) ? forward : forward[0]),
        });
        upstream = await response.json();
      } catch {
        res.writeHead(502).end("upstream failed");
        return;
      }
      const results = Array.isArray(upstream) ? upstream : [upstream];
      let k = 0;
      for (let i = 0; i < answers.length; i++) if (answers[i] === undefined) answers[i] = results[k++];
      answers.forEach((answer, i) => {
        const method = calls[i]?.method;
        const reply = answer as { result?: unknown } | undefined;
        if ((method === "eth_getBlockByNumber" || method === "eth_getBlockByHash") && reply?.result)
          answers[i] = { ...reply, result: unlink(reply.result) };
      });
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    setFaults(next) {
      faults = { ...next };
    },
    setUnlinked(blocks) {
      unlinked = blocks;
    },
    hold() {
      if (held) return;
      let release = () => {};
      const promise = new Promise<void>((resolve) => {
        release = resolve;
      });
      held = { promise, release };
    },
    release() {
      const was = held;
      held = null;
      was?.release();
    },
    stop: async () => {
      held?.release();
      held = null;
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
