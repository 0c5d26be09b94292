import type { Static, TSchema } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import type { Config } from "../config/schema.js";
import { badRequest, HttpError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Db, Queryable } from "../store/db.js";
import { jsonArrayBuffer } from "./json-buffer.js";
import type { ProjectInfoBook } from "./project-info.js";
import { offCanonicalOf, type ReadRouter } from "./read-replicas.js";
import type { Readiness } from "./readiness.js";
import type { ResponseCache } from "./response-cache.js";
import type { SyncWatch } from "./sync-watch.js";
import type { BalanceReader } from "./wallet-balances.js";

/** What every endpoint handler works with. */
export type ApiContext = {
  config: Config;
  /** The primary (writes, readiness). Data answers read through `reads`, handed to `compute`. */
  db: Db;
  /** Chooses the database (primary or a replica) and the snapshot a data answer is read in. */
  reads: ReadRouter;
  logger: Logger;
  sync: SyncWatch;
  readiness: Readiness;
  cache: ResponseCache;
  projectInfo: ProjectInfoBook;
  balances: BalanceReader;
  /** The clock (tests pin it). */
  now: () => Date;
  /** The configured network ids, in configuration order. */
  chainIds: readonly number[];
  /** Throws a 400 naming `param` and the configured chains when `chainId` is not configured. */
  requireChain(chainId: number, param: string): void;
  /**
   * Sends a data answer: sets the freshness headers of `chains`, then answers from the cache or
   * runs `compute` once and serialises its result with the route's response schema. `schema`
   * must be the route's `response[200]` object: it types `compute`, so the compiler checks every
   * payload against the published schema (a mismatch is a 500 at run time, caught by any test).
   */
  answer<S extends TSchema>(reply: FastifyReply, options: AnswerOptions<S>): Promise<FastifyReply>;
};

export type AnswerOptions<S extends TSchema> = {
  /** The route's 200 response schema (the very object given as `response[200]`). */
  schema: S;
  /** Identifies the answer: the route and its normalised parameters. */
  key: string;
  /** The networks the answer draws on (freshness headers, cache invalidation). */
  chains: readonly number[];
  /**
   * The payload, or `withHeaders(payload, headers)`, typed by `schema` (NoInfer: the schema
   * decides), read from `db`: one snapshot of the chosen database (a replica or the primary), the
   * one the freshness headers describe.
   */
  compute: (db: Queryable) => Promise<NoInfer<Static<S>> | WithHeaders<NoInfer<Static<S>>>>;
  /** False for answers that must not be cached (read from a node at request time). */
  cache?: boolean;
  /**
   * True: the payload is written by JSON.stringify instead of the schema's serializer, which
   * checks and converts every field (4.2 against 1.8 ms for 2,160 candles). Only for payloads
   * built to the schema exactly — its properties in its order, finite numbers, integers where it
   * says integer — for which both write the same bytes (candle-records.test.ts shows it). An
   * array is written to a Buffer in chunks (jsonArrayBuffer): the same bytes, ready to compress.
   */
  plainJson?: boolean;
};

const WITH_HEADERS = Symbol("withHeaders");
export type WithHeaders<T> = { [WITH_HEADERS]: true; payload: T; headers: Record<string, string> };

/** A computed answer that carries headers of its own (cached with it), such as a next-page cursor. */
export function withHeaders<T>(payload: T, headers: Record<string, string>): WithHeaders<T> {
  return { [WITH_HEADERS]: true, payload, headers };
}

const isWithHeaders = (value: unknown): value is WithHeaders<unknown> =>
  typeof value === "object" && value !== null && WITH_HEADERS in value;

/** Seconds a client is asked to wait while a chain's data is off the canonical chain. */
export const OFF_CANONICAL_RETRY_AFTER_S = 2;

/** The 503 of a data answer whose chain's indexed data is known to be off the canonical chain. */
export const offCanonicalError = (reason: string) =>
  new HttpError(503, `the indexed data is off the node's canonical chain: ${reason}; retry later`, {
    "retry-after": String(OFF_CANONICAL_RETRY_AFTER_S),
  });

/** The check of ApiContext.requireChain: a 400 naming `param` and the configured chains. */
export function chainRequirement(config: Config): (chainId: number, param: string) => void {
  const chainIds = config.chains.map((c) => c.id);
  const configured = new Set(chainIds);
  return (chainId, param) => {
    if (!configured.has(chainId)) {
      throw badRequest(
        `${param}: network ${chainId} is not configured; the configured networks are ${chainIds.join(", ")}`,
      );
    }
  };
}

export function createContext(parts: Omit<ApiContext, "requireChain" | "answer" | "chainIds">): ApiContext {
  const chainIds = parts.config.chains.map((c) => c.id);
  return {
    ...parts,
    chainIds,
    requireChain: chainRequirement(parts.config),
    async answer(reply, { schema, key, chains, compute, cache = true, plainJson = false }) {
      const response = reply.request.routeOptions.schema?.response as Record<number, unknown> | undefined;
      if (response?.[200] !== schema) {
        throw new Error(
          `answer() of ${reply.request.routeOptions.url} was given another schema than the route's 200 response`,
        );
      }
      // A cached answer is served only while the view is at the blocks it was read at, so the
      // view's headers are its own; a computed one overrides them with its snapshot's.
      // Data known to be off the canonical chain (a reorg being rolled back) is never served,
      // from the cache or the database; the snapshot's own mark is checked below too.
      const off = offCanonicalOf((id) => parts.sync.get(id), chains);
      if (off) throw offCanonicalError(off);
      const headers = parts.sync.headers(chains);
      if (headers) reply.headers(headers);
      // Not cached with the answer: it says whether the data can still be trusted to move.
      const stopped = parts.readiness.stoppedHeader(chains);
      if (stopped) reply.header("x-indexing-stopped", stopped);
      const write = (payload: unknown): string | Buffer =>
        plainJson
          ? Array.isArray(payload)
            ? jsonArrayBuffer(payload)
            : JSON.stringify(payload)
          : (reply.serialize(payload) as string);
      const serialise = (result: unknown, extra?: Record<string, string>) =>
        isWithHeaders(result)
          ? { body: write(result.payload), headers: { ...extra, ...result.headers } }
          : { body: write(result), ...(extra ? { headers: extra } : {}) };
      const run = (version?: (blocks: readonly number[]) => void) =>
        parts.reads.read(async (db, snapshot) => {
          const offInSnapshot = snapshot.offCanonical(chains);
          if (offInSnapshot) throw offCanonicalError(offInSnapshot);
          version?.(chains.map((chain) => snapshot.blockOf(chain)));
          const own = snapshot.headers(chains);
          if (own) reply.headers(own);
          return serialise(await compute(db), own);
        }, reply.request.databaseDeadline);
      // Answers read from a node at request time need no snapshot of the database.
      const answer = cache
        ? await parts.cache.get(key, chains, run)
        : serialise(await compute(parts.reads.pick().db));
      if (answer.headers) reply.headers(answer.headers);
      return reply.type("application/json; charset=utf-8").send(answer.body);
    },
  };
}
