/** Table `tokens`: metadata and supply of every token of a stored pool; the API's token reads. */
import { createHash } from "node:crypto";
import type { Hex, Token } from "../model/index.js";
import { fromNumeric, type Queryable } from "./db.js";
import { bulkInsert, columnsOf, unnest } from "./unnest.js";

const TOKEN_COLUMNS = columnsOf<Token>({
  address: ["text", (t) => t.address],
  name: ["text", (t) => t.name],
  symbol: ["text", (t) => t.symbol],
  decimals: ["smallint", (t) => t.decimals],
  total_supply: ["numeric", (t) => t.totalSupply],
});

/** Inserts tokens not stored yet (their metadata is read once). */
export async function insertTokens(
  client: Queryable,
  chainId: number,
  tokens: readonly Token[],
): Promise<Hex[]> {
  const rows = await bulkInsert<Token, { address: Hex }>(
    client,
    {
      table: "tokens",
      chainId,
      columns: TOKEN_COLUMNS,
      computed: { metadata_at: "now()", supply_at: "now()" },
      tail: "ON CONFLICT DO NOTHING RETURNING address",
    },
    tokens,
  );
  return rows.map((r) => r.address);
}

export async function loadTokens(db: Queryable, chainId: number): Promise<Token[]> {
  const { rows } = await db.query<{
    address: Hex;
    name: string | null;
    symbol: string | null;
    decimals: number | null;
    total_supply: string | null;
  }>("SELECT address, name, symbol, decimals, total_supply FROM tokens WHERE chain_id = $1", [chainId]);
  return rows.map((r) => ({
    address: r.address,
    name: r.name,
    symbol: r.symbol,
    decimals: r.decimals,
    totalSupply: fromNumeric(r.total_supply),
  }));
}

/** Tokens whose totalSupply was read longer ago than `olderThanMs`, oldest first. */
export async function tokensDueForSupply(
  db: Queryable,
  chainId: number,
  olderThanMs: number,
  limit: number,
): Promise<Hex[]> {
  const { rows } = await db.query<{ address: Hex }>(
    `SELECT address FROM tokens WHERE chain_id = $1 AND (supply_at IS NULL OR supply_at < now() - make_interval(secs => $2))
     ORDER BY supply_at NULLS FIRST LIMIT $3`,
    [chainId, olderThanMs / 1000, limit],
  );
  return rows.map((r) => r.address);
}

type Supply = { address: Hex; totalSupply: bigint | null };

const SUPPLY_COLUMNS = columnsOf<Supply>({
  address: ["text", (s) => s.address],
  supply: ["numeric", (s) => s.totalSupply],
});

export async function updateTokenSupplies(
  db: Queryable,
  chainId: number,
  supplies: readonly Supply[],
): Promise<void> {
  if (supplies.length === 0) return;
  const s = unnest("s", SUPPLY_COLUMNS, supplies, 2);
  await db.query(
    `UPDATE tokens t SET total_supply = COALESCE(s.supply, t.total_supply), supply_at = now()
     FROM ${s.sql}
     WHERE t.chain_id = $1 AND t.address = s.address`,
    [chainId, ...s.params],
  );
}

/** Deletes the tokens no pool refers to any more (after a rollback deleted pools). */
export async function deleteUnusedTokens(client: Queryable, chainId: number): Promise<void> {
  await client.query(
    `DELETE FROM tokens t WHERE t.chain_id = $1 AND NOT EXISTS (
       SELECT 1 FROM pools p WHERE p.chain_id = t.chain_id AND (p.token0 = t.address OR p.token1 = t.address))`,
    [chainId],
  );
}

// ---------------------------------------------------------------------------------------------
// API reads

/** A token with its current USD price and 24 h figures, as the token records need it. */
export type TokenRow = {
  chain_id: number;
  address: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  /** Raw total supply (numeric as text). */
  total_supply: string | null;
  usd_price: number | null;
  price_change: number | null;
  liquidity_usd: number | null;
};

const TOKEN_ROW_COLUMNS = `
  t.chain_id, t.address, t.name, t.symbol, t.decimals, t.total_supply,
  p.usd_price, s.price_change_24h AS price_change, s.liquidity_usd`;
