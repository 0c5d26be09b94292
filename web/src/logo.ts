// Token logos. The page talks to no host but the service, so a logo is shown only when it is
// served by the service itself or inlined (`data:image/…`); other tokens get a monogram.

/** The logo URL to load, or undefined when loading it would reach another host. */
export function localLogoUrl(url: string | null | undefined, origin: string): string | undefined {
  if (!url) return undefined;
  const trimmed = url.trim();
  if (/^data:image\/(png|svg\+xml|webp|gif|jpeg);/i.test(trimmed)) return trimmed;
  try {
    const resolved = new URL(trimmed, origin);
    return resolved.origin === origin ? resolved.href : undefined;
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
