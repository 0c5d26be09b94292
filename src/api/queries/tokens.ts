import type { Queryable } from "../../store/db.js";
import type { ChainAddress } from "../ids.js";

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

const TOKEN_COLUMNS = `
  t.chain_id, t.address, t.name, t.symbol, t.decimals, t.total_supply,
  p.usd_price, s.price_change_24h AS price_change, s.liquidity_usd`;
const TOKEN_JOINS = `
  LEFT JOIN token_prices p ON p.chain_id = t.chain_id AND p.token = t.address
  LEFT JOIN token_stats s ON s.chain_id = t.chain_id AND s.token = t.address`;

/** The tokens among `ids` that are known, keyed by id `<address>:<chainId>`. */
export async function findTokens(
  db: Queryable,
  ids: readonly ChainAddress[],
): Promise<Map<string, TokenRow>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<TokenRow>(
    `SELECT ${TOKEN_COLUMNS}
     FROM unnest($1::int[], $2::text[]) AS q(chain_id, address)
     JOIN tokens t ON t.chain_id = q.chain_id AND t.address = q.address
     ${TOKEN_JOINS}`,
    [ids.map((i) => i.chainId), ids.map((i) => i.address)],
  );
  return new Map(rows.map((row) => [`${row.address}:${row.chain_id}`, row]));
}

/** Escapes LIKE's wildcards so user text matches literally (with ESCAPE '\'). */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Token search by text: exact symbol first, then prefix of symbol, name or address, then
 * substring; ties by USD liquidity over qualifying pools (so the real token comes before its
 * look-alikes), then by chain and address for a stable order. Case-insensitive.
 */
export async function searchTokensByText(
  db: Queryable,
  options: { text: string; chains: readonly number[]; limit: number },
): Promise<TokenRow[]> {
  const { rows } = await db.query<TokenRow>(
    `SELECT ${TOKEN_COLUMNS},
       CASE
         WHEN lower(t.symbol) = lower($1) THEN 1
         WHEN lower(t.symbol) LIKE lower($2) || '%' ESCAPE '\\'
           OR lower(t.name) LIKE lower($2) || '%' ESCAPE '\\'
           OR t.address LIKE lower($2) || '%' ESCAPE '\\' THEN 2
         ELSE 3
       END AS rank
     FROM tokens t
     ${TOKEN_JOINS}
     WHERE t.chain_id = ANY($3::int[])
       AND (lower(t.symbol) LIKE '%' || lower($2) || '%' ESCAPE '\\'
         OR lower(t.name) LIKE '%' || lower($2) || '%' ESCAPE '\\'
         OR t.address LIKE lower($2) || '%' ESCAPE '\\')
     ORDER BY rank, s.liquidity_usd DESC NULLS LAST, t.chain_id, t.address
     LIMIT $4`,
    [options.text, escapeLike(options.text), options.chains, options.limit],
  );
  return rows;
}

/** Tokens with exactly this address, on the given chains, by USD liquidity. */
export async function searchTokensByAddress(
  db: Queryable,
  options: { address: string; chains: readonly number[]; limit: number },
): Promise<TokenRow[]> {
  const { rows } = await db.query<TokenRow>(
    `SELECT ${TOKEN_COLUMNS}
     FROM tokens t
     ${TOKEN_JOINS}
     WHERE t.address = $1 AND t.chain_id = ANY($2::int[])
     ORDER BY s.liquidity_usd DESC NULLS LAST, t.chain_id
     LIMIT $3`,
    [options.address, options.chains, options.limit],
  );
  return rows;
}