const TOKEN_ROW_JOINS = `
  LEFT JOIN token_prices p ON p.chain_id = t.chain_id AND p.token = t.address
  LEFT JOIN token_windows s ON s.chain_id = t.chain_id AND s.token = t.address`;

const ID_COLUMNS = columnsOf<{ chainId: number; address: string }>({
  chain_id: ["int", (i) => i.chainId],
  address: ["text", (i) => i.address],
});

/** The tokens among `ids` that are known, keyed by id `<address>:<chainId>`. */
export async function findTokens(
  db: Queryable,
  ids: readonly { chainId: number; address: string }[],
): Promise<Map<string, TokenRow>> {
  if (ids.length === 0) return new Map();
  const q = unnest("q", ID_COLUMNS, ids, 1);
  const { rows } = await db.query<TokenRow>(
    `SELECT ${TOKEN_ROW_COLUMNS}
     FROM ${q.sql}
     JOIN tokens t ON t.chain_id = q.chain_id AND t.address = q.address
     ${TOKEN_ROW_JOINS}`,
    q.params,
  );
  return new Map(rows.map((row) => [`${row.address}:${row.chain_id}`, row]));
}

/**
 * Text that can begin a stored address (`0x` and lowercase hex): only then is the address
 * compared, so that other text is looked up by the symbol's and name's trigram indexes alone
 * (migration 013) instead of also scanning every address.
 */
const ADDRESS_PREFIX = /^0(x[0-9a-f]*)?$/i;

/** Escapes LIKE's wildcards so user text matches literally (with ESCAPE '\'). */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Token search by text: exact symbol first, then prefix of symbol, name or address, then
 * substring; ties by USD liquidity over qualifying pools (so the real token comes before its
 * look-alikes), then by chain and address for a stable order. Case-insensitive. Substrings are
 * found through the trigram indexes of migration 013 (text of three characters or more).
 *
 * Most texts match few tokens: the first statement (`fewMatches`) ranks every match, the prefix
 * matches first and the substring matches only when those do not fill the page. When a rank has
 * more than DENSE_MATCHES matches, ranking them all would cost a lookup each ("coin": 27,000 of
 * 200,000 tokens, 150 ms; "a": 130,000, 1 s), and a second statement (`manyMatches`) takes its
 * page from the tokens walked in liquidity order instead.
 */
export async function searchTokensByText(
  db: Queryable,
  options: {
    text: string;
    chains: readonly number[];
    limit: number;
    /** DENSE_MATCHES and WALKED_TOKENS, for tests: small values take every way to a page. */
    denseMatches?: number;
    walkedTokens?: number;
  },
): Promise<TokenRow[]> {
  const sizes = {
    dense: Math.max(1, Math.floor(options.denseMatches ?? DENSE_MATCHES)),
    walk: Math.max(1, Math.floor(options.walkedTokens ?? WALKED_TOKENS)),
  };
  const values = [
    options.text,
    escapeLike(options.text),
    options.chains,
    options.limit,
    ADDRESS_PREFIX.test(options.text),
  ];
  // How the substring matches are found by a scan (the walk checks ANY_MATCH on its tokens).
  const anyMatch = SHORT_TEXT.test(options.text) ? SHORT_ANY_MATCH : ANY_MATCH;
  // One row at least: the matches' rows, or one of nulls when there is none; each says which
  // ranks were capped.
  const { rows } = await db.query<TokenRow & { prefixed_capped: boolean; inside_capped: boolean }>(
    named(fewMatches(sizes, anyMatch), values),
  );
  const capped = { prefixed: rows[0]?.prefixed_capped === true, inside: rows[0]?.inside_capped === true };
  if (!capped.prefixed && !capped.inside) {
    return rows
      .filter((row) => row.address !== null)
      .map(({ prefixed_capped: _p, inside_capped: _i, ...row }) => row);
  }
  return (await db.query<TokenRow>(named(manyMatches(sizes, capped, anyMatch), values))).rows;
}

/**
 * A search statement as a named (prepared) one, named after its text: planning the statements
 * takes 3–4 ms a search, several times their execution on a table of a few thousand tokens, and
 * a connection plans a named statement once its generic plan is as cheap as the custom ones.
 * The texts are few (the cap options and the short-text match), so their names are kept.
 */
