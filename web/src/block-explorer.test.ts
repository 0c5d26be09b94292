import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { Network } from "./api.js";
import { explorerLinks, explorerOf } from "./block-explorer.js";

const hash = `0x${"ab".repeat(32)}`;
const address = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2";

describe("explorerLinks", () => {
  it("builds the tx, address, token and block links of the base URL", () => {
    const links = explorerLinks("https://etherscan.io/");
    assert.ok(links);
    assert.equal(links.tx(hash), `https://etherscan.io/tx/${hash}`);
    assert.equal(links.address(address), `https://etherscan.io/address/${address.toLowerCase()}`);
    assert.equal(links.token(`${address}:1`), `https://etherscan.io/token/${address.toLowerCase()}`);
    assert.equal(links.block(19_000_000), "https://etherscan.io/block/19000000");
    assert.equal(
      explorerLinks("https://polygonscan.com/explorer")?.block(1),
      "https://polygonscan.com/explorer/block/1",
    );
  });
  it("links nothing without a usable base or for values that are not what the path takes", () => {
    for (const base of [null, undefined, "", "javascript:alert(1)", "not a url", "ftp://x.example"]) {
      assert.equal(explorerLinks(base), undefined, String(base));
    }
    const links = explorerLinks("https://etherscan.io");
    assert.equal(links?.tx("../../evil"), undefined);
    assert.equal(links?.address("0x12?x=1"), undefined);
    assert.equal(links?.block(-1), undefined);
    assert.equal(links?.block(1.5), undefined);
    assert.equal(links?.block(null), undefined);
  });
  it("finds the explorer of a chain among the networks", () => {
    const net = (chain: number, explorer_url: string | null) => ({ chain, explorer_url }) as Network;
    const networks = [net(1, "https://etherscan.io"), net(31337, null)];
    assert.equal(explorerOf(networks, "1")?.block(5), "https://etherscan.io/block/5");
    assert.equal(explorerOf(networks, 31337), undefined);
    assert.equal(explorerOf(networks, 56), undefined);
  });
});
