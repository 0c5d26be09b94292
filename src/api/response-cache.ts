import { HttpError } from "../internal/errors.js";
import type { ReadRouter } from "./read-replicas.js";

/** A serialised answer and the headers that belong to it (a next-page cursor, for example). */
export type CachedAnswer = { body: string | Buffer; headers?: Record<string, string> };

export type ResponseCache = {
  /**
   * The serialised answer for `key`: from memory while every chain in `chains` is still at the
   * block it was computed at (and for at most `ttlMs`), else computed once by `compute` — concurrent
   * requests for one key share that computation. A 4xx HttpError thrown by `compute` is remembered
   * and thrown again like an answer. `compute` may report the blocks of `chains` its data was
   * read at (`version`), which may differ from `blockOf` (a replica, a newer snapshot): the
   * answer is filed under those, so it is never served as a version it does not show.
   */
  get(
    key: string,
    chains: readonly number[],
    compute: (version: (blocks: readonly number[]) => void) => Promise<CachedAnswer>,
  ): Promise<CachedAnswer>;
  clear(): void;
  size(): number;
};

type Entry = { value: CachedAnswer | HttpError; blocks: number[]; expires: number; bytes: number };

/**
 * In-memory cache of hot answers, bounded by entries and bytes (least recently used dropped
 * first) and invalidated by the indexed block of each chain an answer involves. With `ttlMs` 0
 * (the cache off) it keeps nothing: only concurrent requests for one key share a computation.
 */
export function createResponseCache(options: {
  blockOf: (chainId: number) => number;
  ttlMs?: number;
  maxEntries?: number;
  maxBytes?: number;
  now?: () => number;
  onLookup?: (hit: boolean) => void;
}): ResponseCache {
  const ttlMs = options.ttlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 5000;
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<CachedAnswer>>();
  let bytes = 0;
  /** Bumped by clear(): an answer computed from before a clear is not kept after it. */
  let generation = 0;

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    bytes -= entry.bytes;
  };

  const fresh = (entry: Entry, chains: readonly number[]) =>
    entry.expires > now() && chains.every((chain, i) => options.blockOf(chain) === entry.blocks[i]);

  const unwrap = (value: CachedAnswer | HttpError) => {
    if (value instanceof HttpError) throw value;
    return value;
  };

  return {
    async get(key, chains, compute) {
      const entry = entries.get(key);
      if (entry && fresh(entry, chains)) {
        // Most recently used last: Map keeps insertion order, so re-insert.
        entries.delete(key);
        entries.set(key, entry);
        options.onLookup?.(true);
        return unwrap(entry.value);
      }
      const inFlight = pending.get(key);
      if (inFlight) {
        options.onLookup?.(true);
        return inFlight;
      }
      options.onLookup?.(false);
      let blocks = chains.map((chain) => options.blockOf(chain));
      const startedIn = generation;
      const store = (value: CachedAnswer | HttpError) => {
        remove(key);
        if (startedIn !== generation) return;
        // The cache off (a TTL of 0): nothing is kept. Kept, the answers would never be served
        // (expired at once) yet stay in memory up to maxBytes, each surviving the young
        // generation's collections (copied, then promoted): at the scale benchmark's 10 M swaps
        // that held 64 MB of dead bodies and made every scavenge copy 2-4 MB.
        if (ttlMs <= 0) return;
        const size = value instanceof HttpError ? 256 : value.body.length + 256;
        if (size > maxBytes / 4) return;
        entries.set(key, { value, blocks, expires: now() + ttlMs, bytes: size });
        bytes += size;
        for (const oldest of entries.keys()) {
          if (entries.size <= maxEntries && bytes <= maxBytes) break;
          remove(oldest);
        }
      };
      const computation = compute((read) => {
        blocks = [...read];
      })
        .then(
          (value) => {
            store(value);
            return value;
          },
          (error: unknown) => {
            if (error instanceof HttpError && error.statusCode < 500) store(error);
            throw error;
          },
        )
        .finally(() => {
          if (pending.get(key) === computation) pending.delete(key);
        });
      pending.set(key, computation);
      return computation;
    },
    clear() {
      entries.clear();
      // Requests from now on do not join a computation that started before.
      pending.clear();
      bytes = 0;
      generation++;
    },
    size: () => entries.size,
  };
}

/**
 * Drops every cached answer when a chain's checkpoint goes back (a reorg's rollback, announced
 * with its lower block) or the commit notifications were interrupted: an answer cached at a block
 * of the abandoned branch would otherwise be served again once the new branch reaches that block.
 */
export function clearedOnRollback(
  reads: Pick<ReadRouter, "watchCommits">,
  cache: ResponseCache,
): ResponseCache {
  const last = new Map<number, number>();
  reads.watchCommits({
    commit(notice) {
      const previous = last.get(notice.chainId);
      last.set(notice.chainId, notice.block);
      if (previous !== undefined && notice.block < previous) cache.clear();
    },
    reconnect: () => cache.clear(),
  });
  return cache;
}
