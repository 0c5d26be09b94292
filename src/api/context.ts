import type { Static, TSchema } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import type { Config } from "../config/schema.js";
import { badRequest } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Db } from "../store/db.js";
import type { ProjectInfoBook } from "./project-info.js";
import type { Readiness } from "./readiness.js";
import type { ResponseCache } from "./response-cache.js";
import type { SyncWatch } from "./sync-watch.js";
import type { BalanceReader } from "./wallet-balances.js";

/** What every endpoint handler works with. */
export type ApiContext = {
  config: Config;
  db: Db;
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
  /** The payload, or `withHeaders(payload, headers)`; typed by `schema` (NoInfer: the schema decides). */
  compute: () => Promise<NoInfer<Static<S>> | WithHeaders<NoInfer<Static<S>>>>;
  /** False for answers that must not be cached (read from a node at request time). */
  cache?: boolean;
};

const WITH_HEADERS = Symbol("withHeaders");
export type WithHeaders<T> = { [WITH_HEADERS]: true; payload: T; headers: Record<string, string> };

/** A computed answer that carries headers of its own (cached with it), such as a next-page cursor. */
export function withHeaders<T>(payload: T, headers: Record<string, string>): WithHeaders<T> {
  return { [WITH_HEADERS]: true, payload, headers };
}

const isWithHeaders = (value: unknown): value is WithHeaders<unknown> =>
  typeof value === "object" && value !== null && WITH_HEADERS in value;

export function createContext(parts: Omit<ApiContext, "requireChain" | "answer" | "chainIds">): ApiContext {
  const chainIds = parts.config.chains.map((c) => c.id);
  const configured = new Set(chainIds);
  return {
    ...parts,
    chainIds,
    requireChain(chainId, param) {
      if (!configured.has(chainId)) {
        throw badRequest(
          `${param}: network ${chainId} is not configured; the configured networks are ${chainIds.join(", ")}`,
        );
      }
    },
    async answer(reply, { schema, key, chains, compute, cache = true }) {
      const response = reply.request.routeOptions.schema?.response as Record<number, unknown> | undefined;
      if (response?.[200] !== schema) {
        throw new Error(
          `answer() of ${reply.request.routeOptions.url} was given another schema than the route's 200 response`,
        );
      }
      const headers = parts.sync.headers(chains);
      if (headers) reply.headers(headers);
      // Not cached with the answer: it says whether the data can still be trusted to move.
      const stopped = parts.readiness.stoppedHeader(chains);
      if (stopped) reply.header("x-indexing-stopped", stopped);
      const run = async () => {
        const result = await compute();
        return isWithHeaders(result)
          ? { body: reply.serialize(result.payload) as string, headers: result.headers }
          : { body: reply.serialize(result) as string };
      };
      const answer = cache ? await parts.cache.get(key, chains, run) : await run();
      if (answer.headers) reply.headers(answer.headers);
      return reply.type("application/json; charset=utf-8").send(answer.body);
    },
  };
}
