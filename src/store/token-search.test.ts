import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import type { Hex } from "../model/index.js";
import { insertChainRow } from "./chain-state.js";
import { insertTokens, searchTokensByText } from "./tokens.js";

const CHAINS = [921, 922];
const WORDS = ["Fin", "Finance", "Refinery", "Dolphin", "fin_x", "Ffin", "Coin"];

/** 90 tokens a chain: symbols and names that begin with, hold or lack the searched texts. */
function tokensOf(chain: number) {
  return Array.from({ length: 90 }, (_, i) => ({
    address: `0x${chain % 2 ? "f1" : "0a"}${i.toString(16).padStart(38, "0")}` as Hex,
    symbol: i % 9 === 0 ? "FIN" : `${(WORDS[i % WORDS.length] as string).toUpperCase().slice(0, 4)}${i}`,
    name: i % 11 === 3 ? null : `${WORDS[(i * 5) % WORDS.length]} ${i % 4 === 0 ? "Protocol" : "Token"}`,
    decimals: 18,
    totalSupply: null,
    liquidity: i % 6 === 0 ? null : (i * 7919) % 1000,
  }));
}

/** The search's order computed over every token: rank, liquidity, chain, address. */
function expected(text: string, limit: number): string[] {
  const t = text.toLowerCase();
  const addressToo = /^0(x[0-9a-f]*)?$/i.test(text);
  const rows = CHAINS.flatMap((chain) => tokensOf(chain).map((token) => ({ chain, ...token })))
    .filter(
      (r) =>
        (r.symbol ?? "").toLowerCase().includes(t) ||
        (r.name ?? "").toLowerCase().includes(t) ||
        (addressToo && r.address.startsWith(t)),
    )
    .map((r) => ({
      ...r,
      rank:
        (r.symbol ?? "").toLowerCase() === t
          ? 1
          : (r.symbol ?? "").toLowerCase().startsWith(t) ||
              (r.name ?? "").toLowerCase().startsWith(t) ||
              r.address.startsWith(t)
            ? 2
            : 3,
    }));
  rows.sort(
    (a, b) =>
      a.rank - b.rank ||
      (b.liquidity ?? Number.NEGATIVE_INFINITY) - (a.liquidity ?? Number.NEGATIVE_INFINITY) ||
      a.chain - b.chain ||
      (a.address < b.address ? -1 : 1),
  );
  return rows.slice(0, limit).map((r) => `${r.address}:${r.chain}`);
}

describe("token search by text (searchTokensByText)", () => {
  let t: TestDb;
  before(async () => {
    t = await createTestDb();
    for (const chain of CHAINS) {
      await insertChainRow(t.db, {
        chainId: chain,
        name: `search ${chain}`,
        genesisHash: "0x00",
        devnet: true,
      });
      const tokens = tokensOf(chain);
      await insertTokens(t.db, chain, tokens);
      for (const token of tokens.filter((x) => x.liquidity !== null)) {
        await t.db.query("INSERT INTO token_windows (chain_id, token, liquidity_usd) VALUES ($1, $2, $3)", [
          chain,
          token.address,
          token.liquidity,
        ]);
      }
    }
  });
  after(async () => {
    await t?.drop();
  });

  it("answers exact, then prefix, then substring matches by liquidity, whether the prefix matches fill the page or not", async () => {
    // "fin": more prefix matches than a page of 5, fewer than a page of 200; "nce", "olp": substring
    // only; "fin_": a LIKE wildcard taken literally; "0xf1", "0x0a0": address prefixes.
    for (const text of ["fin", "FIN", "fin_", "nce", "olp", "coin", "protocol", "0xf1", "0x0a0", "zzz"]) {
      for (const limit of [1, 5, 15, 40, 200]) {
        const rows = await searchTokensByText(t.db, { text, chains: CHAINS, limit });
        assert.deepEqual(
          rows.map((r) => `${r.address}:${r.chain_id}`),
          expected(text, limit),
          `${text}, limit ${limit}`,
        );
      }
    }
  });

  it("gives the same answers whichever way each rank finds its page", async () => {
    // Past `denseMatches` matches a rank walks the tokens in liquidity order; a walk of
    // `walkedTokens` that does not fill the page gives way to ranking every match. Small values
    // take each way for some texts and ranks (180 tokens, 30 of them without statistics): all
    // matches ranked, a page found by the walk, a walk that ran out. One-letter texts too.
    // One- and two-character texts go through migration 020's index of pieces: a space, a LIKE
    // wildcard taken literally, one that no name holds.
    const texts = [
      "fin",
      "FIN",
      "nce",
      "olp",
      "coin",
      "protocol",
      "token",
      "o",
      "n",
      "F",
      "fi",
      "OT",
      " p",
      "n_",
      "%",
      "xq",
      "0xf1",
      "zzz",
    ];
    for (const [denseMatches, walkedTokens] of [
      [1, 1],
      [3, 20],
      [5, 60],
      [10, 1000],
    ] as const) {
      for (const text of texts) {
        for (const limit of [1, 5, 15, 40]) {
          const rows = await searchTokensByText(t.db, {
            text,
            chains: CHAINS,
            limit,
            denseMatches,
            walkedTokens,
          });
          assert.deepEqual(
            rows.map((r) => `${r.address}:${r.chain_id}`),
            expected(text, limit),
            `${text}, limit ${limit}, dense ${denseMatches}, walk ${walkedTokens}`,
          );
        }
      }
    }
    // One chain of the two: the walk skips the other chain's tokens.
    const rows = await searchTokensByText(t.db, {
      text: "token",
      chains: [922],
      limit: 5,
      denseMatches: 3,
      walkedTokens: 200,
    });
    assert.deepEqual(
      rows.map((r) => `${r.address}:${r.chain_id}`),
      expected("token", 200)
        .filter((id) => id.endsWith(":922"))
        .slice(0, 5),
    );
  });
});
