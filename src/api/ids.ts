import { badRequest } from "../internal/errors.js";
import type { Hex } from "../model/index.js";

/** A parsed token or pair id (`<address>:<chainId>`), address lowercased. */
export type ChainAddress = { chainId: number; address: Hex; id: string };

/** Most ids, wallets or chains one request may list (more is a 400). */
export const MAX_LIST_ITEMS = 100;

const ADDRESS = "0x[0-9a-fA-F]{40}";
/** A pool: a contract's address, or the 32-byte id of a pool inside a manager (Uniswap V4). */
const POOL = "0x(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})";
const CHAIN = "[1-9][0-9]{0,9}";
const ID = `${ADDRESS}:${CHAIN}`;
const PAIR_ID = `${POOL}:${CHAIN}`;
const list = (item: string) => `^ *${item} *(?:, *${item} *)*$`;

/** Most ids the market endpoints (/v1/tokens/market, /api/v1/pairs/market) take in one request. */
export const MAX_MARKET_IDS = 50;

/** A list of at most `max` items (a longer one does not match). */
const boundedList = (item: string, max: number) => `^ *${item} *(?:, *${item} *){0,${max - 1}}$`;

/** JSON-schema patterns of the parameters; the error formatter names each in plain words. */
export const patterns = {
  address: `^${ADDRESS}$`,
  id: `^${ID}$`,
  idList: list(ID),
  marketIdList: boundedList(ID, MAX_MARKET_IDS),
  pairId: `^${PAIR_ID}$`,
  marketPairIdList: boundedList(PAIR_ID, MAX_MARKET_IDS),
  addressList: list(ADDRESS),
  chain: `^${CHAIN}$`,
  chainList: list(CHAIN),
} as const;

const POOL_ID_PHRASE =
  "for a pool inside a manager such as Uniswap V4's, its pool id: 0x followed by 64 hex digits";

/** Plain-words description of what each pattern accepts, used in 400 messages. */
export const patternPhrases: Record<string, string> = {
  [patterns.address]: "an address: 0x followed by 40 hex digits",
  [patterns.id]: "an id <address>:<chainId>, for example 0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48:1",
  [patterns.idList]:
    "a comma-separated list of ids <address>:<chainId>, for example 0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48:1",
  [patterns.marketIdList]: `a comma-separated list of at most ${MAX_MARKET_IDS} ids <address>:<chainId>, for example 0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48:1`,
  [patterns.pairId]: `an id <address>:<chainId> (${POOL_ID_PHRASE}), for example 0xb4e16d0168e52d35cacd2c6185b44ac22d5bd1bd:1`,
  [patterns.marketPairIdList]: `a comma-separated list of at most ${MAX_MARKET_IDS} ids <address>:<chainId> (${POOL_ID_PHRASE}), for example 0xb4e16d0168e52d35cacd2c6185b44ac22d5bd1bd:1`,
  [patterns.addressList]: "a comma-separated list of addresses (0x followed by 40 hex digits)",
  [patterns.chain]: "a network id (a positive integer)",
  [patterns.chainList]: "a comma-separated list of network ids (positive integers)",
};

/** Longest string a list parameter of `items` items (default MAX_LIST_ITEMS) can be, with some room for spaces. */
export const maxListLength = (itemLength: number, items = MAX_LIST_ITEMS) => items * (itemLength + 3);

/** Most items of each list pattern, for the messages of a list that is too long. */
export const listLimits: Record<string, number> = {
  [patterns.idList]: MAX_LIST_ITEMS,
  [patterns.marketIdList]: MAX_MARKET_IDS,
  [patterns.marketPairIdList]: MAX_MARKET_IDS,
  [patterns.addressList]: MAX_LIST_ITEMS,
  [patterns.chainList]: MAX_LIST_ITEMS,
};

const idRegex = new RegExp(`^(${ADDRESS}):(${CHAIN})$`);
const pairIdRegex = new RegExp(`^(${POOL}):(${CHAIN})$`);
const addressRegex = new RegExp(`^${ADDRESS}$`);