function named(text: string, values: unknown[]): { name: string; text: string; values: unknown[] } {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `token-search-${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}
const statementNames = new Map<string, string>();

/**
 * The search when no rank has more than `sizes.dense` matches: the exact and prefix matches (up
 * to that many) ranked, then, when they do not fill the page, the substring matches (the same).
 * `capped` when a rank reached that many (its matches are then not ranked: manyMatches gives the
 * page), on every row; one row of nulls carries it when no match is ranked. The substring part's
 * condition on the prefix part is evaluated once, before it runs. The cap is a subquery so that
 * the planner, not knowing it, plans for a tenth of the estimated matches: with the constant it
 * chose a sequential scan for the first 1,000 of "coin"'s 27,000 matches, which lay at the table's
 * end (49 ms), over the trigram index (4.6 ms).
 */
function fewMatches(sizes: { dense: number }, anyMatch: string): string {
  const rank = `CASE
         WHEN ${EXACT} THEN 1
         WHEN ${PREFIX_START} THEN 2
         ELSE 3
       END`;
  return `WITH prefixed_found AS MATERIALIZED (
       SELECT ${PART_COLUMNS} FROM tokens t
       WHERE t.chain_id = ANY($3::int[]) AND (${PREFIX_MATCH})
       LIMIT (SELECT ${sizes.dense})
     ),
     prefixed AS MATERIALIZED (
       SELECT t.*, ${rank} AS rank, (${LIQUIDITY}) AS liquidity FROM prefixed_found t
       WHERE (SELECT count(*) FROM prefixed_found) < ${sizes.dense}
       ORDER BY rank, liquidity DESC NULLS LAST, chain_id, address LIMIT $4
     ),
     inside_found AS MATERIALIZED (
       SELECT ${PART_COLUMNS} FROM tokens t
       WHERE (SELECT count(*) FROM prefixed_found) < ${sizes.dense} AND (SELECT count(*) FROM prefixed) < $4
         AND t.chain_id = ANY($3::int[])
         AND (${anyMatch}) AND (${PREFIX_START}) IS NOT TRUE
       LIMIT (SELECT ${sizes.dense})
     )
     SELECT r.*, c.prefixed_capped, c.inside_capped
     FROM (
       SELECT (SELECT count(*) FROM prefixed_found) = ${sizes.dense} AS prefixed_capped,
         (SELECT count(*) FROM inside_found) = ${sizes.dense} AS inside_capped
     ) c
     LEFT JOIN LATERAL (
       SELECT ${TOKEN_ROW_COLUMNS}, t.rank
       FROM (
         SELECT * FROM prefixed
         UNION ALL
         (SELECT t.*, 3 AS rank, (${LIQUIDITY}) AS liquidity FROM inside_found t
          WHERE (SELECT count(*) FROM inside_found) < ${sizes.dense}
          ORDER BY liquidity DESC NULLS LAST, chain_id, address LIMIT $4)
       ) t
       ${TOKEN_ROW_JOINS}
       ORDER BY t.rank, t.liquidity DESC NULLS LAST, t.chain_id, t.address
       LIMIT $4
     ) r ON true`;
}

/**
 * The search when a rank has many matches. Each rank (exact symbol, prefix, substring) is a part
 * of its own, run only while the parts before it have not filled the page, and each part finds
 * its page in one of two ways (`rankedPart`):
 * - up to `sizes.dense` matches: all of them, each with its liquidity looked up, ranked;
 * - more: the tokens walked in liquidity order (migration 052's index), each checked against the
 *   text, until the page is full: a text inside many names fills it within the first few hundred
 *   or thousand. When the walk's `sizes.walk` tokens do not fill the page (the matches are all
 *   among the least liquid), every match is ranked.
 * A rank the first statement found `capped` walks at once, without counting its matches again.
 * Exact symbols are few (the symbol's index): they are all ranked.
 */
function manyMatches(
  sizes: { dense: number; walk: number },
  capped: { prefixed: boolean; inside: boolean },
  anyMatch: string,
): string {
  return `WITH exact AS MATERIALIZED (
       SELECT ${PART_COLUMNS}, (${LIQUIDITY}) AS liquidity, 1 AS rank FROM tokens t
       WHERE t.chain_id = ANY($3::int[]) AND ${EXACT}
       ORDER BY liquidity DESC NULLS LAST, t.chain_id, t.address LIMIT $4
     ),
     ${rankedPart(
       sizes,
       "prefixed",
       2,
       `(${PREFIX_MATCH}) AND (${EXACT}) IS NOT TRUE`,
       "(SELECT count(*) FROM exact) < $4",
       capped.prefixed,
     )},
     ${rankedPart(
       sizes,
       "inside",
       3,
       `(${ANY_MATCH}) AND (${PREFIX_START}) IS NOT TRUE`,
       "(SELECT count(*) FROM exact) + (SELECT count(*) FROM prefixed) < $4",
       capped.inside,
       `(${anyMatch}) AND (${PREFIX_START}) IS NOT TRUE`,
     )}
     SELECT ${TOKEN_ROW_COLUMNS}, t.rank
     FROM (
       SELECT * FROM exact UNION ALL SELECT * FROM prefixed UNION ALL SELECT * FROM inside
     ) t
     ${TOKEN_ROW_JOINS}
     ORDER BY t.rank, t.liquidity DESC NULLS LAST, t.chain_id, t.address
     LIMIT $4`;
}

/** The symbol is the text ($1): what ranks a match first. */
const EXACT = "lower(t.symbol) = lower($1)";

/** The text ($2, escaped) anywhere in the symbol or name. */
const INSIDE = `lower(t.symbol) LIKE '%' || lower($2) || '%' ESCAPE '\\'
  OR lower(t.name) LIKE '%' || lower($2) || '%' ESCAPE '\\'`;

/** The address begins with the text, for text that can begin one ($5). */
const ADDRESS_START = "($5 AND t.address LIKE lower($2) || '%' ESCAPE '\\')";

/** A match of the text anywhere in the symbol or name, or at the address's start. */
const ANY_MATCH = `${INSIDE}
  OR ${ADDRESS_START}`;

/**
 * ANY_MATCH for a text of one or two ASCII characters: the symbol's and name's part first looked up
 * in migration 020's index of their one- and two-character pieces (the trigram indexes need three
 * characters; without it such a text read every token). A text of one or two ASCII characters is
 * one of those pieces exactly when it is inside the lowercased symbol or name.
 */
const SHORT_ANY_MATCH = `(token_search_grams(t.symbol, t.name) @> ARRAY[lower($1)] AND (${INSIDE}))
  OR ${ADDRESS_START}`;

/** Texts that SHORT_ANY_MATCH serves: one or two printable ASCII characters. */
const SHORT_TEXT = /^[\x20-\x7e]{1,2}$/;

/** The symbol, name or address begins with the text: what ranks a match first or second. */
const PREFIX_START = `lower(t.symbol) LIKE lower($2) || '%' ESCAPE '\\'
  OR lower(t.name) LIKE lower($2) || '%' ESCAPE '\\'
  OR t.address LIKE lower($2) || '%' ESCAPE '\\'`;

/** The matches of ANY_MATCH that rank first or second (PREFIX_START, written for the indexes). */
const PREFIX_MATCH = `lower(t.symbol) LIKE lower($2) || '%' ESCAPE '\\'
  OR lower(t.name) LIKE lower($2) || '%' ESCAPE '\\'
  OR (t.address LIKE lower($2) || '%' ESCAPE '\\' AND ($5 OR ${ANY_MATCH}))`;

/**
 * Past this many matches of a rank, its page is found by walking the tokens in liquidity order
 * rather than by ranking every match (at about 5 µs a match: "a", 130,878 matches, took 700 ms).
 */
const DENSE_MATCHES = 1000;
/**
 * How many tokens the walk reads at most (about 5 µs each: "coin" walks about 7,000 in 34–50 ms)
 * before it gives up and every match is ranked: with DENSE_MATCHES matches among 200,000 tokens
 * spread evenly, a page of 15 lies within the first 3,000.
 */
const WALKED_TOKENS = 10_000;

/**
 * A token's liquidity, looked up (a subquery each: with the statistics joined over every match,
 * the planner hashed all 200,000 of them).
 */
const LIQUIDITY = "SELECT liquidity_usd FROM token_windows WHERE chain_id = t.chain_id AND token = t.address";

/** The columns of a token that a part gives, before its liquidity and rank. */
const PART_COLUMNS = "t.chain_id, t.address, t.name, t.symbol, t.decimals, t.total_supply";

/**
 * The CTEs of one rank's part, named `name`: the first `$4` tokens on the chains `$3` matching
 * `match`, in the answer's order, with their rank and liquidity; nothing unless `when` holds.
 * - `<name>_found`: up to DENSE_MATCHES matches, through the text's indexes;
 * - fewer than that: they are all the matches, ranked (each one's LIQUIDITY looked up);
 * - else `<name>_walked`: token_windows in the answer's order (liquidity, chain, address; migration
 *   052), each token checked against `match`, up to `$4` matches among the first WALKED_TOKENS.
 *   A token without statistics comes after every token with them (NULLS LAST), so a page filled
 *   by the walk is the answer's;
 * - else every match, ranked.
 */
function rankedPart(
  sizes: { dense: number; walk: number },
  name: string,
  rank: number,
  match: string,
  when: string,
  /** The first statement found more than `sizes.dense` matches of this rank: walk at once. */
  dense: boolean,
  /** `match` as the scans of the tokens write it (for the indexes); the walk checks `match`. */
  scanMatch = match,
): string {
  const liquidity = `(${LIQUIDITY})`;
  const order = "ORDER BY liquidity DESC NULLS LAST, chain_id, address LIMIT $4";
  const found = `${name}_found AS MATERIALIZED (
       SELECT ${PART_COLUMNS} FROM tokens t
       WHERE ${when} AND t.chain_id = ANY($3::int[]) AND (${scanMatch})
       LIMIT (SELECT ${sizes.dense})
     ),`;
  const many = dense ? when : `(SELECT count(*) FROM ${name}_found) = ${sizes.dense}`;
  const all = `(SELECT t.*, ${liquidity} AS liquidity FROM ${name}_found t
          WHERE (SELECT count(*) FROM ${name}_found) < ${sizes.dense}
          ${order})
         UNION ALL`;
  return `${dense ? "" : found}
     ${name}_walked AS MATERIALIZED (
       SELECT t.*, s.liquidity_usd AS liquidity
       FROM (
         SELECT chain_id, token, liquidity_usd FROM token_windows
         WHERE ${many} AND chain_id = ANY($3::int[])
         ORDER BY liquidity_usd DESC, chain_id, token
         LIMIT ${sizes.walk}
       ) s,
       LATERAL (
         SELECT ${PART_COLUMNS} FROM tokens t
         WHERE t.chain_id = s.chain_id AND t.address = s.token AND (${match})
         OFFSET 0
       ) t
       ORDER BY s.liquidity_usd DESC, s.chain_id, s.token
       LIMIT $4
     ),
     ${name} AS MATERIALIZED (
       SELECT *, ${rank} AS rank FROM (
         ${dense ? "" : all}
         (SELECT * FROM ${name}_walked WHERE (SELECT count(*) FROM ${name}_walked) = $4)
         UNION ALL
         (SELECT ${PART_COLUMNS}, ${liquidity} AS liquidity FROM tokens t
          WHERE ${many} AND (SELECT count(*) FROM ${name}_walked) < $4
            AND t.chain_id = ANY($3::int[]) AND (${scanMatch})
          ${order})
       ) part
     )`;
}

/** Tokens with exactly this address, on the given chains, by USD liquidity. */
export async function searchTokensByAddress(
  db: Queryable,
  options: { address: string; chains: readonly number[]; limit: number },
): Promise<TokenRow[]> {
  const { rows } = await db.query<TokenRow>(
    `SELECT ${TOKEN_ROW_COLUMNS}
     FROM tokens t
     ${TOKEN_ROW_JOINS}
     WHERE t.address = $1 AND t.chain_id = ANY($2::int[])
     ORDER BY s.liquidity_usd DESC NULLS LAST, t.chain_id
     LIMIT $3`,
    [options.address, options.chains, options.limit],
  );
  return rows;
}
