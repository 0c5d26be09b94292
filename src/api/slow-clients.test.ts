import * as assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiOnOwnPostgres, timedGet } from "../_test/api-own-postgres.js";
import { fixture, fixtureConfig } from "../_test/market-fixture.js";
import { createSilentLogger } from "../internal/logger.js";

/**
 * The database's bound (the default), and short bounds for the connections so that the test is
 * quick: a request's, an idle keep-alive's, an unread answer's.
 */
const DATABASE_TIMEOUT_MS = 4000;
const REQUEST_TIMEOUT_MS = 1500;
const KEEP_ALIVE_TIMEOUT_MS = 500;
const WRITE_TIMEOUT_MS = 1500;
/** Node checks the request bounds of its connections every second (api/server.ts). */
const CHECK_INTERVAL_MS = 1000;

/**
 * Bounds that must hold against a stalled database and against clients that hold connections
 * open: a frozen Postgres (SIGSTOP) gets every data request a 503 within api.databaseTimeoutMs +
 * 10 % (its waits for a connection and for each query share the one bound), a client trickling its
 * headers is cut at api.requestTimeoutMs, and a client that never reads at the keep-alive or write
 * bound. The connections' ends are seen from the server's side.
 */
describe("slow databases and slow clients", { timeout: 180_000 }, () => {
  let own: Awaited<ReturnType<typeof startApiOnOwnPostgres>> | undefined;
  let port: number;
  let key: string;
  const logger = createSilentLogger();
  const base = fixtureConfig();
  const config = {
    ...base,
    api: {
      ...base.api,
      databaseTimeoutMs: DATABASE_TIMEOUT_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
      writeTimeoutMs: WRITE_TIMEOUT_MS,
    },
  };
  /** How long the server took over each answer (from the request's arrival to the answer sent). */
  const serverMs: number[] = [];
  /** When the server saw each connection open and close, by the client's local port. */
  const connections = new Map<number, { openedAt: number; closedAt?: number }>();

  before(async () => {
    own = await startApiOnOwnPostgres({ prefix: "tokenmarket-slow-", config, logger, answerCacheTtlMs: 0 });
    const { app } = own;
    key = own.key;
    app.addHook("onResponse", async (_request, reply) => {
      serverMs.push(reply.elapsedTime);
    });
    app.server.on("connection", (socket: Socket) => {
      const entry: { openedAt: number; closedAt?: number } = { openedAt: performance.now() };
      connections.set(socket.remotePort ?? -1, entry);
      socket.once("close", () => {
        entry.closedAt = performance.now();
      });
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  after(() => own?.close());

  const signalServer = (signal: NodeJS.Signals) => own?.signalServer(signal);
  const timed = (url: string) => timedGet(`http://127.0.0.1:${port}${url}`, key, 30_000);
  const data = (i: number) => `/api/v1/pairs?asset_id=${fixture.weth}:1&limit=${1 + (i % 50)}`;

  /** A raw connection, opened and seen by the server; resolves with its local port. */
  const open = async (): Promise<{ socket: Socket; localPort: number }> => {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const localPort = socket.localPort ?? -1;
    while (!connections.has(localPort)) await sleep(5);
    return { socket, localPort };
  };
  /** How long the server kept the connection of `localPort` open (awaited; bounded for the failure message). */
  const heldFor = async (localPort: number, boundMs: number): Promise<number> => {
    const entry = connections.get(localPort);
    assert.ok(entry);
    const deadline = performance.now() + boundMs;
    while (entry.closedAt === undefined && performance.now() < deadline) await sleep(20);
    assert.ok(entry.closedAt !== undefined, `connection still open after ${boundMs} ms`);
    return entry.closedAt - entry.openedAt;
  };

  it("answers data requests within api.databaseTimeoutMs + 10 % while Postgres is frozen", async (t) => {
    assert.equal((await timed(data(0))).status, 200);
    signalServer("SIGSTOP");
    serverMs.length = 0;
    try {
      const answers: Awaited<ReturnType<typeof timed>>[] = [];
      // More requests at once than the pool has connections (10): some wait for one first.
      for (let round = 0; round < 3; round++) {
        answers.push(
          ...(await Promise.all(Array.from({ length: 14 }, (_, i) => timed(data(round * 14 + i))))),
        );
      }
      const slowest = Math.max(...answers.map((a) => a.ms));
      t.diagnostic(
        `${answers.length} answers during the freeze, slowest ${Math.round(slowest)} ms at the client, ${Math.round(Math.max(...serverMs))} ms in the server`,
      );
      // The server's time (arrival to answer sent) holds the bound + 10 %; the client's adds this
      // machine's scheduling of 14 requests at once (a loaded CI: up to 600 ms), so a wide margin.
      assert.equal(serverMs.length, answers.length);
      for (const ms of serverMs) {
        assert.ok(
          ms <= DATABASE_TIMEOUT_MS * 1.1,
          `answered in ${Math.round(ms)} ms, bound ${DATABASE_TIMEOUT_MS} ms + 10 %`,
        );
      }
      for (const answer of answers) {
        assert.equal(answer.status, 503);
        assert.equal(answer.retryAfter, "5");
        assert.ok(
          answer.ms <= DATABASE_TIMEOUT_MS * 2,
          `answered in ${Math.round(answer.ms)} ms at the client`,
        );
      }
    } finally {
      signalServer("SIGCONT");
    }
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await timed(data(i))).status;
      if (status !== 200) await sleep(100);
    }
    assert.equal(status, 200, "answers again after SIGCONT");
  });

  it("closes a connection whose client trickles its headers at api.requestTimeoutMs", async (t) => {
    const clients = await Promise.all(Array.from({ length: 5 }, () => open()));
    for (const { socket } of clients) socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    // A header byte every 100 ms, never the blank line that ends the headers.
    const trickle = setInterval(() => {
      for (const { socket } of clients) if (!socket.destroyed) socket.write("X");
    }, 100);
    try {
      const held = await Promise.all(
        clients.map((c) => heldFor(c.localPort, 10 * (REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS))),
      );
      t.diagnostic(`trickling clients held ${held.map(Math.round).join(", ")} ms`);
      for (const ms of held) {
        assert.ok(ms >= REQUEST_TIMEOUT_MS - 50, `closed after ${ms} ms, before the bound`);
        // A timeout that must fire: within its check interval, with a wide margin.
        assert.ok(ms <= 2 * (REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS), `closed after ${ms} ms`);
      }
    } finally {
      clearInterval(trickle);
      for (const { socket } of clients) socket.destroy();
    }
  });

  it("closes a connection that sends nothing, and one whose client never reads, at their bounds", async (t) => {
    const silent = await open();
    const reader = await open();
    reader.socket.pause();
    // Requests for a large answer (the OpenAPI document) on one keep-alive connection, never read.
    for (let i = 0; i < 20; i++) reader.socket.write(`GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const [silentMs, readerMs] = await Promise.all([
      heldFor(silent.localPort, 10 * (REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS)),
      heldFor(reader.localPort, 10 * (WRITE_TIMEOUT_MS + REQUEST_TIMEOUT_MS)),
    ]);
    t.diagnostic(
      `silent connection held ${Math.round(silentMs)} ms; non-reading client ${Math.round(readerMs)} ms`,
    );
    assert.ok(silentMs <= 2 * (REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS), `silent: ${silentMs} ms`);
    assert.ok(readerMs <= 2 * (WRITE_TIMEOUT_MS + REQUEST_TIMEOUT_MS), `non-reading: ${readerMs} ms`);
    silent.socket.destroy();
    reader.socket.destroy();
  });
});