/** Parses `<address>:<chainId>` with `regex`; throws a 400 naming `param` and saying `pattern` when malformed. */
function parseChainAddress(value: string, param: string, regex: RegExp, pattern: string): ChainAddress {
  const match = regex.exec(value.trim());
  if (!match) throw badRequest(`${param} must be ${patternPhrases[pattern]} (got ${quote(value)})`);
  const address = (match[1] as string).toLowerCase() as Hex;
  const chainId = Number(match[2]);
  return { chainId, address, id: `${address}:${chainId}` };
}

/** Parses `<address>:<chainId>`; throws a 400 naming `param` when malformed. */
export const parseId = (value: string, param: string): ChainAddress =>
  parseChainAddress(value, param, idRegex, patterns.id);

/**
 * Parses a pair id `<pool>:<chainId>`, the pool a contract's address or the 32-byte id of a pool
 * inside a manager; throws a 400 naming `param` when malformed.
 */
export const parsePairId = (value: string, param: string): ChainAddress =>
  parseChainAddress(value, param, pairIdRegex, patterns.pairId);

/** The 400 of an `asset_id` that is neither token of the pair `pair_id` names. */
export function notATokenOfPair(asset: ChainAddress, pair: ChainAddress): Error {
  return badRequest(`asset_id ${asset.id} is not one of the two tokens of pair ${pair.id}`);
}

/**
 * The side of `asset` in the pool of `pair`: 0 for its token0, 1 for its token1; else (another
 * token, or one of another chain) the 400 of `notATokenOfPair`.
 */
export function assetSide(
  pool: { chain_id: number; token0: string; token1: string },
  asset: ChainAddress,
  pair: ChainAddress,
): 0 | 1 {
  if (asset.chainId === pool.chain_id) {
    if (asset.address === pool.token0) return 0;
    if (asset.address === pool.token1) return 1;
  }
  throw notATokenOfPair(asset, pair);
}

/** Parses an address; throws a 400 naming `param` when malformed. */
export function parseAddress(value: string, param: string): Hex {
  const trimmed = value.trim();
  if (!addressRegex.test(trimmed)) {
    throw badRequest(`${param} must be ${patternPhrases[patterns.address]} (got ${quote(value)})`);
  }
  return trimmed.toLowerCase() as Hex;
}

/**
 * Splits a comma-separated list, parses each item, drops duplicates (first one kept, so answers
 * keep the request's order) and enforces MAX_LIST_ITEMS.
 */
export function parseList<T>(
  value: string,
  param: string,
  parseItem: (item: string, param: string) => T,
  keyOf: (item: T) => string,
): T[] {
  const items = value.split(",");
  if (items.length > MAX_LIST_ITEMS) {
    throw badRequest(`${param} lists ${items.length} items; at most ${MAX_LIST_ITEMS} are allowed`);
  }
  const seen = new Set<string>();
  const out: T[] = [];
  for (const raw of items) {
    const item = parseItem(raw, param);
    const key = keyOf(item);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  return out;
}

export const parseIdList = (value: string, param: string) => parseList(value, param, parseId, (i) => i.id);
export const parsePairIdList = (value: string, param: string) =>
  parseList(value, param, parsePairId, (i) => i.id);
export const parseAddressList = (value: string, param: string) =>
  parseList(value, param, parseAddress, (a) => a);

/** Parses a comma-separated list of network ids (deduplicated, request order). */
export function parseChainList(value: string, param: string): number[] {
  return parseList(
    value,
    param,
    (item) => {
      const trimmed = item.trim();
      if (!/^[1-9][0-9]{0,9}$/.test(trimmed)) {
        throw badRequest(`${param} must be ${patternPhrases[patterns.chainList]} (got ${quote(value)})`);
      }
      return Number(trimmed);
    },
    String,
  );
}

/** A user-given value quoted for an error message, cut short so a huge input stays a short message. */
export function quote(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const short = text === undefined ? "nothing" : text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return JSON.stringify(short);
}
