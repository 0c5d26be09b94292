/**
 * The stream's feeder: the subscription registry and what is pushed to it. Per chain, the
 * indexers' commit notifications (or, while they are down, a poll of the indexed block) start a
 * feed cycle that reads what the commit changed, once per pair, candle or asset (never per
 * subscriber), and sends it to every subscriber. A chain's cycles and the first reads of new
 * subscriptions run one at a time, so each chain's data moves forward only, except through a
 * rollback, which subscribers hear of before any data of the new branch.
 *
 * The pieces: chain-feed.ts (a chain's state and what changes it), feed-reads.ts (the reads),
 * topics.ts (joining topics), texts.ts (the messages); here, their scheduling.
 */
import type { Config } from "../../config/schema.js";
import { backoffDelayMs } from "../../internal/backoff.js";
import type { Logger } from "../../internal/logger.js";
import { loadStoredBlocks } from "../../store/chain-state.js";
import type { CommitNotice } from "../../store/commit-notify.js";
import type { DbClient } from "../../store/db.js";
import type { ReadRouter, Snapshot } from "../read-replicas.js";
import {
  type ChainFeed,
  deliver,
  enqueue,
  forkPoint,
  hasTopics,
  holdRollback,
  newChainFeed,
  noteCommit,
  pollCheck,
  rewind,
  type StreamClient,
  subscriptionKeys,
} from "./chain-feed.js";
import { readChanges } from "./feed-reads.js";
import type { Subscription } from "./messages.js";
import { ack, createSubscriber } from "./subscribe.js";
import { createSubscriptionRegistry } from "./topics.js";

export { type StreamClient, subscriptionKeys } from "./chain-feed.js";

/** The longest wait between retries of a failing feed cycle or poll (they start at the poll interval). */
const MAX_RETRY_MS = 30_000;

const isPowerOfTwo = (n: number) => n > 0 && (n & (n - 1)) === 0;

export type StreamFeeder = {
  /**
   * Registers a subscription: checks it against the data (unknown pair: 404; asset not in the
   * pair: 400) and the connection's limit (429), sends the acknowledgement, then the current
   * candle or prices. Throws an HttpError for the client.
   */
  subscribe(client: StreamClient, subscription: Subscription): Promise<void>;
  /** Removes a subscription (a no-op when absent) and acknowledges it. */
  unsubscribe(client: StreamClient, subscription: Subscription): void;
  /** Removes every subscription of a connection that closed. */
  drop(client: StreamClient): void;
  /** Subscriptions held, over all connections. */
  subscriptionCount(): number;
  start(): void;
  stop(): void;
};

