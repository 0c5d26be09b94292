import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createCapturingLogger } from "../_test/indexer-wait.js";
import { suiteDb } from "../_test/suite-db.js";
import { dexSchema } from "../config/schema.js";
import type { Hex } from "../decode/types.js";
import type { Token } from "../model/index.js";
import { initSyncState, insertChainRow } from "../store/chain-state.js";
import { insertPools } from "../store/pools.js";
import { insertTokens } from "../store/tokens.js";
import { createKnownPools } from "./known-pools.js";
import { poolFromCreation } from "./pools.js";

const address = (n: number): Hex => `0x${n.toString(16).padStart(40, "0")}` as Hex;
const token = (n: number): Token => ({
  address: address(n),
  name: `Token ${n}`,
  symbol: `T${n}`,
  decimals: 18,
  totalSupply: null,
});

describe("known pools", () => {
  const testDb = suiteDb();

  it("loads the configured factories' pools and the tokens, ignores others loudly, and adds committed batches", async () => {
    const { db } = testDb;
    const v2 = dexSchema.parse({ name: "Uniswap V2", protocol: "v2", factory: address(0xf2), fee: 3000 });
    const gone = dexSchema.parse({ name: "Gone", protocol: "v2", factory: address(0xf9), fee: 3000 });
    await insertChainRow(db, {
      chainId: 7,
      name: "Seven",
      genesisHash: `0x${"1".repeat(64)}` as Hex,
      devnet: true,
    });
    await initSyncState(db, 7, 0);
    await insertTokens(db, 7, [token(1), token(2), token(3)]);
    const creation = (pool: number, factory: Hex, block: number) => ({
      factory,
      pool: address(pool),
      token0: address(1),
      token1: address(2),
      fee: null,
      tickSpacing: null,
      blockNumber: block,
      logIndex: 0,
    });
    const kept = poolFromCreation(creation(0x100, v2.factory, 5), v2, null);
    await insertPools(db, 7, [kept, poolFromCreation(creation(0x200, gone.factory, 6), gone, null)]);

    const { logger, lines } = createCapturingLogger();
    const known = createKnownPools({ dexes: [v2], logger });
    await known.load(db, 7);
    assert.deepEqual([...known.pools.keys()], [address(0x100)], "only the configured factory's pool");
    assert.equal(known.pools.get(address(0x100))?.baseBlock, 5, "based at its creation");
    assert.deepEqual([...known.tokens.keys()].sort(), [address(1), address(2), address(3)]);
    assert.equal(lines.find((l) => l.level === 40)?.pools, 1, "the ignored pool is warned about");

    const fresh = poolFromCreation(creation(0x300, v2.factory, 9), v2, null);
    const state = { ...kept.state, reserve0: 10n, reserve1: 20n, block: 9 };
    known.add({
      newTokens: [token(4)],
      overlay: new Map([[fresh.address, fresh]]),
      states: new Map([
        [kept.address, state],
        [address(0x999), state],
      ]),
    });
    assert.equal(known.tokens.get(address(4))?.symbol, "T4");
    assert.equal(known.pools.get(fresh.address)?.createdBlock, 9);
    assert.deepEqual(known.pools.get(kept.address)?.state, state, "the state after the batch");
    assert.equal(known.pools.has(address(0x999)), false, "a state of an unknown pool adds no pool");
    known.addScanned(poolFromCreation(creation(0x400, v2.factory, 1), v2, 0));
    assert.equal(known.pools.get(address(0x400))?.baseBlock, 0, "a scanned pool, based at the scan's target");

    await known.load(db, 7);
    assert.deepEqual(
      [...known.pools.keys()],
      [address(0x100)],
      "loading again replaces the memory with the database",
    );
  });
});
