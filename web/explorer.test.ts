// The explorer page in a real browser (Debian's Chromium driven by playwright-core) against the
// real demo: `tokenmarket start` with a throwaway data folder and free ports, the devnet with
// its simulated history and live trading, the indexer and the API.
//
// Screenshots and measurements go to test-results/. The browser is CHROMIUM_PATH (default
// /usr/bin/chromium). Without it the test is skipped and says why, except under CI=true, where a
// missing browser fails the run: a CI that silently skipped the page would pass with it broken.
// Install it with `apt-get install -y chromium`.

import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from "playwright-core";
import { freePort } from "../src/_test/free-port.js";
import { buildWeb } from "./build.js";
import { formatChange, formatUsd, shortHex } from "./src/format.js";
import { familyLabels } from "./src/pool-label.js";

const projectRoot = path.resolve(import.meta.dirname, "..");
const resultsDir = path.join(projectRoot, "test-results");
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** The demo writes its simulated history before the API answers: allow for a slow machine. */
const startTimeoutMs = Number(process.env.EXPLORER_TEST_START_TIMEOUT_MS ?? 600_000);
/** The flags this workplace's Chromium needs: no sandbox as root, no calls home on a closed network. */
const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The block explorer the test's own demo is configured with. */
const testExplorerUrl = "https://explorer.invalid";

/** A pair record as /api/v1/pools/top and /api/v1/pairs give it: what the page's rows show. */
type PoolRecord = {
  pair_id: string;
  pair_address: string;
  factory_name: string;
  protocol: string;
  hooks: string | null;
  hook_may_rewrite_amounts?: true;
  name: string;
  base_address: string;
  token0_address: string;
  token1_address: string;
  token0_symbol: string | null;
  token1_symbol: string | null;
  token0_usd_price?: number | null;
  token1_usd_price?: number | null;
  token0_price?: number | null;
  token1_price?: number | null;
  liquidity_usd?: number | null;
};
type MarketRecord = { token_id: string; windows: Record<string, { price_change: number | null }> };

/** The demo's reference tokens (config/devnet.json), as token ids: the quotes of its pools' names. */
const reference = (() => {
  const config = JSON.parse(readFileSync(path.join(projectRoot, "config", "devnet.json"), "utf8")) as {
    chains: {
      id: number;
      referenceTokens: { stablecoins: string[]; wrappedNative: string; wrappedBtc?: string[] };
    }[];
  };
  const chain = config.chains[0] as (typeof config.chains)[number];
  const id = (address: string) => `${address.toLowerCase()}:${chain.id}`;
  return {
    stablecoins: chain.referenceTokens.stablecoins.map(id),
    wrappedNative: id(chain.referenceTokens.wrappedNative),
    native: id("0x0000000000000000000000000000000000000000"),
    wrappedBtc: (chain.referenceTokens.wrappedBtc ?? []).map(id),
  };
})();

/**
 * A pool's name as traders read it, worked out here on its own: the quote is the reference token
 * (a stablecoin, the first configured first; else the wrapped native coin, then the native coin;
 * else wrapped BTC), the base the other; token0 is the base when neither is a reference.
 */
function expectedName(pool: PoolRecord): string {
  const rank = (token: string) => {
    const stable = reference.stablecoins.indexOf(token);
    if (stable >= 0) return 100 - stable;
    if (token === reference.wrappedNative) return 50;
    if (token === reference.native) return 49;
    const btc = reference.wrappedBtc.indexOf(token);
    return btc >= 0 ? 40 - btc : 0;
  };
  const symbol = (s: string | null, token: string) => s ?? shortHex(token.split(":")[0] as string);
  const t0 = symbol(pool.token0_symbol, pool.token0_address);
  const t1 = symbol(pool.token1_symbol, pool.token1_address);
  return rank(pool.token0_address) > rank(pool.token1_address) ? `${t1}/${t0}` : `${t0}/${t1}`;
}

/** A pool's venue line: its DEX, its family, its hook, and a V4 pool id shortened, never in full. */
function checkVenue(venue: string, pool: PoolRecord): void {
  assert.ok(venue.startsWith(pool.factory_name), `the DEX first: ${venue}`);
  const family = familyLabels[pool.protocol as keyof typeof familyLabels];
  assert.ok(family && venue.includes(family), `the family (${pool.protocol}) shown: ${venue}`);
  if (pool.hooks) assert.match(venue, pool.hook_may_rewrite_amounts ? / · delta hook\b/ : / · hook\b/);
  else assert.doesNotMatch(venue, /hook/, venue);
  if (/^0x[0-9a-f]{64}$/.test(pool.pair_address)) {
    assert.match(venue, / · 0x[0-9a-f]{4}…[0-9a-f]{4}\b/, `a pool id shortened: ${venue}`);
    assert.ok(venue.includes(shortHex(pool.pair_address)) && !venue.includes(pool.pair_address), venue);
  }
}

const missingBrowser = existsSync(chromiumPath)
  ? undefined
  : `no Chromium at ${chromiumPath}: install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH)`;
/** Under CI the browser is part of the run (.ci/run installs it): its absence is a failure, not a skip. */
const inCi = process.env.CI === "true";
const skipReason = missingBrowser && `${missingBrowser} to run the browser test`;
if (skipReason && !inCi) console.log(`# explorer browser test skipped: ${skipReason}`);

if (missingBrowser && inCi) {
  it("Chromium is installed (CI=true)", () => {
    assert.fail(`CI=true and ${missingBrowser}`);
  });
}

type Service = { origin: string; demoKey: string; child?: ChildProcess; dataDir?: string; output: string[] };

/**
 * A service already running (`EXPLORER_TEST_ORIGIN=http://127.0.0.1:8080`, for example an
 * `npm start` in another terminal) instead of one started by the test.
 */
