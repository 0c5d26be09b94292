// Token logos. The page talks to no host but the service, save the logo hosts the service
// allows (`/web-config.json` `logoHosts`, the same list as the page's Content-Security-Policy
// `img-src`): a logo is shown when it is served by the service itself, inlined (`data:image/…`) or
// on an allowed https host; other tokens get a monogram, so the browser never refuses a logo.

/** The logo URL to load, or undefined when loading it would reach a host that is not allowed. */
export function allowedLogoUrl(
  url: string | null | undefined,
  origin: string,
  logoHosts: readonly string[] = [],
): string | undefined {
  if (!url) return undefined;
  const trimmed = url.trim();
  if (/^data:image\/(png|svg\+xml|webp|gif|jpeg);/i.test(trimmed)) return trimmed;
  try {
    const resolved = new URL(trimmed, origin);
    if (resolved.origin === origin) return resolved.href;
    return resolved.protocol === "https:" && logoHosts.includes(resolved.origin) ? resolved.href : undefined;
  } catch {
    return undefined;
  }
}

/** One or two letters of a symbol for the monogram, and a hue derived from it. */
export function monogram(symbol: string): { letters: string; hue: number } {
  const letters =
    symbol
      .replace(/[^A-Za-z0-9]/g, "")
      .slice(0, 2)
      .toUpperCase() || "?";
  let hash = 0;
  for (const char of symbol) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) % 360;
  return { letters, hue: hash };
}
