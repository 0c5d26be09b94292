import { strict as assert } from "node:assert";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { brotliCompressSync, gzipSync } from "node:zlib";
import Fastify, { type FastifyInstance } from "fastify";
import { pino } from "pino";
import { createTestDb, type TestDb } from "../_test/db.js";
import { fixtureConfig } from "../_test/market-fixture.js";
import { loadConfig, projectRoot } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { demoKeyAllowed } from "../runtime/service.js";
import { createApiKey } from "../store/api-keys.js";
import { createApiServer } from "./server.js";
import { registerWeb } from "./web.js";

const html =
  "<!doctype html><title>tokenmarket</title><script type=module src=/assets/index-abc.js></script>";
const js = `console.log(${JSON.stringify("x".repeat(2000))});`;

describe("registerWeb", () => {
  let dir: string;
  let app: FastifyInstance;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-web-"));
    mkdirSync(path.join(dir, "assets"));
    writeFileSync(path.join(dir, "index.html"), html);
    writeFileSync(path.join(dir, "favicon.svg"), "<svg/>");
    writeFileSync(path.join(dir, ".build-hash"), "secret-ish");
    writeFileSync(path.join(dir, "assets", "index-abc.js"), js);
    writeFileSync(path.join(dir, "assets", "index-abc.js.br"), brotliCompressSync(js));
    writeFileSync(path.join(dir, "assets", "index-abc.js.gz"), gzipSync(js));
    writeFileSync(path.join(dir, "assets", "stale.js"), js);
    writeFileSync(path.join(dir, "assets", "stale.js.br"), brotliCompressSync("old"));
    utimesSync(path.join(dir, "assets", "stale.js.br"), new Date(0), new Date(0));
    app = Fastify();
    registerWeb(app, { distDir: dir, demoKey: "tm_demo_key" });
    await app.ready();
  });
  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the page at / without a key, uncached, with a policy allowing only this server", async () => {
    const res = await app.inject({ url: "/" });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, html);
    assert.match(String(res.headers["content-type"]), /^text\/html/);
    assert.equal(res.headers["cache-control"], "no-cache");
    const csp = String(res.headers["content-security-policy"]);
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /connect-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/, "no inline scripts or styles are needed");
    const again = await app.inject({ url: "/", headers: { "if-none-match": String(res.headers.etag) } });
    assert.equal(again.statusCode, 304, "a revalidation with the same ETag is a 304");
  });

  it("serves hashed assets for a year, compressed when the browser accepts it", async () => {
    const plain = await app.inject({ url: "/assets/index-abc.js" });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.body, js);
    assert.equal(plain.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.match(String(plain.headers["content-type"]), /^text\/javascript/);
    assert.equal(plain.headers["content-encoding"], undefined);

    const br = await app.inject({
      url: "/assets/index-abc.js",
      headers: { "accept-encoding": "gzip, deflate, br" },
    });
    assert.equal(br.headers["content-encoding"], "br");
    assert.equal(br.headers.vary, "accept-encoding");
    assert.ok(br.rawPayload.length < js.length / 4, "the brotli copy is sent");

    const gz = await app.inject({ url: "/assets/index-abc.js", headers: { "accept-encoding": "gzip" } });
    assert.equal(gz.headers["content-encoding"], "gzip");

    const stale = await app.inject({ url: "/assets/stale.js", headers: { "accept-encoding": "br" } });
    assert.equal(
      stale.headers["content-encoding"],
      undefined,
      "a compressed copy older than its file is ignored",
    );
    assert.equal(stale.body, js);
  });

  it("allows token logos from the configured logo hosts only, and tells the page which", async () => {
    const hosts = ["https://assets.coingecko.com", "https://raw.githubusercontent.com"];
    const withLogos = Fastify();
    registerWeb(withLogos, { distDir: dir, logoHosts: hosts });
    try {
      const res = await withLogos.inject({ url: "/" });
      const directives = String(res.headers["content-security-policy"]).split("; ");
      assert.ok(
        directives.includes(
          "img-src 'self' data: https://assets.coingecko.com https://raw.githubusercontent.com",
        ),
        directives.join("; "),
      );
      for (const strict of [
        "default-src 'self'",
        "script-src 'self'",
        "connect-src 'self'",
        "style-src 'self'",
      ]) {
        assert.ok(directives.includes(strict), `${strict} stays as strict as before`);
      }
      const config = await withLogos.inject({ url: "/web-config.json" });
      assert.deepEqual(config.json(), { logoHosts: hosts }, "no demo key here, the logo hosts for the page");
    } finally {
      await withLogos.close();
    }
    // Without logo hosts the images stay on this server.
    const plain = await app.inject({ url: "/" });
    assert.match(String(plain.headers["content-security-policy"]), /img-src 'self' data:;/);
    // A value that would break out of the directive is refused at start, not sent.
    for (const bad of [
      "https://a.example; script-src *",
      "http://a.example",
      "https://a.example/logos",
      "*",
    ]) {
      assert.throws(() => registerWeb(Fastify(), { distDir: dir, logoHosts: [bad] }), /not a logo host/, bad);
    }
  });

  it("serves top-level files such as the icon", async () => {
    const res = await app.inject({ url: "/favicon.svg" });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "image/svg+xml");
  });

  it("answers 404 in the API's error shape for missing files, and never leaves the build folder", async () => {
    for (const url of [
      "/assets/nope.js",
      "/assets/../../package.json",
      "/assets/%2e%2e/%2e%2e/package.json",
      "/assets/..%2f..%2fpackage.json",
      "/assets/.build-hash",
      "/nope.svg",
    ]) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 404, url);
      const body = res.json() as { statusCode: number; error: string; message: string };
      assert.equal(body.statusCode, 404, url);
      assert.equal(typeof body.message, "string", url);
    }
  });

  it("offers the demo key at /web-config.json only to its own origin on loopback, without CORS", async () => {
    const testDb = await createTestDb();
    // The whole API with CORS open to any origin, as configured by default.
    const api = createApiServer({
      config: fixtureConfig({ api: { corsOrigins: ["*"] } }),
      db: testDb.db,
      logger: createSilentLogger(),
      extend: (scope) => registerWeb(scope, { distDir: dir, demoKey: "tm_demo_key" }),
    });
    try {
      const base = await api.listen({ host: "127.0.0.1", port: 0 });
      const get = async (headers: Record<string, string>) => {
        const response = await fetch(`${base}/web-config.json`, { headers });
        return { body: (await response.json()) as unknown, headers: response.headers };
      };
      // The page itself: a same-origin fetch sends no Origin (or its own) and Sec-Fetch-Site same-origin.
      const own = await get({ "sec-fetch-site": "same-origin" });
      assert.deepEqual(own.body, { demoKey: "tm_demo_key" });
      assert.equal(own.headers.get("cache-control"), "no-store");
      assert.deepEqual((await get({ origin: base })).body, { demoKey: "tm_demo_key" });

      // Another site: no key and no CORS header, so its page could not read the answer anyway.
      const foreign: Record<string, string>[] = [
        { origin: "https://evil.example" },
        { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
        { "sec-fetch-site": "cross-site" },
        { "sec-fetch-site": "same-site" },
        { origin: "null" },
        // DNS rebinding: a foreign name resolved to 127.0.0.1 sends its own Host.
        { host: "evil.example:8080", origin: "http://evil.example:8080" },
      ];
      for (const headers of foreign) {
        const answer = await get(headers);
        assert.deepEqual(answer.body, {}, JSON.stringify(headers));
        assert.equal(answer.headers.get("access-control-allow-origin"), null, JSON.stringify(headers));
      }
      // The data API keeps its CORS.
      const data = await fetch(`${base}/v1/tokens/search?searchString=x`, {
        headers: { origin: "https://app.example" },
      });
      assert.equal(data.headers.get("access-control-allow-origin"), "*");
    } finally {
      await api.close();
      await testDb.drop();
    }

    const bare = Fastify();
    registerWeb(bare, { distDir: dir });
    assert.deepEqual((await bare.inject({ url: "/web-config.json" })).json(), {});
    await bare.close();
  });

  it("creates the demo key only on a devnet configuration with a loopback listener", () => {
    const devnet = loadConfig({ file: path.join(projectRoot, "config/devnet.json"), env: {} });
    assert.equal(demoKeyAllowed(devnet), true);
    assert.equal(demoKeyAllowed({ ...devnet, api: { ...devnet.api, host: "0.0.0.0" } }), false);
    assert.equal(demoKeyAllowed({ ...devnet, api: { ...devnet.api, demoKey: false } }), false);
    assert.equal(demoKeyAllowed({ ...devnet, devnet: { ...devnet.devnet, enabled: false } }), false);
    // A real chain in the configuration (devnet: false), even beside a running devnet.
    assert.equal(demoKeyAllowed({ ...fixtureConfig(), devnet: devnet.devnet }), false);
  });

  it("says how to build the page when it is not built", async () => {
    const bare = Fastify();
    registerWeb(bare, { distDir: path.join(dir, "missing") });
    const res = await bare.inject({ url: "/" });
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /npm run build:web/);
    await bare.close();
  });
});

