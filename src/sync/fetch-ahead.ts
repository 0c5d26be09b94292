import type { Hex } from "../decode/types.js";
import type { BlockHeader } from "../rpc/types.js";
import type { RangeData, RangeReorg } from "./fetch-range.js";

/** A fetched range, or why not: a range error, or a range that does not continue the one before. */
export type Fetched =
  | { ok: true; data: RangeData | RangeReorg }
  | { ok: false; error: unknown; from: number; to: number };

/** One range asked of the node, in order. */
type Job = { from: number; to: number; result: Promise<Fetched>; logs: number; done: boolean };

export type FetchAheadArgs = {
  /**
   * Fetches one range (fetch-range.ts): `parentHash` is block from − 1's (a promise while the range
   * before is being read), `newPools` were created in the queued ranges before it; `onLogs` is
   * called once its logs are read.
   */
  fetch(range: {
    from: number;
    to: number;
    target: number;
    parentHash: Hex | null | Promise<Hex | null>;
    newPools: ReadonlySet<Hex>;
    onLogs: (found: { logs: number; newPools: readonly Hex[] }) => void;
  }): Promise<RangeData | RangeReorg>;
  /** Blocks of the next range (the adaptive sizer). */
  size(): number;
  /** A range worked (the sizer grows or shrinks the next one). */
  succeeded(blocks: number, logs: number, clipped: boolean): void;
  /** At most this many ranges fetched and not yet taken. */
  maxRanges: number;
  /** Fetching pauses while the ranges fetched and not yet taken hold this many logs or more. */
  maxLogs: number;
};

export type FetchAhead = {
  /**
   * The next ranges from `from` (continuing `parentHash`) up to at most `target`: waits for the
   * first, then adds the ones after it that are already fetched, while their logs stay within
   * `maxLogs` (one commit). A failed or unlinked first range comes alone and empties the queue
   * (the caller halves the range or rolls back, then asks again).
   */
  take(
    from: number,
    target: number,
    parentHash: Hex | null,
    limits: { maxLogs: number; maxRanges: number },
  ): Promise<Fetched[]>;
  /** Drops every queued range (a rollback, a restart): what is in flight is ignored when it lands. */
  clear(): void;
};

/**
 * The bounded prefetch queue of the backfill: a range's logs are asked once the previous range's
 * logs are in (they name the pools created there), its headers and transactions while the ranges
 * before are still read; the link to the previous range is checked once both are in. It runs ahead of the commits by up to `maxRanges`
 * ranges or `maxLogs` logs, so that the node is read while the database writes, and so that the
 * ranges fetched meanwhile are committed together. Nothing here writes: a crash loses only
 * fetched data; a reorg or an error empties the queue and fetching starts again from the
 * checkpoint.
 */
export function createFetchAhead(args: FetchAheadArgs): FetchAhead {
  let queue: Job[] = [];
  /** Bumped by clear(): a pump of an older generation stops. */
  let generation = 0;
  let pumping = false;
  /** Where the pump goes on: the block after the last queued range, its parent's hash, the target. */
  let next = { from: 0, parentHash: null as Hex | null | Promise<Hex | null>, target: -1 };
  let halted = false;
  /** Pools created in queued ranges (by the time they are taken they are also the caller's). */
  const pending = new Set<Hex>();

  const queuedLogs = () => queue.reduce((sum, job) => sum + job.logs, 0);

  const pump = async () => {
    if (pumping) return;
    pumping = true;
    const mine = generation;
    try {
      while (
        mine === generation &&
        !halted &&
        next.from <= next.target &&
        queue.length < args.maxRanges &&
        queuedLogs() < args.maxLogs
      ) {
        const { from, target, parentHash } = next;
        const to = Math.min(target, from + args.size() - 1);
        let logsRead: (found: { logs: number; newPools: readonly Hex[] } | null) => void = () => {};
        const logsPhase = new Promise<{ logs: number; newPools: readonly Hex[] } | null>((resolve) => {
          logsRead = resolve;
        });
        const job: Job = {
          from,
          to,
          result: Promise.resolve({ ok: false, error: null, from, to }),
          logs: 0,
          done: false,
        };
        job.result = args
          .fetch({ from, to, target, parentHash, newPools: new Set(pending), onLogs: logsRead })
          .then(
            (data): Fetched => ({ ok: true, data }),
            (error: unknown): Fetched => ({ ok: false, error, from, to }),
          )
          .then((fetched) => {
            job.done = true;
            if (fetched.ok && !("reorg" in fetched.data)) job.logs = fetched.data.logs.length;
            logsRead(null);
            return fetched;
          });
        queue.push(job);
        // The next range waits for this one's logs only (the pools created in it); its link to
        // this one is checked against this one's last hash once both are read.
        const found = await logsPhase;
        if (mine !== generation) return;
        if (found === null) {
          // Failed (or unlinked) before its logs were read: the consumer decides when it gets there.
          halted = true;
          return;
        }
        args.succeeded(to - from + 1, found.logs, to === target);
        for (const pool of found.newPools) pending.add(pool);
        const lastHash = job.result.then((fetched) =>
          fetched.ok && !("reorg" in fetched.data)
            ? (fetched.data.headers.get(to) as BlockHeader).hash
            : null,
        );
        next = { from: to + 1, parentHash: lastHash, target };
      }
    } finally {
      if (mine === generation) pumping = false;
    }
  };

  const clear = () => {
    generation++;
    queue = [];
    pumping = false;
    halted = false;
    pending.clear();
  };

  return {
    clear,
    take: async (from, target, parentHash, { maxLogs, maxRanges }) => {
      const first = queue[0];
      if (!first || first.from !== from || first.to > target || target < next.target) {
        // Nothing queued for this checkpoint (the start, after a rollback), or the head went back.
        clear();
        next = { from, parentHash, target };
      } else {
        next.target = Math.max(next.target, target);
      }
      void pump();
      const head = queue[0] as Job;
      const fetched = await head.result;
      if (!fetched.ok || "reorg" in fetched.data) {
        clear();
        return [fetched];
      }
      queue.shift();
      const taken: Fetched[] = [fetched];
      let logs = fetched.data.logs.length;
      while (queue[0]?.done && taken.length < maxRanges) {
        const job = queue[0];
        const settled = await job.result;
        if (!settled.ok || "reorg" in settled.data) break;
        if (logs + settled.data.logs.length > maxLogs) break;
        logs += settled.data.logs.length;
        taken.push(settled);
        queue.shift();
      }
      void pump();
      return taken;
    },
  };
}
