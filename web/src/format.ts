// Display formatting of prices, amounts, changes and times. Pure: no DOM, a fixed locale
// (en-US, the figures are USD) so that the page reads the same everywhere and tests are exact.

const locale = "en-US";

/** A dash for values the API could not derive honestly (`null`): never shown as 0. */
export const missing = "—";

function isNumber(value: number | null | undefined): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/**
 * A USD price: grouped with 2 decimals from 1 up, 4 significant digits below 1
 * (`$0.0001234`), so that a small-cap token's price is never shown as `$0.00`.
 */
export function formatUsd(value: number | null | undefined): string {
  if (!isNumber(value)) return missing;
  const abs = Math.abs(value);
  if (abs === 0) return "$0.00";
  if (abs >= 1) {
    return new Intl.NumberFormat(locale, {
      style: "currency",
      currency: "USD",
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
    }).format(value);
  }
  return new Intl.NumberFormat(locale, {
    style: "currency",
    currency: "USD",
    minimumSignificantDigits: 2,
    maximumSignificantDigits: 4,
  }).format(value);
}

/** A large USD figure (liquidity, volume) in compact form: `$1.23M`, `$950.5K`, `$12.34`. */
export function formatUsdCompact(value: number | null | undefined): string {
  if (!isNumber(value)) return missing;
  if (Math.abs(value) < 1000) return formatUsd(value);
  return new Intl.NumberFormat(locale, {
    style: "currency",
    currency: "USD",
    notation: "compact",
    minimumFractionDigits: 0,
    maximumFractionDigits: 2,
  }).format(value);
}

/** A token amount: 4 decimals from 1 up, 4 significant digits below, compact from a million (`1.5M`). */
export function formatAmount(value: number | null | undefined): string {
  if (!isNumber(value)) return missing;
  const abs = Math.abs(value);
  if (abs >= 1_000_000) {
    return new Intl.NumberFormat(locale, { notation: "compact", maximumFractionDigits: 2 }).format(value);
  }
  if (abs >= 1) return new Intl.NumberFormat(locale, { maximumFractionDigits: 4 }).format(value);
  if (abs === 0) return "0";
  return new Intl.NumberFormat(locale, { maximumSignificantDigits: 4 }).format(value);
}

/** A price of one token in another (no currency sign), with the precision its size needs. */
export function formatPrice(value: number | null | undefined): string {
  if (!isNumber(value)) return missing;
  const digits = pricePrecision(value);
  return new Intl.NumberFormat(locale, {
    minimumFractionDigits: Math.min(digits, 2),
    maximumFractionDigits: digits,
  }).format(value);
}

/** A total supply: grouped without decimals, compact from a billion. */
export function formatSupply(value: number | null | undefined): string {
  if (!isNumber(value)) return missing;
  if (Math.abs(value) >= 1e9) {
    return new Intl.NumberFormat(locale, { notation: "compact", maximumFractionDigits: 3 }).format(value);
  }
  return new Intl.NumberFormat(locale, { maximumFractionDigits: value < 1 ? 6 : 0 }).format(value);
}

export type ChangeDirection = "up" | "down" | "flat";

/** A 24 h percentage change (`5.2` means +5.2 %), with its direction for colouring. */
export function formatChange(value: number | null | undefined): { text: string; direction: ChangeDirection } {
  if (!isNumber(value)) return { text: missing, direction: "flat" };
  const rounded = Math.round(value * 100) / 100;
  if (rounded === 0) return { text: "0.00%", direction: "flat" };
  const sign = rounded > 0 ? "+" : "−";
  const body = new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(
    Math.abs(rounded),
  );
  return { text: `${sign}${body}%`, direction: rounded > 0 ? "up" : "down" };
}

/**
 * Decimal places a price needs to show 4 significant digits, between 2 and 12: the chart's
 * price scale uses it so that a 0.00001234 price is not flattened to 0.00.
 */
export function pricePrecision(value: number): number {
  const abs = Math.abs(value);
  if (!Number.isFinite(abs) || abs === 0 || abs >= 1) return 2;
  const leadingZeros = Math.floor(-Math.log10(abs));
  return Math.min(12, Math.max(2, leadingZeros + 4));
}

/** `0x1234…abcd` for an address or hash. */
export function shortHex(value: string, head = 6, tail = 4): string {
  if (value.length <= head + tail + 1) return value;
  return `${value.slice(0, head)}…${value.slice(-tail)}`;
}

/** A trade's time: `14:03:27` when on `now`'s UTC day, else `Mar 4 14:03` (UTC either way). */
export function formatTradeTime(iso: string, now: Date = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const time = date.toISOString().slice(11, 19);
  if (date.toISOString().slice(0, 10) === now.toISOString().slice(0, 10)) return time;
  const day = new Intl.DateTimeFormat(locale, { month: "short", day: "numeric", timeZone: "UTC" }).format(
    date,
  );
  return `${day} ${time.slice(0, 5)}`;
}

/** `just now`, `12 s ago`, `3 min ago`, `2 h ago`, `5 d ago` (days from 48 h). */
export function formatAge(then: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 2) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} d ago`;
}

/** Chain names known to the page; others are shown as `Chain <id>`. */
const chainNames: Record<string, string> = {
  "1": "Ethereum",
  "56": "BNB Chain",
  "137": "Polygon",
  "31337": "Devnet",
};

export function chainName(chain: string | number): string {
  return chainNames[String(chain)] ?? `Chain ${chain}`;
}
