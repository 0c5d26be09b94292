/**
 * The adaptive eth_getLogs block range: it doubles after each range that worked (up to `max`),
 * halves on RangeTooLargeError and shrinks when a range brought more logs than a batch should hold.
 */
export type RangeSizer = {
  /** Blocks to ask for next. */
  size(): number;
  /** A range of `blocks` blocks worked and brought `logs` logs; `clipped` when it was cut short by the head. */
  succeeded(blocks: number, logs: number, clipped: boolean): void;
  /** The provider refused a range of `blocks` blocks. Returns false when the range cannot shrink further. */
  tooLarge(blocks: number): boolean;
};

export function createRangeSizer(options: {
  initial: number;
  max: number;
  /** Logs per batch above which the next range is made smaller. */
  targetLogs: number;
}): RangeSizer {
  const max = Math.max(1, options.max);
  let size = Math.min(Math.max(1, options.initial), max);
  return {
    size: () => size,
    succeeded(blocks, logs, clipped) {
      if (logs > options.targetLogs) {
        size = Math.max(1, Math.min(size, Math.floor((blocks * options.targetLogs) / logs)));
      } else if (!clipped && blocks >= size) {
        size = Math.min(max, size * 2);
      }
    },
    tooLarge(blocks) {
      if (blocks <= 1) return false;
      size = Math.max(1, Math.floor(Math.min(size, blocks) / 2));
      return true;
    },
  };
}
