/** The number itself when finite, else null: JSON has no NaN or Infinity, and a float8 column must not hold them. */
export function finite(value: number | null | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}
