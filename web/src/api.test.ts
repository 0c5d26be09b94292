import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { ApiError, createApiClient, isoSeconds, parseFreshness } from "./api.js";
import { createApiKeyStore, keyStorageName } from "./api-key.js";
import { allowedLogoUrl, monogram } from "./logo.js";

type Call = { url: string; headers: Record<string, string> };

function fakeFetch(answer: (url: string) => Response) {
  const calls: Call[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    calls.push({ url, headers: (init?.headers ?? {}) as Record<string, string> });
    return answer(url);
  };
  return { calls, fetch: fetch as typeof globalThis.fetch };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

describe("createApiClient", () => {
  it("sends the current key and the spec's parameter names", async () => {
    let key = "k1";
    const f = fakeFetch(() => json([]));
    const api = createApiClient({ getKey: () => key, fetch: f.fetch });
    await api.search("WETH");
    key = "k2";
    await api.candles({
      assetId: "0xa:1",
      pairId: "0xb:1",
      interval: "5m",
      from: new Date("2026-03-04T10:00:00.123Z"),
      to: new Date("2026-03-04T11:00:00Z"),
    });
    assert.equal(f.calls[0]?.url, "/v1/tokens/search?searchString=WETH");
    assert.equal(f.calls[0]?.headers["x-api-key"], "k1");
    assert.equal(
      f.calls[1]?.url,
      "/api/v1/candles?asset_id=0xa%3A1&pair_id=0xb%3A1&from=2026-03-04T10%3A00%3A00Z&to=2026-03-04T11%3A00%3A00Z&interval=5m",
    );
    assert.equal(f.calls[1]?.headers["x-api-key"], "k2");
  });
  it("keeps the API's error message and status", async () => {
    const f = fakeFetch(() =>
      json({ statusCode: 403, error: "Forbidden", message: "the API key is unknown or revoked" }, 403),
    );
    const api = createApiClient({ getKey: () => "bad", fetch: f.fetch });
    await assert.rejects(api.metadata("0xa:1"), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 403);
      assert.equal(error.message, "the API key is unknown or revoked");
      return true;
    });
  });
  it("falls back to the status line when the body is not the API's", async () => {
    const f = fakeFetch(
      () => new Response("<html>bad gateway</html>", { status: 502, statusText: "Bad Gateway" }),
    );
    const api = createApiClient({ getKey: () => "k", fetch: f.fetch });
    await assert.rejects(api.pairs("0xa:1"), /502 Bad Gateway/);
  });
  it("says when the service cannot be reached", async () => {
    const api = createApiClient({
      getKey: () => "k",
      fetch: async () => {
        throw new TypeError("Failed to fetch");
      },
    });
    await assert.rejects(api.lineChart("0xa:1", 7), (error: unknown) => {
      assert.ok(error instanceof ApiError && error.status === 0);
      assert.match(error.message, /Cannot reach the service: Failed to fetch/);
      return true;
    });
  });
  it("reads the trades cursor and the freshness headers", async () => {
    const f = fakeFetch((url) =>
      url.startsWith("/api/v1/trades")
        ? json([], 200, { "x-next-cursor": "abc" })
        : json({ name: "Wrapped Ether" }, 200, {
            "x-indexed-block": "1=5,31337=1234",
            "x-indexed-at": "31337=2026-03-04T10:00:00Z",
          }),
    );
    const api = createApiClient({ getKey: () => "k", fetch: f.fetch });
    const page = await api.trades({ assetId: "0xa:1", pairId: "0xb:1", limit: 20, cursor: "prev" });
    assert.equal(page.nextCursor, "abc");
    assert.match(f.calls[0]?.url ?? "", /limit=20&cursor=prev$/);
    const meta = await api.metadata("0xa:31337");
    assert.deepEqual(meta.freshness, { block: 1234, at: "2026-03-04T10:00:00Z" });
  });
  it("gets the demo key without an API key, and nothing when the page has none", async () => {
    const ok = createApiClient({
      getKey: () => "",
      fetch: fakeFetch(() => json({ demoKey: "tm_demo" })).fetch,
    });
    assert.deepEqual(await ok.webConfig(), { demoKey: "tm_demo" });
    const missing = createApiClient({ getKey: () => "", fetch: fakeFetch(() => json({}, 404)).fetch });
    assert.deepEqual(await missing.webConfig(), {});
  });
});

describe("parseFreshness", () => {
  it("reads one network's entry", () => {
    assert.deepEqual(parseFreshness("1=10, 56=20", null, "56"), { block: 20, at: undefined });
    assert.deepEqual(parseFreshness(null, null, "1"), { block: undefined, at: undefined });
    assert.deepEqual(parseFreshness("1=", null, "1"), { block: undefined, at: undefined });
  });
  it("formats request times with seconds", () => {
    assert.equal(isoSeconds(new Date("2026-03-04T10:00:00.999Z")), "2026-03-04T10:00:00Z");
  });
});

describe("createApiKeyStore", () => {
  const memory = () => {
    const items = new Map<string, string>();
    return {
      items,
      getItem: (k: string) => items.get(k) ?? null,
      setItem: (k: string, v: string) => void items.set(k, v),
      removeItem: (k: string) => void items.delete(k),
    };
  };
  it("uses the demo key until one is typed, and keeps the typed one", () => {
    const storage = memory();
    const keys = createApiKeyStore(storage, "demo");
    assert.equal(keys.get(), "demo");
    assert.equal(keys.isDemo(), true);
    keys.set(" mine ");
    assert.equal(keys.get(), "mine");
    assert.equal(storage.items.get(keyStorageName), "mine");
    assert.equal(createApiKeyStore(storage, "demo").get(), "mine", "a stored key wins over the demo key");
    keys.set("");
    assert.equal(keys.get(), "demo", "clearing the key goes back to the demo key");
    assert.equal(storage.items.has(keyStorageName), false);
  });
  it("works without storage", () => {
    const keys = createApiKeyStore(undefined, undefined);
    keys.set("k");
    assert.equal(keys.get(), "k");
  });
});

describe("logos", () => {
  const origin = "http://127.0.0.1:8080";
  it("loads only logos of the service itself or inlined ones", () => {
    assert.equal(allowedLogoUrl("/logos/weth.svg", origin), "http://127.0.0.1:8080/logos/weth.svg");
    assert.equal(allowedLogoUrl("data:image/svg+xml;base64,AAAA", origin), "data:image/svg+xml;base64,AAAA");
    assert.equal(allowedLogoUrl("https://raw.githubusercontent.com/x.png", origin), undefined);
    assert.equal(allowedLogoUrl("ipfs://Qm", origin), undefined);
    assert.equal(allowedLogoUrl(null, origin), undefined);
  });
  it("loads logos of the allowed token-list hosts, over https only", () => {
    const hosts = ["https://assets.coingecko.com"];
    const logo = "https://assets.coingecko.com/coins/images/6319/thumb/usdc.png";
    assert.equal(allowedLogoUrl(logo, origin, hosts), logo);
    assert.equal(allowedLogoUrl("http://assets.coingecko.com/x.png", origin, hosts), undefined);
    assert.equal(allowedLogoUrl("https://assets.coingecko.com.evil.example/x.png", origin, hosts), undefined);
    assert.equal(allowedLogoUrl("https://raw.githubusercontent.com/x.png", origin, hosts), undefined);
  });
  it("makes a monogram", () => {
    assert.equal(monogram("WETH").letters, "WE");
    assert.equal(monogram("$").letters, "?");
    assert.equal(monogram("USDC").hue, monogram("USDC").hue);
  });
});
