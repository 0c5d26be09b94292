import type { DexConfig } from "../config/schema.js";
import type { Hex } from "../decode/types.js";
import type { Logger } from "../internal/logger.js";
import type { PoolState, Token } from "../model/index.js";
import { loadFactoryScans } from "../store/chain-state.js";
import type { Queryable } from "../store/db.js";
import { loadPools } from "../store/pools.js";
import { loadTokens } from "../store/tokens.js";
import type { Pool } from "./pools.js";

export type KnownPools = {
  /** Every pool of the chain by address (a configured factory's), with its latest state. */
  readonly pools: ReadonlyMap<Hex, Pool>;
  readonly tokens: ReadonlyMap<Hex, Token>;
  /** Replaces both maps with what the database holds (at start and after a rollback). */
  load(db: Queryable, chainId: number): Promise<void>;
  /** A committed batch: its new tokens, its new and newly based pools, the pools' states after it. */
  add(batch: {
    newTokens: readonly Token[];
    overlay: ReadonlyMap<Hex, Pool>;
    states: ReadonlyMap<Hex, PoolState>;
  }): void;
  /** A pool the factory scan found below the start block (already stored). */
  addScanned(pool: Pool): void;
};

/**
 * The chain's pools and tokens in memory, mirroring the database (the indexer needs them to
 * recognise its logs and build its rows), reloaded from it after every restart and rollback.
 */
export function createKnownPools(args: { dexes: readonly DexConfig[]; logger: Logger }): KnownPools {
  const { logger } = args;
  const dexByFactory = new Map<Hex, DexConfig>(args.dexes.map((d) => [d.factory, d]));
  let pools = new Map<Hex, Pool>();
  let tokens = new Map<Hex, Token>();

  /**
   * The pool as kept in the map of known pools (every pool of the chain: 300,000 and more at
   * mainnet scale), sharing its strings with what is kept anyway: the factory's and DEX's of the
   * configuration, the token addresses of the token map (a reference token is paired with
   * thousands of pools; decoded from logs or read from rows, each would be a copy of its own).
   */
  const slim = (pool: Pool): Pool => {
    const dex = dexByFactory.get(pool.factory);
    return {
      ...pool,
      factory: dex?.factory ?? pool.factory,
      dex: dex?.name === pool.dex ? dex.name : pool.dex,
      token0: tokens.get(pool.token0)?.address ?? pool.token0,
      token1: tokens.get(pool.token1)?.address ?? pool.token1,
    };
  };

  return {
    get pools() {
      return pools;
    },
    get tokens() {
      return tokens;
    },
    async load(db, chainId) {
      const scans = await loadFactoryScans(db, chainId);
      tokens = new Map((await loadTokens(db, chainId)).map((t) => [t.address, t]));
      pools = new Map();
      let unconfigured = 0;
      for (const row of await loadPools(db, chainId)) {
        const dex = dexByFactory.get(row.factory);
        if (!dex) {
          unconfigured++;
          continue;
        }
        const baseBlock = row.base?.block ?? scans.get(row.factory)?.targetBlock ?? row.createdBlock;
        pools.set(row.address, slim({ ...row, swapEvent: dex.swapEvent, baseBlock }));
      }
      if (unconfigured > 0)
        logger.warn({ pools: unconfigured }, "stored pools of factories no longer configured are ignored");
    },
    add({ newTokens, overlay, states }) {
      for (const token of newTokens) tokens.set(token.address, token);
      for (const [address, pool] of overlay) pools.set(address, slim(pool));
      for (const [address, state] of states) {
        const pool = pools.get(address);
        if (pool) pools.set(address, { ...pool, state });
      }
    },
    addScanned(pool) {
      pools.set(pool.address, slim(pool));
    },
  };
}
