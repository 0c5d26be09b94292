import * as assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { parseConfig, projectRoot } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { loadProjectInfo } from "./project-info.js";

const USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const chain = {
  id: 1,
  name: "Ethereum",
  rpc: ["http://127.0.0.1:1"],
  dexes: [{ name: "Uniswap V2", protocol: "v2", factory: `0x${"1".repeat(40)}` }],
  referenceTokens: { stablecoins: [USDC], wrappedNative: `0x${"2".repeat(40)}` },
};

describe("loadProjectInfo", () => {
  it("takes logos from the Uniswap default token list", () => {
    const config = parseConfig({
      devnet: { enabled: false },
      tokenLists: ["@uniswap/default-token-list"],
      chains: [chain],
    });
    const book = loadProjectInfo({ config, logger: createSilentLogger(), root: projectRoot });
    const info = book.get(1, USDC.toUpperCase().replace("0X", "0x"));
    assert.match(info.logo_url ?? "", /^https:\/\//);
    assert.equal(info.website, null);
  });

  it("lets the curated file override the token list, field by field", () => {
    const root = mkdtempSync(path.join(tmpdir(), "tm-project-info-"));
    writeFileSync(path.join(root, "package.json"), "{}");
    writeFileSync(
      path.join(root, "list.json"),
      JSON.stringify({ tokens: [{ chainId: 1, address: USDC, logoURI: "https://example.org/usdc.png" }] }),
    );
    writeFileSync(
      path.join(root, "curated.json"),
      JSON.stringify({
        [`${USDC.toUpperCase().replace("0X", "0x")}:1`]: {
          website: "https://www.circle.com",
          twitter: "https://x.com/circle",
        },
        "not-an-id": { website: "https://ignored.example" },
        [`0x${"3".repeat(40)}:1`]: { logo_url: "ipfs://Qm..." },
      }),
    );
    const config = parseConfig({
      devnet: { enabled: false },
      tokenLists: ["list.json", "missing.json"],
      projectInfoFile: "curated.json",
      chains: [chain],
    });
    const book = loadProjectInfo({ config, logger: createSilentLogger(), root });
    assert.deepEqual(book.get(1, USDC), {
      website: "https://www.circle.com",
      logo_url: "https://example.org/usdc.png",
      twitter: "https://x.com/circle",
      discord: null,
    });
    assert.equal(book.get(1, `0x${"3".repeat(40)}`).logo_url, null, "ipfs URIs are not answered");
    assert.deepEqual(book.get(56, USDC), { website: null, logo_url: null, twitter: null, discord: null });
  });
});