export function createStreamFeeder(options: {
  config: Config;
  reads: ReadRouter;
  logger: Logger;
  now: () => Date;
  /** Throws the 400 naming `param` when `chainId` is not configured. */
  requireChain(chainId: number, param: string): void;
}): StreamFeeder {
  const { config, reads, logger } = options;
  const settings = config.api.stream;
  const log = logger.child({ component: "stream" });
  /** After a rollback, reads go to the primary for twice the lag a usable replica may have. */
  const primaryAfterRollbackMs = config.database.replicaMaxLagSeconds * 2000;
  const chains = new Map<number, ChainFeed>();
  const configured = new Set(config.chains.map((c) => c.id));
  const registry = createSubscriptionRegistry(settings.subscriptionsPerConnection);
  let running = false;
  let stopPolling: (() => void) | undefined;
  let stopWatching: (() => void) | undefined;

  const feedOf = (chainId: number): ChainFeed => {
    let feed = chains.get(chainId);
    if (!feed) {
      feed = newChainFeed(chainId);
      chains.set(chainId, feed);
    }
    return feed;
  };

  /**
   * Reads in a snapshot that holds everything this chain's feed has seen or been told of; right
   * after a rollback, on the primary (a replica may still show the undone branch at a block
   * number the new branch reaches too).
   */
  const read = <T>(feed: ChainFeed, fn: (db: DbClient, snapshot: Snapshot) => Promise<T>) => {
    const recentRollback = Date.now() - feed.rollbackAt < primaryAfterRollbackMs;
    const need = recentRollback ? Number.POSITIVE_INFINITY : Math.max(feed.high, feed.notified);
    return reads.readFresh(feed.chainId, need, async (db, snapshot) => {
      const block = snapshot.blockOf(feed.chainId);
      // Below what was already read: the chain was rolled back (the primary is never stale).
      if (block < feed.high) rollback(feed, block);
      feed.high = Math.max(feed.high, block);
      return fn(db, snapshot);
    });
  };

  /** Tells the chain's subscribers that data after `block` was undone, and rewinds every topic to it. */
  const rollback = (feed: ChainFeed, block: number) => {
    const subscribers = rewind(feed, block, Date.now());
    log.info({ chain_id: feed.chainId, block, subscribers }, "stream rollback sent");
  };

  // -------------------------------------------------------------------------------------------
  // Feed cycles

  const scheduleCycle = (feed: ChainFeed) => {
    if (feed.cycleQueued || !running) return;
    feed.cycleQueued = true;
    void enqueue(feed, async () => {
      feed.cycleQueued = false;
      await cycle(feed);
    }).catch((error: unknown) => {
      feed.failures += 1;
      const delay = backoffDelayMs(feed.failures, [settings.pollIntervalMs, MAX_RETRY_MS]);
      // At warn on the first failure and each time the count doubles: a long outage stays visible
      // without a line per attempt.
      if (isPowerOfTwo(feed.failures)) {
        log.warn(
          { err: error, chain_id: feed.chainId, failures: feed.failures, retry_in_ms: delay },
          "stream feed failed; retrying",
        );
      }
      const retry = setTimeout(() => scheduleCycle(feed), delay);
      retry.unref();
    });
  };

  const cycle = async (feed: ChainFeed) => {
    if (!hasTopics(feed)) {
      feed.notices = [];
      feed.pendingRollback = null;
      return;
    }
    if (feed.pendingRollback !== null) rollback(feed, feed.pendingRollback);
    const startedAt = Date.now();
    const changes = await read(feed, async (db, snapshot) => {
      const block = snapshot.blockOf(feed.chainId);
      if (block === feed.fedBlock) return { block, trades: [], candles: [], prices: [] };
      return { block, ...(await readChanges(db, feed, options.now)) };
    });
    deliver(feed, changes, startedAt);
    if (feed.failures > 0) log.info({ chain_id: feed.chainId }, "stream feed recovered");
    feed.failures = 0;
  };

  // -------------------------------------------------------------------------------------------
  // Commit notices and the poll

  const onCommit = (notice: CommitNotice) => {
    if (!configured.has(notice.chainId)) return;
    const feed = feedOf(notice.chainId);
    if (noteCommit(feed, notice.block, Date.now())) scheduleCycle(feed);
  };

  /**
   * Every poll interval, per chain with subscribers: the primary's checkpoint as its sync watch
   * last read it. While notifications are down (or right after they came back) a change is fed
   * like a notice; a lower block, or a hash of a known block that changed, is a rollback.
   */
  const poll = async () => {
    const listening = reads.listening();
    for (const feed of chains.values()) {
      if (!hasTopics(feed)) continue;
      const state = reads.primary.sync.get(feed.chainId);
      if (!state) continue;
      const current = { block: state.indexedBlock, hash: state.indexedHash, at: Date.now() };
      const outcome = pollCheck(feed, current, listening);
      if (outcome.kind === "none") continue;
      if (outcome.kind === "moved") {
        // A failed check is not "no reorg": the comparison is made again at the next poll (the
        // poll's failure is logged and backed off) rather than feeding a branch change unannounced.
        const forkedAt = await storedForkPoint(feed).catch((error: unknown) => {
          feed.polled = outcome.previous;
          feed.verify = true;
          throw error;
        });
        if (forkedAt !== null) holdRollback(feed, forkedAt);
      }
      onCommit({ chainId: feed.chainId, block: outcome.block });
    }
  };

  /** The fork point of a reorg unheard (see forkPoint), from the primary's stored hashes. */
  const storedForkPoint = async (feed: ChainFeed): Promise<number | null> => {
    if (feed.seen.length < 2) return null;
    const stored = await loadStoredBlocks(reads.primary.db, feed.chainId);
    return forkPoint(feed.seen, new Map(stored.map((b) => [b.number, b.hash])));
  };

  // -------------------------------------------------------------------------------------------
  // Subscriptions

  const subscribeTo = createSubscriber({ feedOf, read, registry, now: options.now });

  return {
    async subscribe(client, subscription) {
      if (subscription.channel === "prices") {
        for (const asset of subscription.assets) options.requireChain(asset.chainId, "asset_ids");
      } else {
        options.requireChain(subscription.pair.chainId, "pair_id");
        options.requireChain(subscription.asset.chainId, "asset_id");
      }
      registry.requireRoom(client, subscriptionKeys(subscription));
      return subscribeTo(client, subscription);
    },
    unsubscribe(client, subscription) {
      for (const key of subscriptionKeys(subscription)) client.subscriptions.get(key)?.();
      ack(client, "unsubscribed", subscription);
    },
    drop(client) {
      for (const remove of [...client.subscriptions.values()]) remove();
    },
    subscriptionCount: () => registry.count(),
    start() {
      if (running) return;
      running = true;
      stopWatching = reads.watchCommits({
        commit: onCommit,
        reconnect: () => {
          for (const feed of chains.values()) feed.verify = true;
        },
      });
      stopPolling = repeatWithBackoff(poll, settings.pollIntervalMs, log);
    },
    stop() {
      running = false;
      stopPolling?.();
      stopWatching?.();
    },
  };
}

/**
 * Runs `poll` every `intervalMs` after the previous run ended; after failures, at a delay that
 * backs off up to MAX_RETRY_MS. A failure is logged at warn the first time and each time the
 * count doubles, the recovery at info. Returns the function that stops it.
 */
export function repeatWithBackoff(poll: () => Promise<void>, intervalMs: number, log: Logger): () => void {
  let failures = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = (delay: number) => {
    timer = setTimeout(() => {
      poll()
        .then(
          () => {
            if (failures > 0) log.info({ failures }, "stream poll recovered");
            failures = 0;
          },
          (error: unknown) => {
            failures += 1;
            if (isPowerOfTwo(failures)) log.warn({ err: error, failures }, "stream poll failed");
          },
        )
        .finally(() => {
          if (stopped) return;
          loop(failures === 0 ? intervalMs : backoffDelayMs(failures, [intervalMs, MAX_RETRY_MS]));
        });
    }, delay);
    timer.unref();
  };
  loop(intervalMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
