/** Table `tokens`: metadata and supply of every token of a stored pool; the API's token reads. */
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
  LEFT JOIN token_stats s ON s.chain_id = t.chain_id AND s.token = t.address`;

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
 */
export async function searchTokensByText(
  db: Queryable,
  options: { text: string; chains: readonly number[]; limit: number },
): Promise<TokenRow[]> {
  const values = [
    options.text,
    escapeLike(options.text),
    options.chains,
    options.limit,
    ADDRESS_PREFIX.test(options.text),
  ];
  // The exact and prefix matches come before every other match: when they fill the page, it is
  // theirs, and the substring matches are not ranked at all (the second part's condition on the
  // first is evaluated once, before it runs). A text that begins many names and is inside many
  // more ("FIN": 445 prefix matches, 27,775 substring matches among 200,000 tokens) took 130 ms
  // when every match was ranked, against a few ms for the prefix matches alone.
  const { rows } = await db.query<TokenRow>(
    `WITH prefixed AS MATERIALIZED (${searchPart(PREFIX_MATCH, "rank, ")})
     SELECT ${TOKEN_ROW_COLUMNS}, t.rank
     FROM (
       SELECT * FROM prefixed
       UNION ALL
       (${searchPart(`(${ANY_MATCH}) AND (${PREFIX_START}) IS NOT TRUE AND (SELECT count(*) FROM prefixed) < $4`, "")})
     ) t
     ${TOKEN_ROW_JOINS}
     ORDER BY t.rank, t.liquidity DESC NULLS LAST, t.chain_id, t.address
     LIMIT $4`,
    values,
  );
  return rows;
}

/** A match of the text ($2, escaped) anywhere in the symbol or name, or ($5) at the address's start. */
const ANY_MATCH = `lower(t.symbol) LIKE '%' || lower($2) || '%' ESCAPE '\\'
  OR lower(t.name) LIKE '%' || lower($2) || '%' ESCAPE '\\'
  OR ($5 AND t.address LIKE lower($2) || '%' ESCAPE '\\')`;

/** The symbol, name or address begins with the text: what ranks a match first or second. */
const PREFIX_START = `lower(t.symbol) LIKE lower($2) || '%' ESCAPE '\\'
  OR lower(t.name) LIKE lower($2) || '%' ESCAPE '\\'
  OR t.address LIKE lower($2) || '%' ESCAPE '\\'`;

/** The matches of ANY_MATCH that rank first or second (PREFIX_START, written for the indexes). */
const PREFIX_MATCH = `lower(t.symbol) LIKE lower($2) || '%' ESCAPE '\\'
  OR lower(t.name) LIKE lower($2) || '%' ESCAPE '\\'
  OR (t.address LIKE lower($2) || '%' ESCAPE '\\' AND ($5 OR ${ANY_MATCH}))`;

/**
 * The first `$4` tokens matching `match` in the answer's order (`order`: "rank, " where the part
 * holds several ranks), each with its rank and only its liquidity looked up (a subquery each): with
 * the price's and statistics' joins over every match, the planner hashed all 200,000 prices and
 * statistics when it could not use a parallel worker. The page's rows are joined to them after.
 */
function searchPart(match: string, order: string): string {
  return `SELECT t.chain_id, t.address, t.name, t.symbol, t.decimals, t.total_supply,
       CASE
         WHEN lower(t.symbol) = lower($1) THEN 1
         WHEN ${PREFIX_START} THEN 2
         ELSE 3
       END AS rank,
       (SELECT liquidity_usd FROM token_stats WHERE chain_id = t.chain_id AND token = t.address) AS liquidity
     FROM tokens t
     WHERE t.chain_id = ANY($3::int[]) AND (${match})
     ORDER BY ${order}liquidity DESC NULLS LAST, t.chain_id, t.address
     LIMIT $4`;
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