async function existingService(origin: string): Promise<Service> {
  const config = (await (await fetch(`${origin}/web-config.json`)).json()) as { demoKey?: string };
  const demoKey = process.env.EXPLORER_TEST_KEY ?? config.demoKey;
  assert.ok(demoKey, `${origin}/web-config.json offers no demo key: set EXPLORER_TEST_KEY`);
  return { origin, demoKey, output: [] };
}

/**
 * Starts `tokenmarket start` on free ports with its own data folder; resolves once the indexer
 * has caught up with the devnet (`/readyz`: before that, recent candles are still missing) and
 * search finds WETH.
 */
async function startService(): Promise<Service> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "tokenmarket-explorer-"));
  const [apiPort, pgPort, devnetPort] = [await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TOKENMARKET__database__embedded__dataDir: path.join(dataDir, "postgres"),
    TOKENMARKET__database__embedded__port: String(pgPort),
    TOKENMARKET__api__port: String(apiPort),
    TOKENMARKET__devnet__port: String(devnetPort),
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    // A block explorer for the demo chain (never visited: the test checks the links' targets).
    TOKENMARKET__chains__0__explorerUrl: testExplorerUrl,
  };
  delete env.DATABASE_URL;
  delete env.TOKENMARKET_CONFIG;
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "start"], {
    cwd: projectRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 400) output.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const origin = `http://127.0.0.1:${apiPort}`;
  const service: Service = { origin, demoKey: "", child, dataDir, output };

  const started = Date.now();
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  let last = "";
  while (Date.now() - started < startTimeoutMs) {
    if (exited) {
      await stopService(service);
      throw new Error(`tokenmarket start exited early:\n${output.join("").slice(-4000)}`);
    }
    try {
      const ready = await fetch(`${origin}/readyz`);
      if (!ready.ok) {
        last = `/readyz ${ready.status} ${(await ready.text()).slice(0, 300)}`;
        throw new Error(last);
      }
      if (!service.demoKey) {
        const config = (await (await fetch(`${origin}/web-config.json`)).json()) as { demoKey?: string };
        if (config.demoKey) service.demoKey = config.demoKey;
      }
      if (service.demoKey) {
        const res = await fetch(`${origin}/v1/tokens/search?searchString=WETH`, {
          headers: { "x-api-key": service.demoKey },
        });
        last = `${res.status} ${await res.text()}`.slice(0, 300);
        if (res.ok) {
          console.log(`# demo ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${origin}`);
          return service;
        }
      }
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  await stopService(service);
  throw new Error(`the demo did not answer a WETH search within ${startTimeoutMs} ms (last: ${last})`);
}

async function stopService(service: Service): Promise<void> {
  const { child } = service;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  }
  if (service.dataDir) rmSync(service.dataDir, { recursive: true, force: true });
}

/** Bytes on the wire per request (CDP `encodedDataLength`: headers and compressed body). */
type Transfer = { url: string; bytes: number; type: string };

async function recordTransfers(page: Page): Promise<{ cdp: CDPSession; transfers: Transfer[] }> {
  const cdp = await page.context().newCDPSession(page);
  const transfers: Transfer[] = [];
  const pending = new Map<string, { url: string; type: string }>();
  cdp.on("Network.requestWillBeSent", (event) => {
    pending.set(event.requestId, { url: event.request.url, type: event.type ?? "Other" });
  });
  cdp.on("Network.loadingFinished", (event) => {
    const request = pending.get(event.requestId);
    if (request) transfers.push({ ...request, bytes: event.encodedDataLength });
  });
  await cdp.send("Network.enable");
  // A cold load: what a first visit transfers.
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
  return { cdp, transfers };
}

/** Pixels of the chart's canvases in the candle colours: > 0 means bars were drawn. */
async function drawnCandlePixels(page: Page): Promise<{ up: number; down: number; hash: number }> {
  // No named inner functions: tsx would wrap them in a `__name` helper the page does not have.
  return page.evaluate(() => {
    const box = document.querySelector("#candle-chart") as HTMLElement;
    const style = getComputedStyle(box);
    const colours = ["--up", "--down"].map((name) => {
      const hex = style.getPropertyValue(name).trim().replace("#", "");
      return [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
    });
    const counts = [0, 0];
    let hash = 0;
    for (const canvas of Array.from(box.querySelectorAll("canvas"))) {
      if (canvas.width === 0 || canvas.height === 0) continue;
      const context = canvas.getContext("2d") as CanvasRenderingContext2D;
      const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 0; i < data.length; i += 4) {
        hash = (hash * 31 + (data[i] as number) + (data[i + 1] as number) * 7 + (data[i + 3] as number)) | 0;
        if (data[i + 3] !== 255) continue;
        for (let c = 0; c < 2; c++) {
          const rgb = colours[c] as number[];
          if (rgb.every((v, k) => Math.abs((data[i + k] as number) - v) < 8))
            counts[c] = (counts[c] as number) + 1;
        }
      }
    }
    return { up: counts[0] as number, down: counts[1] as number, hash };
  });
}

/** What went over the page's WebSockets: the stream's URL, frames sent, and pushes by kind. */
type StreamLog = {
  urls: string[];
  sent: Record<string, unknown>[];
  /** Messages received, by type. */
  received: Map<string, number>;
  /** Trade id (`hash:log_index`) → when its push arrived. */
  tradePushedAt: Map<string, number>;
};

function recordStream(page: Page): StreamLog {
  const log: StreamLog = { urls: [], sent: [], received: new Map(), tradePushedAt: new Map() };
  page.on("websocket", (ws) => {
    log.urls.push(ws.url());
    ws.on("framesent", (frame) => {
      if (typeof frame.payload === "string")
        log.sent.push(JSON.parse(frame.payload) as Record<string, unknown>);
    });
    ws.on("framereceived", (frame) => {
      if (typeof frame.payload !== "string") return;
      const message = JSON.parse(frame.payload) as {
        type: string;
        data?: { hash?: string; log_index?: number };
      };
      log.received.set(message.type, (log.received.get(message.type) ?? 0) + 1);
      if (message.type === "trade" && message.data) {
        log.tradePushedAt.set(`${message.data.hash}:${message.data.log_index}`, Date.now());
      }
    });
  });
  return log;
}

