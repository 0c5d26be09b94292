/**
 * The wait before try number `attempt` (1-based) of something that failed: doubling from
 * `first` up to `max`, then jittered down to between half and all of it, so that chains (and
 * processes) failing together do not come back together.
 */
export function backoffDelayMs(
  attempt: number,
  [first, max]: readonly [number, number],
  random = Math.random,
) {
  const ceiling = Math.min(max, first * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * (0.5 + random() / 2));
}