describe("the page inside the API server", () => {
  let dir: string;
  let testDb: TestDb;
  let app: FastifyInstance;
  let base: string;
  let key: string;
  const logs: { level: number; msg: string; err?: { message?: string } }[] = [];

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-web-"));
    mkdirSync(path.join(dir, "assets"));
    writeFileSync(path.join(dir, "index.html"), html);
    writeFileSync(path.join(dir, "favicon.svg"), "<svg/>");
    writeFileSync(path.join(dir, "assets", "index-abc.js"), js);
    writeFileSync(path.join(dir, "assets", "index-abc.js.br"), brotliCompressSync(js));
    testDb = await createTestDb();
    key = (await createApiKey(testDb.db, "web-test")).key;
    // Every line the server logs, warnings included, as parsed JSON.
    const logger = pino(
      { level: "debug" },
      { write: (line: string) => logs.push(JSON.parse(line) as (typeof logs)[number]) },
    );
    app = createApiServer({
      config: fixtureConfig(),
      db: testDb.db,
      logger,
      extend: (scope) => registerWeb(scope, { distDir: dir }),
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    assert.ok(address !== null && typeof address === "object");
    base = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    await app?.close();
    await testDb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The value of tokenmarket_http_requests_total for one route and status, 0 when absent. */
  const counted = (metrics: string, route: string, status: number): number => {
    const line = metrics.split("\n").find(
      (l) =>
        l.startsWith("tokenmarket_http_requests_total{") &&
        // The exposition format escapes backslashes in label values.
        l.includes(`route="${route.replaceAll("\\", "\\\\")}"`) &&
        l.includes(`status_code="${status}"`),
    );
    return line === undefined ? 0 : Number(line.split(" ").at(-1));
  };

  it("logs no warning for page views, and /metrics records the status that was sent", async () => {
    const requests: { url: string; route: string; headers?: Record<string, string> }[] = [
      { url: "/", route: "/" },
      { url: "/index.html", route: "/index.html" },
      { url: "/assets/index-abc.js", route: "/assets/*", headers: { "accept-encoding": "br" } },
      { url: "/assets/index-abc.js", route: "/assets/*" },
      {
        url: "/favicon.svg",
        route: "/:file(^[A-Za-z0-9][A-Za-z0-9_-]*\\.(?:svg|png|ico|webp|txt|webmanifest)$)",
      },
      { url: "/assets/missing.js", route: "/assets/*" },
      { url: "/web-config.json", route: "/web-config.json" },
      { url: "/no/such/page", route: "unmatched" },
      { url: "/healthz", route: "/healthz" },
      {
        url: "/v1/tokens/search?searchString=usdc",
        route: "/v1/tokens/search",
        headers: { "x-api-key": key },
      },
      { url: "/v1/tokens/search?searchString=usdc", route: "/v1/tokens/search" },
    ];
    const sent = new Map<string, number>();
    const statuses: number[] = [];
    for (const { url, route, headers } of requests) {
      const res = await fetch(base + url, headers === undefined ? {} : { headers });
      await res.arrayBuffer();
      statuses.push(res.status);
      const label = `${route} ${res.status}`;
      sent.set(label, (sent.get(label) ?? 0) + 1);
    }
    // The search finds nothing in an empty database (404); without a key it is a 403.
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 404, 200, 404, 200, 404, 403], "the statuses sent");
    // onResponse runs after the answer is on the wire: /metrics is read until it has counted every
    // request sent (each answered, so each is counted), then compared label by label.
    const total = (text: string) =>
      [...sent.keys()].reduce((sum, label) => {
        const route = label.slice(0, label.lastIndexOf(" "));
        return sum + counted(text, route, Number(label.split(" ").at(-1)));
      }, 0);
    let metrics = await (await fetch(`${base}/metrics`)).text();
    const deadline = Date.now() + 10_000;
    while (total(metrics) < requests.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      metrics = await (await fetch(`${base}/metrics`)).text();
    }
    for (const [label, count] of sent) {
      const status = Number(label.split(" ").at(-1));
      const route = label.slice(0, label.lastIndexOf(" "));
      assert.equal(counted(metrics, route, status), count, `${label} counted in /metrics`);
    }
    for (const status of [404, 500, 503]) {
      for (const route of ["/", "/index.html", "/assets/*", "/web-config.json"]) {
        if (sent.has(`${route} ${status}`)) continue;
        assert.equal(counted(metrics, route, status), 0, `no ${status} recorded for ${route}`);
      }
    }
    const warnings = logs.filter((line) => line.level >= 40);
    assert.deepEqual(
      warnings.map((line) => `${line.msg} ${line.err?.message ?? ""}`),
      [],
      "no warning or error logged",
    );
  });
});