/** Trade ids of the REST trades answers the page received from now on. */
function recordRestTrades(page: Page): { ids: Set<string>; requests: number } {
  const seen = { ids: new Set<string>(), requests: 0 };
  page.on("response", async (response) => {
    if (new URL(response.url()).pathname !== "/api/v1/trades" || !response.ok()) return;
    seen.requests++;
    const trades = (await response.json().catch(() => [])) as { hash: string; log_index: number }[];
    for (const t of trades) seen.ids.add(`${t.hash}:${t.log_index}`);
  });
  return seen;
}

/** Fails the test on page errors, console errors (a CSP refusal among them) and outside requests. */
function watchPage(page: Page, origin: string) {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const text = message.text();
    // Chromium logs every 4xx fetch; the page handles them: a 403 in the wrong-key test, a 404
    // from a live candle refresh over a stretch without trades.
    if (/Failed to load resource: the server responded with a status of 40[34]/.test(text)) return;
    problems.push(`console error: ${text}`);
  });
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol === "data:" || url.protocol === "blob:") return;
    if (url.origin !== origin) problems.push(`request to another host: ${request.url()}`);
  });
  return problems;
}

describe("explorer page in Chromium", { skip: skipReason }, () => {
  let service: Service;
  let browser: Browser;
  const metrics: Record<string, unknown> = {};
  let tokenHash = "";

  before(async () => {
    mkdirSync(resultsDir, { recursive: true });
    const built = await buildWeb({ ifStale: true, quiet: true });
    assert.notEqual(built, "no-vite", "Vite is needed to build the page");
    const origin = process.env.EXPLORER_TEST_ORIGIN;
    service = origin ? await existingService(origin.replace(/\/$/, "")) : await startService();
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
  });

  after(async () => {
    await browser?.close().catch(() => {});
    if (service) await stopService(service);
    if (Object.keys(metrics).length) {
      writeFileSync(path.join(resultsDir, "explorer-metrics.json"), `${JSON.stringify(metrics, null, 2)}\n`);
    }
  });

  const newContext = (width: number, height: number, extra: Parameters<Browser["newContext"]>[0] = {}) =>
    browser.newContext({ viewport: { width, height }, locale: "en-US", timezoneId: "UTC", ...extra });

  it("lists top, trending and new pools per network on the home page, rows linking to token pages (1440 px)", async () => {
    const context = await newContext(1440, 900);
    const page = await context.newPage();
    const problems = watchPage(page, service.origin);
    // The page's own answers, to compare its rows with (the lists move with every block).
    const answers = new Map<string, Promise<PoolRecord[]>>();
    /** The bases' market records of each list, by the request's token ids. */
    const marketAnswers = new Map<string, Promise<MarketRecord[]>>();
    page.on("response", (response) => {
      const url = new URL(response.url());
      if (!response.ok()) return;
      if (url.pathname === "/v1/tokens/market") {
        marketAnswers.set(url.searchParams.get("tokenId") ?? "", response.json() as Promise<MarketRecord[]>);
      }
      if (url.pathname !== "/api/v1/pools/top") return;
      const key = `${url.searchParams.get("chain")}|${url.searchParams.get("sort")}`;
      answers.set(key, response.json() as Promise<PoolRecord[]>);
    });
    const networksResponse = page.waitForResponse((r) => new URL(r.url()).pathname === "/v1/networks");
    await page.goto(`${service.origin}/`);
    const networksAnswer = await networksResponse;
    assert.equal(networksAnswer.status(), 200, await networksAnswer.text());
    const networks = (await networksAnswer.json()) as { chain: number; name: string }[];
    assert.ok(networks.length > 0, "the demo has its network");
    assert.ok(await page.locator("#search-input").isVisible(), "the search box stays at the top");

    const lists = [
      ["top", "volume"],
      ["trending", "trending"],
      ["new", "new"],
    ] as const;
    let firstLink: { href: string; pairId: string } | undefined;
    const named: PoolRecord[] = [];
    for (const network of networks) {
      const section = page.locator(`section.network[data-chain="${network.chain}"]`);
      assert.match((await section.locator("h2").textContent()) ?? "", new RegExp(network.name));
      for (const [id, sort] of lists) {
        const card = `[data-testid=home-${id}][data-chain="${network.chain}"]`;
        await page.waitForSelector(`${card}:is([data-state=ready], [data-state=empty])`, { timeout: 20_000 });
        const rows = await page.locator(`${card} tbody tr`).evaluateAll((trs) =>
          trs.map((tr) => ({
            pairId: tr.getAttribute("data-pair-id") ?? "",
            protocol: tr.getAttribute("data-protocol") ?? "",
            hrefs: Array.from(tr.querySelectorAll("a")).map((a) => a.getAttribute("href") ?? ""),
            name: tr.querySelector(".pool-name")?.textContent ?? "",
            venue: tr.querySelector(".venue")?.textContent ?? "",
            price: tr.querySelectorAll("td")[1]?.firstChild?.textContent ?? "",
            change: tr.querySelectorAll("td")[1]?.querySelector(".change")?.textContent ?? "",
            liquidity: tr.querySelectorAll("td")[2]?.querySelector(".cell-sub")?.textContent ?? "",
          })),
        );
        const asked = await answers.get(`${network.chain}|${sort}`);
        assert.ok(asked, `the page asked for the ${sort} pools of chain ${network.chain}`);
        // Trending lists only pools with a USD liquidity: where a trader can trade.
        const answer = id === "trending" ? asked.filter((p) => (p.liquidity_usd ?? 0) > 0) : asked;
        assert.deepEqual(
          rows.map((r) => r.pairId),
          answer.map((p) => p.pair_id),
          `${id}: the rows are the API's answer, in its order`,
        );
        assert.equal(
          await page.getAttribute(card, "data-state"),
          answer.length === 0 ? "empty" : "ready",
          `${id}: an empty list says so`,
        );
        const window = id === "trending" ? "1h" : "24h";
        const bases = [...new Set(answer.map((p) => p.base_address))].join(",");
        const baseMarkets = new Map(
          ((await marketAnswers.get(bases)) ?? []).map((m) => [m.token_id, m] as const),
        );
        for (const [i, row] of rows.entries()) {
          const pool = answer[i] as PoolRecord;
          assert.equal(row.hrefs.length, 2, "both tokens of the pool link to their pages");
          for (const href of row.hrefs) {
            assert.match(href, /^#\/token\/0x[0-9a-f]{40}:\d+\?pair=0x(?:[0-9a-f]{40}|[0-9a-f]{64}):\d+$/);
            assert.ok(href.endsWith(`pair=${row.pairId}`), "opened on that pool");
          }
          // Named base/quote, the quote the reference token; the base's USD price and USD change.
          assert.equal(row.name, expectedName(pool), `${id}: ${row.pairId} is named base/quote`);
          assert.equal(row.name, pool.name, "as the API names it");
          assert.ok(row.hrefs[0]?.startsWith(`#/token/${pool.base_address}?`), "the base's link first");
          const base = pool.base_address === pool.token0_address ? 0 : 1;
          assert.equal(row.price, formatUsd(base === 0 ? pool.token0_usd_price : pool.token1_usd_price));
          const baseMarket = baseMarkets.get(pool.base_address);
          assert.ok(baseMarket, `${id}: the page asked for the market record of ${pool.name}'s base`);
          assert.equal(row.change, formatChange(baseMarket.windows[window]?.price_change).text);
          checkVenue(row.venue, pool);
          assert.equal(row.protocol, pool.protocol);
          if (id === "trending")
            assert.notEqual(row.liquidity, "liq. —", "a trending pool has a USD liquidity");
          named.push(pool);
        }
        if (id !== "trending") {
          // The demo has traded for days: its busiest and newest pools exist (trending depends on the hour).
          assert.ok(rows.length > 0, `${id}: pools listed on chain ${network.chain}`);
        }
        const first = rows[0];
        if (id === "top" && first && !firstLink)
          firstLink = { href: first.hrefs[0] as string, pairId: first.pairId };
      }
    }
    assert.ok(
      named.some(
        (p) =>
          p.token0_address === reference.stablecoins[0] &&
          p.token1_address === reference.wrappedNative &&
          p.name === "WETH/USDC",
      ),
      "USDC/WETH in address order is listed as WETH/USDC",
    );
    assert.ok(
      named.some((p) => /^0x[0-9a-f]{64}$/.test(p.pair_address)),
      "a V4 pool is listed (its id shortened)",
    );
    await page.screenshot({ path: path.join(resultsDir, "explorer-home-1440.png"), fullPage: true });

    // A row's token opens its page on that pool.
    assert.ok(firstLink);
    await page.locator(`a[href="${firstLink.href}"]`).first().click();
    await page.waitForURL((url) => url.hash === firstLink?.href);
    await page.waitForSelector('#candle-chart[data-state="ready"]', { timeout: 20_000 });
    assert.equal(
      await page.getAttribute("#candle-chart", "data-pair"),
      firstLink.pairId,
      "the pool of the row is charted",
    );
    await page.waitForSelector('.market-card:is([data-state="ready"], [data-state="empty"])', {
      timeout: 20_000,
    });
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("searches WETH, opens it, draws candles, switches interval, shows live trades (1440 px)", async () => {
    const context: BrowserContext = await newContext(1440, 900);
    const page = await context.newPage();
    const problems = watchPage(page, service.origin);
    const { transfers } = await recordTransfers(page);
    const stream = recordStream(page);

    await page.goto(`${service.origin}/`, { waitUntil: "load" });
    await page.waitForFunction(() => (document.getElementById("api-key") as HTMLInputElement).value !== "");
    assert.equal(await page.inputValue("#api-key"), service.demoKey, "the demo key is filled in");
    const pageBytes = transfers.reduce((sum, t) => sum + t.bytes, 0);
    metrics.pageWeight = {
      bytes: pageBytes,
      requests: transfers.map((t) => ({ url: new URL(t.url).pathname, type: t.type, bytes: t.bytes })),
    };

    // Search, typed like a person (the box debounces), and pick WETH.
    await page.locator("#search-input").pressSequentially("WETH", { delay: 40 });
    const option = page.locator('#search-results [role="option"]', {
      has: page.locator(".search-symbol", { hasText: /^WETH$/ }),
    });
    await option.first().waitFor({ state: "visible", timeout: 10_000 });
    const optionText = (await option.first().textContent()) ?? "";
    assert.match(optionText, /WETH/);
    assert.match(optionText, /\$[\d,]+\.\d\d/, "the result shows a USD price");
    await page.screenshot({ path: path.join(resultsDir, "explorer-search-1440.png") });

    const candlesResponse = page.waitForResponse(
      (r) => r.url().includes("/api/v1/candles") && r.request().method() === "GET",
    );
    const marketResponse = page.waitForResponse((r) => new URL(r.url()).pathname === "/v1/tokens/market");
    let pairsAnswer: Promise<PoolRecord[]> | undefined;
    page.on("response", (r) => {
      if (new URL(r.url()).pathname === "/api/v1/pairs" && r.ok())
        pairsAnswer = r.json() as Promise<PoolRecord[]>;
    });
    const clicked = Date.now();
    await option.first().click();
    await page.waitForURL(/#\/token\/0x[0-9a-f]{40}:\d+/);
    tokenHash = new URL(page.url()).hash;
    const response = await candlesResponse;
    assert.equal(response.status(), 200, `candles: ${await response.text()}`);
    const candles = (await response.json()) as unknown[];
    assert.ok(candles.length > 0, "the candles request returned bars");
    await page.waitForSelector('#candle-chart[data-state="ready"]', { timeout: 15_000 });
    metrics.clickToChartMs = Date.now() - clicked;
    const bars = Number(await page.getAttribute("#candle-chart", "data-bars"));
    assert.equal(bars, candles.length, "the chart holds every bar of the answer");
    await page.waitForFunction(() => document.querySelectorAll("#candle-chart canvas").length > 0);
    await page.waitForTimeout(200); // one paint
    const drawn = await drawnCandlePixels(page);
    assert.ok(drawn.up + drawn.down > 50, `candles drawn on the canvas (${JSON.stringify(drawn)})`);

    // Token facts and the line chart.
    assert.match((await page.textContent("[data-testid=token-price]")) ?? "", /^\$[\d,.]+$/);
    assert.match((await page.textContent(".facts")) ?? "", /Decimals\s*18/);
    await page.waitForSelector('.line-card[data-state="ready"]', { timeout: 15_000 });
    assert.ok(Number(await page.getAttribute("#line-chart", "data-points")) > 0, "the line chart has points");
    assert.ok((await page.locator("[data-testid=pairs] tbody tr").count()) > 0, "pairs are listed");

    // The market card: the four windows of /v1/tokens/market, as the API gave them.
    const marketAnswer = await marketResponse;
    assert.equal(marketAnswer.status(), 200);
    const [market] = (await marketAnswer.json()) as {
      windows: Record<string, { buys: number; sells: number; makers: number }>;
      pools: number;
    }[];
    assert.ok(market, "WETH has market figures");
    await page.waitForSelector('.market-card[data-state="ready"]', { timeout: 15_000 });
    const windowRows = await page.locator("[data-testid=windows] tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({
        window: tr.getAttribute("data-window"),
        cells: Array.from(tr.querySelectorAll("td")).map((td) => td.textContent ?? ""),
      })),
    );
    assert.deepEqual(
      windowRows.map((r) => r.window),
      ["5m", "1h", "6h", "24h"],
    );
    const day = windowRows[3];
    const count = (n: number) => n.toLocaleString("en-US");
    assert.ok(
      day?.cells[2]?.startsWith(
        `${count(market.windows["24h"]?.buys ?? -1)} / ${count(market.windows["24h"]?.sells ?? -1)}`,
      ),
      `24 h buys / sells shown as answered (${day?.cells[2]})`,
    );
    assert.equal(day?.cells[3], count(market.windows["24h"]?.makers ?? -1));
    assert.match(
      (await page.textContent("[data-testid=market-facts]")) ?? "",
      new RegExp(`Pools\\s*${market.pools}`),
    );

    // One 24 h change for the token: the header's is the market card's 24 h window, and each pair
    // whose base is the token shows it too (read at once: a refresh redraws them together).
    const tokenId = tokenHash.replace(/^#\/token\//, "").replace(/\?.*$/, "");
    const shown = await page.evaluate(() => ({
      header: document.querySelector("[data-testid=token-change]")?.textContent ?? "",
      card:
        document.querySelector("[data-testid=windows] tr[data-window='24h'] td.change")?.textContent ?? "",
      pairs: Array.from(document.querySelectorAll("[data-testid=pairs] tbody tr")).map((tr) => ({
        pairId: tr.getAttribute("data-pair-id") ?? "",
        protocol: tr.getAttribute("data-protocol") ?? "",
        name: tr.querySelector("button")?.textContent ?? "",
        venue: tr.querySelector(".venue")?.textContent ?? "",
        price: tr.querySelectorAll("td")[0]?.firstChild?.textContent ?? "",
        change: tr.querySelectorAll("td")[0]?.querySelector(".change")?.textContent ?? "",
      })),
      tradesPair: document.querySelector("[data-testid=trades-pair]")?.textContent ?? "",
    }));
    assert.match(shown.header, /^[+−]\d+\.\d\d%$/, "WETH has a 24 h change");
    assert.equal(shown.header, shown.card, "the header's 24 h change is the market card's");
    // Pairs named base/quote as the API names them, with the base's USD price and change, DEX and family.
    const pairs = (await pairsAnswer) ?? [];
    assert.deepEqual(
      shown.pairs.map((p) => p.pairId),
      pairs.map((p) => p.pair_id),
    );
    for (const [i, row] of shown.pairs.entries()) {
      const pair = pairs[i] as PoolRecord;
      assert.equal(row.name, expectedName(pair), `${row.pairId} is named base/quote`);
      assert.equal(row.name, pair.name);
      const base = pair.base_address === pair.token0_address ? 0 : 1;
      assert.equal(row.price, formatUsd(base === 0 ? pair.token0_price : pair.token1_price));
      if (pair.base_address === tokenId) assert.equal(row.change, shown.header, `${row.name}: WETH's change`);
      checkVenue(row.venue, pair);
      assert.equal(row.protocol, pair.protocol);
    }
    assert.ok(
      pairs.some((p) => p.name === "WETH/USDC" && p.token0_address === reference.stablecoins[0]),
      "USDC/WETH in address order is named WETH/USDC",
    );
    assert.ok(
      pairs.some((p) => /^0x[0-9a-f]{64}$/.test(p.pair_address) && p.hooks),
      "a V4 pool with a hook",
    );
    const chartedId = await page.getAttribute("#candle-chart", "data-pair");
    const charted = pairs.find((p) => p.pair_id === chartedId);
    assert.ok(
      shown.tradesPair.startsWith(`${charted?.name} · `),
      `the trades card names the pool: ${shown.tradesPair}`,
    );

    // Another interval: a new request, and a redraw.
    const hourly = page.waitForResponse(
      (r) => r.url().includes("/api/v1/candles") && r.url().includes("interval=1h"),
    );
    await page.locator('fieldset[data-group="interval"] label', { hasText: /^1h$/ }).click();
    const hourlyResponse = await hourly;
    assert.equal(hourlyResponse.status(), 200);
    const hourlyCandles = (await hourlyResponse.json()) as unknown[];
    assert.ok(hourlyCandles.length > 0);
    await page.waitForSelector('#candle-chart[data-state="ready"][data-interval="1h"]');
    assert.equal(Number(await page.getAttribute("#candle-chart", "data-bars")), hourlyCandles.length);
    await page.waitForTimeout(200);
    const redrawn = await drawnCandlePixels(page);
    assert.ok(redrawn.up + redrawn.down > 50, "hourly candles drawn");
    assert.notEqual(redrawn.hash, drawn.hash, "the canvas changed with the interval");
    assert.match(page.url(), /interval=1h/, "the choice is kept in the URL");

    // The other side of the pair: asset_id switches to the other token.
    const sideResponse = page.waitForResponse((r) => r.url().includes("/api/v1/candles"));
    const sideLabels = page.locator('fieldset[data-group="side"] label');
    const checked = await page.locator('fieldset[data-group="side"] input:checked').getAttribute("value");
    await sideLabels.nth(checked === "0" ? 1 : 0).click();
    const sideUrl = new URL((await sideResponse).url());
    const pairText = await page.getAttribute("#candle-chart", "data-pair");
    assert.ok(sideUrl.searchParams.get("asset_id"), "asset_id sent");
    await page.waitForSelector('#candle-chart[data-state="ready"]');
    assert.equal(sideUrl.searchParams.get("pair_id"), pairText);
    await sideLabels.nth(checked === "0" ? 0 : 1).click(); // back to WETH's side
    await page.waitForSelector('#candle-chart[data-state="ready"]');

    // Trades: rows, buys and sells told apart by label and colour.
    await page.waitForSelector('.trades-card[data-state="ready"]');
    const rows = page.locator("[data-testid=trades] tbody tr");
    assert.ok((await rows.count()) > 0, "the trades table has rows");
    const sides = await rows.evaluateAll((trs) =>
      trs.map((tr) => ({
        side: tr.getAttribute("data-side"),
        label: tr.querySelector(".side-badge")?.textContent ?? "",
        color: getComputedStyle(tr.querySelector(".side-badge") as Element).color,
      })),
    );
    for (const s of sides) assert.match(s.label, s.side === "buy" ? /Buy/ : /Sell/);
    const buy = sides.find((s) => s.side === "buy");
    const sell = sides.find((s) => s.side === "sell");
    if (buy && sell) assert.notEqual(buy.color, sell.color, "buys and sells have different colours");

    // Block explorer links where the network has one (the test's own demo is given one).
    const networks = (await (
      await fetch(`${service.origin}/v1/networks`, { headers: { "x-api-key": service.demoKey } })
    ).json()) as { chain: number; explorer_url: string | null }[];
    const [tokenAddress, tokenChain] = tokenHash
      .replace(/^#\/token\//, "")
      .replace(/\?.*$/, "")
      .split(":");
    const explorer = networks.find((n) => String(n.chain) === tokenChain)?.explorer_url ?? null;
    if (service.child)
      assert.equal(explorer, testExplorerUrl, "the demo's network has the explorer configured");
    if (explorer) {
      const firstTrade = rows.first();
      const hash = (await firstTrade.getAttribute("data-trade-id"))?.split(":")[0];
      assert.equal(await firstTrade.locator("a.ext").last().getAttribute("href"), `${explorer}/tx/${hash}`);
      assert.match(
        (await firstTrade.locator("a.ext").first().getAttribute("href")) ?? "",
        new RegExp(`^${explorer}/address/0x[0-9a-f]{40}$`),
      );
      assert.equal(
        await page.locator(".token-head a.ext").first().getAttribute("href"),
        `${explorer}/token/${tokenAddress}`,
      );
      assert.match(
        (await page.locator(".live-block a.ext").getAttribute("href")) ?? "",
        new RegExp(`^${explorer}/block/\\d+$`),
      );
      assert.equal(await firstTrade.locator("a.ext").last().getAttribute("rel"), "noopener noreferrer");
    }

    // Paging to older trades with the cursor.
    const before = await rows.count();
    const older = page.locator("[data-testid=load-older]");
    if (await older.isVisible()) {
      const olderResponse = page.waitForResponse((r) => r.url().includes("cursor="));
      await older.click();
      assert.equal((await olderResponse).status(), 200);
      await page.waitForFunction(
        (n) => document.querySelectorAll("[data-testid=trades] tbody tr").length > n,
        before,
      );
    }

    // Live through the stream: the indicator says so, the key went in the first message (never in
    // the URL), and a trade pushed over the WebSocket is put on top without any request.
    await page.waitForSelector("[data-testid=live-mode][data-mode=live]", { timeout: 20_000 });
    assert.equal(stream.urls.length, 1, "one stream connection");
    assert.match(stream.urls[0] ?? "", /^ws:\/\/127\.0\.0\.1:\d+\/v1\/stream$/);
    assert.ok(!(stream.urls[0] ?? "").includes(service.demoKey), "no key in the URL");
    assert.deepEqual(
      stream.sent[0],
      { type: "auth", api_key: service.demoKey },
      "the key is the first message",
    );
    assert.ok(
      stream.sent.some((m) => m.type === "subscribe" && m.channel === "trades"),
      "subscribed to the pair's trades",
    );
    await page.evaluate(() => {
      (window as unknown as { stayed: boolean }).stayed = true;
    });
    const rest = recordRestTrades(page);
    const newest = await rows.first().getAttribute("data-trade-id");
    const waitStarted = Date.now();
    await page.waitForFunction(
      (id) => document.querySelector("[data-testid=trades] tbody tr")?.getAttribute("data-trade-id") !== id,
      newest,
      { timeout: 60_000, polling: 100 },
    );
    const shownAt = Date.now();
    metrics.newTradeAfterMs = shownAt - waitStarted;
    const top = (await rows.first().getAttribute("data-trade-id")) ?? "";
    const pushedAt = stream.tradePushedAt.get(top);
    assert.ok(pushedAt !== undefined, `the new top trade ${top} arrived in a stream frame`);
    assert.ok(pushedAt <= shownAt, "before it was shown");
    assert.ok(!rest.ids.has(top), "and not in an answer of /api/v1/trades");
    metrics.streamPushToRowMs = shownAt - pushedAt;
    assert.equal(
      await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed),
      true,
      "no reload",
    );
    assert.equal(
      await rows
        .first()
        .getAttribute("class")
        .then((c) => c?.includes("is-new")),
      true,
    );
    // The current candle and the price follow the stream too.
    await page.waitForFunction(
      () => Number((document.querySelector("#candle-chart") as HTMLElement).dataset.pushed) > 0,
      null,
      {
        timeout: 60_000,
      },
    );
    await page.waitForFunction(
      () => Number((document.querySelector("[data-testid=token-price]") as HTMLElement).dataset.pushed) > 0,
      null,
      { timeout: 60_000 },
    );
    assert.ok((stream.received.get("candle") ?? 0) > 0 && (stream.received.get("price") ?? 0) > 0);
    metrics.streamMessages = Object.fromEntries(stream.received);

    // From the top: a full-page shot draws the sticky top bar where the page is scrolled to.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(resultsDir, "explorer-token-1440.png"), fullPage: true });
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("finds the native coin by search, its page charts its V4 pools; an unknown token is not live (1440 px)", async () => {
    const context = await newContext(1440, 900);
    const page = await context.newPage();
    const problems = watchPage(page, service.origin);
    await page.goto(`${service.origin}/`);
    await page.waitForFunction(() => (document.getElementById("api-key") as HTMLInputElement).value !== "");
    await page.locator("#search-input").pressSequentially("ETH", { delay: 40 });
    const option = page.locator('#search-results [role="option"]', {
      has: page.locator(".search-symbol", { hasText: /^ETH$/ }),
    });
    await option.first().waitFor({ state: "visible", timeout: 10_000 });
    await option.first().click();
    await page.waitForURL((url) => url.hash.startsWith(`#/token/${reference.native}`));
    await page.waitForSelector('#candle-chart[data-state="ready"]', { timeout: 20_000 });
    assert.equal(await page.textContent("#token-title"), "Ether");
    assert.match((await page.textContent("[data-testid=token-price]")) ?? "", /^\$[\d,]+\.\d\d$/);
    assert.equal(await page.locator(".token-sub a").count(), 0, "no block explorer page for the native coin");
    const rows = await page.locator("[data-testid=pairs] tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({
        name: tr.querySelector("button")?.textContent ?? "",
        venue: tr.querySelector(".venue")?.textContent ?? "",
      })),
    );
    const names = rows.map((r) => r.name);
    assert.ok(names.includes("ETH/USDC") && names.includes("FROG/ETH"), names.join(", "));
    for (const row of rows) assert.match(row.venue, /^Uniswap V4 · (?:.* · )?0x[0-9a-f]{4}…[0-9a-f]{4}$/);
    await page.screenshot({ path: path.join(resultsDir, "explorer-native-1440.png") });

    // A token the server does not know: no live status beside "Token unavailable".
    await page.goto(`${service.origin}/#/token/0x${"de".repeat(20)}:${reference.native.split(":")[1]}`);
    await page.waitForFunction(
      () => document.getElementById("token-title")?.textContent === "Token unavailable",
    );
    await page.waitForSelector('.candles-card:is([data-state="empty"], [data-state="error"])');
    assert.equal(await page.textContent("[data-testid=live-mode]"), "", "no live status");
    assert.equal(await page.getAttribute("[data-testid=live-mode]", "data-mode"), null);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("loads a token page cold and measures page weight and time to first chart", async () => {
    assert.ok(tokenHash, "the first test found the token page");
    const context = await newContext(1440, 900);
    const page = await context.newPage();
    const problems = watchPage(page, service.origin);
    const { transfers } = await recordTransfers(page);
    // The stream is down here (every connection closed at once): the page falls back to polling.
    let streamAttempts = 0;
    await context.routeWebSocket(/\/v1\/stream$/, (ws) => {
      streamAttempts++;
      void ws.close({ code: 1011, reason: "stream down (test)" });
    });
    await page.goto(`${service.origin}/${tokenHash.replace(/\?.*$/, "")}`);
    await page.waitForSelector('#candle-chart[data-state="ready"]', { timeout: 20_000 });
    const timing = await page.evaluate(() => {
      const chart = performance.getEntriesByName("tokenmarket:first-chart")[0];
      const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
      return {
        firstChartMs: chart ? Math.round(chart.startTime) : undefined,
        domContentLoadedMs: Math.round(nav.domContentLoadedEventEnd),
        loadMs: Math.round(nav.loadEventEnd),
      };
    });
    assert.ok(timing.firstChartMs !== undefined, "the page marked its first chart");
    const byKind = { page: 0, api: 0 };
    for (const t of transfers) {
      const p = new URL(t.url).pathname;
      if (p.startsWith("/v1/") || p.startsWith("/api/v1/")) byKind.api += t.bytes;
      else byKind.page += t.bytes;
    }
    metrics.coldTokenPage = {
      ...timing,
      bytesPage: byKind.page,
      bytesApiToFirstChart: byKind.api,
      requests: transfers.map((t) => ({ url: new URL(t.url).pathname, bytes: t.bytes })),
    };
    console.log(
      `# explorer: page weight ${(byKind.page / 1024).toFixed(1)} KiB transferred (HTML, JS, CSS, icon, config); ` +
        `API data to the first chart ${(byKind.api / 1024).toFixed(1)} KiB; ` +
        `time to first chart ${timing.firstChartMs} ms (DOMContentLoaded ${timing.domContentLoadedMs} ms)`,
    );
    assert.ok(byKind.page < 150 * 1024, `the page stays light (${byKind.page} bytes)`);

    // Polling while the stream is down: the indicator says so, and a new trade comes by REST.
    await page.waitForSelector("[data-testid=live-mode][data-mode=polling]", { timeout: 20_000 });
    await page.waitForSelector('.trades-card[data-state="ready"]');
    const rest = recordRestTrades(page);
    const rows = page.locator("[data-testid=trades] tbody tr");
    const newest = await rows.first().getAttribute("data-trade-id");
    await page.waitForFunction(
      (id) => document.querySelector("[data-testid=trades] tbody tr")?.getAttribute("data-trade-id") !== id,
      newest,
      { timeout: 60_000, polling: 250 },
    );
    const top = (await rows.first().getAttribute("data-trade-id")) ?? "";
    assert.ok(rest.ids.has(top), "the new trade came from a poll of /api/v1/trades");
    assert.ok(
      streamAttempts >= 2,
      `the page tried the stream again, with backoff (${streamAttempts} attempts)`,
    );
    assert.ok(streamAttempts < 10, `but not in a tight loop (${streamAttempts} attempts)`);

    // A hidden tab polls nothing; shown again, it catches up at once.
    const apiCalls: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/v1/")) apiCalls.push(r.url());
    });
    const setVisibility = (state: "hidden" | "visible") =>
      page.evaluate((value) => {
        Object.defineProperty(document, "visibilityState", { value, configurable: true });
        document.dispatchEvent(new Event("visibilitychange"));
      }, state);
    await setVisibility("hidden");
    await page.waitForTimeout(500); // a poll already on its way may still land
    apiCalls.length = 0;
    await page.waitForTimeout(7000);
    assert.equal(apiCalls.length, 0, `no request while the tab is hidden (${apiCalls.join(", ")})`);
    await setVisibility("visible");
    await page.waitForTimeout(500);
    assert.ok(
      apiCalls.some((u) => u.includes("/v1/tokens/metadata")),
      "a poll right when the tab is shown",
    );
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("fits a 375 px phone screen", async () => {
    const context = await newContext(375, 812, { isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const problems = watchPage(page, service.origin);
    await page.goto(`${service.origin}/${tokenHash.replace(/\?.*$/, "")}`);
    await page.waitForSelector('#candle-chart[data-state="ready"]', { timeout: 20_000 });
    await page.waitForSelector('.trades-card[data-state="ready"]');
    await page.waitForSelector('.line-card[data-state="ready"]');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scrolling of the page (${overflow} px too wide)`);
    const chartWidth = await page.evaluate(() => document.querySelector("#candle-chart")?.clientWidth ?? 0);
    assert.ok(chartWidth > 300, `the chart uses the width (${chartWidth} px)`);
    await page.screenshot({ path: path.join(resultsDir, "explorer-token-375.png"), fullPage: true });
    await page.screenshot({ path: path.join(resultsDir, "explorer-token-375-top.png") });
    await page.goto(`${service.origin}/#/`);
    await page.waitForSelector('[data-testid=home-top]:is([data-state="ready"], [data-state="empty"])', {
      timeout: 20_000,
    });
    await page.waitForSelector('[data-testid=home-new]:is([data-state="ready"], [data-state="empty"])');
    await page.waitForSelector('[data-testid=home-trending]:is([data-state="ready"], [data-state="empty"])');
    const homeOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(homeOverflow <= 0, `the home page does not scroll sideways (${homeOverflow} px too wide)`);
    await page.screenshot({ path: path.join(resultsDir, "explorer-home-375.png"), fullPage: true });
    await page.locator("#search-input").pressSequentially("US", { delay: 40 });
    await page.locator('#search-results [role="option"]').first().waitFor();
    await page.screenshot({ path: path.join(resultsDir, "explorer-search-375.png") });
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("shows the API's message for a wrong API key", async () => {
    const wrong = await fetch(`${service.origin}/v1/tokens/metadata?tokenId=${tokenHash.split("/")[2]}`, {
      headers: { "x-api-key": "tm_wrong_key" },
    });
    assert.equal(wrong.status, 403);
    const { message } = (await wrong.json()) as { message: string };

    const context = await newContext(1440, 900);
    const page = await context.newPage();
    const problems = watchPage(page, service.origin);
    await page.goto(`${service.origin}/${tokenHash.replace(/\?.*$/, "")}`);
    await page.waitForSelector('#candle-chart[data-state="ready"]', { timeout: 20_000 });
    await page.fill("#api-key", "tm_wrong_key");
    await page.click("#key-form button[type=submit]");
    const shown = page.locator("[data-testid=auth-error]");
    await shown.waitFor({ timeout: 10_000 });
    assert.equal(await shown.textContent(), message, "the banner shows the API's own message");
    await page.waitForSelector('#candle-chart[data-state="error"]');
    assert.ok(((await page.textContent(".candles-card .card-status")) ?? "").includes(message));
    assert.equal(
      await page.evaluate(() => localStorage.getItem("tokenmarket.apiKey")),
      "tm_wrong_key",
      "the typed key is kept",
    );
    await page.screenshot({ path: path.join(resultsDir, "explorer-wrong-key-1440.png") });

    // Back to the demo key from the banner.
    await page.getByRole("button", { name: "Use the demo key" }).click();
    await page.waitForSelector('#candle-chart[data-state="ready"]', { timeout: 20_000 });
    assert.equal(await page.locator("#banner").isHidden(), true);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
