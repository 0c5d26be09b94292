import * as assert from "node:assert/strict";
import { createConnection, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { fixture, fixtureConfig, loadMarketFixture } from "../_test/market-fixture.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiServer } from "./server.js";

const WRITE_TIMEOUT_MS = 600;
/**
 * Requests sent at once on the connection that never reads: their answers (tens of megabytes)
 * pile up far beyond the socket buffers (on Linux at most a few megabytes each way).
 */
const PIPELINED = 200;

describe("a client that never reads its answers (api.writeTimeoutMs)", () => {
  let testDb: TestDb;
  let app: FastifyInstance;
  let port: number;
  let key: string;
  // All 250 trades of the fixture's pair in one page: about a hundred kilobytes of JSON.
  const path = `/api/v1/trades?${new URLSearchParams({
    asset_id: `${fixture.weth}:1`,
    pair_id: `${fixture.pair}:1`,
    limit: "1000",
  })}`;

  before(async () => {
    testDb = await createTestDb();
    ({ key } = await loadMarketFixture(testDb.db));
    app = createApiServer({
      config: fixtureConfig({ api: { writeTimeoutMs: WRITE_TIMEOUT_MS } }),
      db: testDb.db,
      logger: createSilentLogger(),
      syncPollMs: 50,
    });
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    port = Number(new URL(address).port);
  });
  after(async () => {
    await app?.close();
    await testDb?.drop();
  });

  it("closes the connection within the bound and keeps serving other clients", async (t) => {
    // The answer a reading client gets, uncompressed.
    const full = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { "x-api-key": key, "accept-encoding": "identity" },
    });
    assert.equal(full.status, 200, await full.clone().text());
    const bytes = (await full.arrayBuffer()).byteLength;
    assert.ok(bytes * PIPELINED > 16_000_000, `large answers (${PIPELINED} × ${bytes} bytes)`);

    // The server's side of the next connection: its 'close' is the server closing it.
    const serverSide = new Promise<Socket>((resolve) => {
      const onConnection = (accepted: Socket) => {
        if (accepted.remotePort !== socket.localPort) return;
        app.server.off("connection", onConnection);
        resolve(accepted);
      };
      app.server.on("connection", onConnection);
    });
    const socket = createConnection(port, "127.0.0.1");
    // Never read: no 'data' listener and paused, so the kernel's receive buffer fills and stays full.
    socket.pause();
    socket.on("error", () => {});
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const accepted = await serverSide;
    const serverClosed = new Promise<number>((resolve) =>
      accepted.once("close", () => resolve(performance.now())),
    );
    const request = `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${key}\r\n\r\n`;
    const sentAt = performance.now();
    socket.write(request.repeat(PIPELINED));
    const closedAfterMs =
      (await Promise.race([
        serverClosed,
        delay(15_000).then(() => {
          throw new Error("the server still holds the connection 15 s after the requests");
        }),
      ])) - sentAt;
    // Not before the bound (it is the write timeout that closed it), and soon after it: the bound
    // plus the time to build the answers that did drain into the socket buffers.
    assert.ok(closedAfterMs >= WRITE_TIMEOUT_MS, `closed after ${Math.round(closedAfterMs)} ms`);
    assert.ok(
      closedAfterMs < WRITE_TIMEOUT_MS + 3000,
      `closed ${Math.round(closedAfterMs)} ms after the requests (bound ${WRITE_TIMEOUT_MS} ms)`,
    );
    // The client, reading at last, gets what the buffers held and then the end: never all answers.
    let received = 0;
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.resume();
    await ended;
    assert.ok(
      received < bytes * PIPELINED,
      `the connection was cut: ${received} of ${bytes * PIPELINED} bytes received`,
    );

    // The server is healthy for everybody else: the same answer in full, and the health checks.
    const again = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { "x-api-key": key, "accept-encoding": "identity" },
    });
    assert.equal(again.status, 200);
    assert.equal((await again.arrayBuffer()).byteLength, bytes);
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    const connections = await new Promise<number>((resolve, reject) =>
      app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
    t.diagnostic(
      `${PIPELINED} pipelined answers of ${bytes} bytes never read: the server closed the connection ${Math.round(closedAfterMs)} ms after the requests (writeTimeoutMs ${WRITE_TIMEOUT_MS}) after ${received} bytes had gone into the socket buffers; ${connections} connection(s) left open (the fetch keep-alive ones)`,
    );
  });
});
