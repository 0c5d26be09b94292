/** Table `token_prices`: the current USD price of each token with its provenance. */
import { finite } from "../model/index.js";
import { chunks, iso, type Queryable } from "./db.js";

export type TokenPriceRow = {
  token: string;
  usdPrice: number | null;
  blockNumber: number;
  /** ms */
  blockTime: number;
  provenance: unknown;
  /** `JSON.stringify(provenance)` when the caller has it already. */
  provenanceJson?: string;
};

/**
 * Upserts token prices; rows equal to the stored ones are not rewritten. Returns the tokens
 * whose row was inserted or changed. One statement per 5,000 rows over one JSON document, into
 * which a row's provenance goes as the JSON text the caller has already (`provenanceJson`).
 * (Sent instead as `unnest` arrays, the driver's escaping of the provenance texts cost 3× the
 * CPU; as an `UPDATE … FROM unnest(…)` of the rows known to exist, Postgres hashed the whole table,
 * slower than the upsert's index probes from tens of thousands of rows on.)
 */
export async function saveTokenPrices(
  db: Queryable,
  chainId: number,
  rows: readonly TokenPriceRow[],
): Promise<string[]> {
  const changed: string[] = [];
  for (const part of chunks(rows)) {
    // JSON.stringify of each field, as of the whole row: the same document, the same values.
    const json = `[${part
      .map(
        (r) =>
          `{"token":${JSON.stringify(r.token)},"usd_price":${JSON.stringify(finite(r.usdPrice))},"block_number":${JSON.stringify(r.blockNumber)},"block_time":${JSON.stringify(iso(r.blockTime))},"provenance":${r.provenanceJson ?? JSON.stringify(r.provenance)}}`,
      )
      .join(",")}]`;
    const result = await db.query<{ token: string }>(
      `INSERT INTO token_prices (chain_id, token, usd_price, block_number, block_time, provenance)
       SELECT $1, r.token, r.usd_price, r.block_number, r.block_time, r.provenance
       FROM jsonb_to_recordset($2::jsonb)
         AS r(token text, usd_price float8, block_number bigint, block_time timestamptz, provenance jsonb)
       ON CONFLICT (chain_id, token) DO UPDATE SET usd_price = EXCLUDED.usd_price,
         block_number = EXCLUDED.block_number, block_time = EXCLUDED.block_time, provenance = EXCLUDED.provenance
       WHERE (token_prices.usd_price, token_prices.block_number, token_prices.block_time, token_prices.provenance)
         IS DISTINCT FROM (EXCLUDED.usd_price, EXCLUDED.block_number, EXCLUDED.block_time, EXCLUDED.provenance)
       RETURNING token`,
      [chainId, json],
    );
    for (const r of result.rows) changed.push(r.token);
  }
  return changed;
}

/** Every stored USD price of a chain (the pricing's market in memory mirrors them). */
export async function loadTokenUsdPrices(
  db: Queryable,
  chainId: number,
): Promise<Map<string, number | null>> {
  const { rows } = await db.query<{ token: string; usd_price: number | null }>(
    "SELECT token, usd_price FROM token_prices WHERE chain_id = $1",
    [chainId],
  );
  return new Map(rows.map((r) => [r.token, r.usd_price]));
}

/** Deletes the price rows of tokens not in `keep`; returns the deleted tokens. */
export async function deleteTokenPricesExcept(
  db: Queryable,
  chainId: number,
  keep: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ token: string }>(
    "DELETE FROM token_prices WHERE chain_id = $1 AND NOT (token = ANY($2::text[])) RETURNING token",
    [chainId, [...keep]],
  );
  return rows.map((r) => r.token);
}

/** A token's stored market figures: price (with provenance) and 24-hour statistics. */
export type TokenMarket = {
  token: string;
  usdPrice: number | null;
  /** The block (and its time) of the latest pool state the price reflects. */
  priceBlock: number | null;
  priceTime: Date | null;
  provenance: unknown;
  priceChange24h: number | null;
  volumeUsd24h: number;
  liquidityUsd: number;
};

/** Stored prices and statistics of tokens of a chain; tokens without a row are left out. */
export async function getTokenMarkets(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
): Promise<Map<string, TokenMarket>> {
  if (tokens.length === 0) return new Map();
  const { rows } = await db.query<{
    token: string;
    usd_price: number | null;
    block_number: number | null;
    block_time: Date | null;
    provenance: unknown;
    price_change_24h: number | null;
    volume_usd_24h: number | null;
    liquidity_usd: number | null;
  }>(
    `SELECT q.token, p.usd_price, p.block_number, p.block_time, p.provenance, s.price_change_24h,
       s.volume_usd_24h, s.liquidity_usd
     FROM unnest($2::text[]) AS q(token)
     LEFT JOIN token_prices p ON p.chain_id = $1 AND p.token = q.token
     LEFT JOIN token_windows s ON s.chain_id = $1 AND s.token = q.token
     WHERE p.token IS NOT NULL OR s.token IS NOT NULL`,
    [chainId, tokens.map((t) => t.toLowerCase())],
  );
  return new Map(
    rows.map((r) => [
      r.token,
      {
        token: r.token,
        usdPrice: r.usd_price,
        priceBlock: r.block_number,
        priceTime: r.block_time,
        provenance: r.provenance,
        priceChange24h: r.price_change_24h,
        volumeUsd24h: r.volume_usd_24h ?? 0,
        liquidityUsd: r.liquidity_usd ?? 0,
      },
    ]),
  );
}
