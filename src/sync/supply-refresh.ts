/**
 * The periodic refresh of a chain's token supplies while it follows the head: at most once per
 * `intervalMs`, the tokens due (store/tokens.ts) are read from the node and written under the
 * writer's fence. A failure is logged and tried again at the next interval.
 */
import type { Logger } from "../internal/logger.js";
import type { RpcClient } from "../rpc/client.js";
import { type Db, type DbClient, withTransaction } from "../store/db.js";
import { tokensDueForSupply, updateTokenSupplies } from "../store/tokens.js";
import { readSupplies } from "./tokens.js";

export type SupplyRefresh = {
  /** Refreshes the due tokens' supplies when the interval has passed since the last refresh. */
  refresh(): Promise<void>;
  /** Milliseconds until the next refresh is due (at least `floorMs`). */
  untilDue(floorMs: number): number;
};

export function createSupplyRefresh(args: {
  db: Db;
  rpc: RpcClient;
  chainId: number;
  intervalMs: number;
  batch: number;
  fence(client: DbClient): Promise<void>;
  logger: Logger;
  now?: () => number;
}): SupplyRefresh {
  const { db, rpc, chainId, intervalMs, logger } = args;
  const now = args.now ?? Date.now;
  let last = now();
  return {
    async refresh() {
      if (now() - last < intervalMs) return;
      last = now();
      try {
        const due = await tokensDueForSupply(db, chainId, intervalMs, args.batch);
        if (due.length === 0) return;
        const supplies = await readSupplies(rpc, due);
        await withTransaction(db, async (client) => {
          await args.fence(client);
          await updateTokenSupplies(client, chainId, supplies);
        });
        logger.debug({ tokens: due.length }, "token supplies refreshed");
      } catch (error) {
        logger.warn(
          { error: (error as Error).message, rpc_host: rpc.host() },
          "token supply refresh failed; trying again later",
        );
      }
    },
    untilDue: (floorMs) => Math.max(floorMs, last + intervalMs - now()),
  };
}
