import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { createSilentLogger } from "../internal/logger.js";
import { getSyncStatus } from "../store/chain-state.js";
import { noDerivedData } from "../sync/derived.js";
import { parseCsv } from "./fixture.js";
import { replayFixture } from "./replay.js";

const fixtureDir = path.resolve(
  import.meta.dirname,
  "../../fixtures/mainnet-uniswap-v3-usdc-weth-0.05-2024-01-05",
);

type Decoded = Record<string, string>;

function readDecoded(): Decoded[] {
  const [header, ...rows] = parseCsv(readFileSync(path.join(fixtureDir, "decoded.csv"), "utf8"));
  return rows
    .filter((r) => r.length === header?.length)
    .map((r) => Object.fromEntries((header ?? []).map((h, i) => [h, r[i] ?? ""])));
}

/** "199045.0" → 199045 (the independent tool wrote ticks as floats). */
const int = (s: string) => BigInt(s.replace(/\.0$/, ""));

describe("replay of the recorded mainnet day (USDC/WETH 0.05 %, 2024-01-05)", () => {
  let testDb: TestDb;
  const decoded = readDecoded();

  before(async () => {
    testDb = await createTestDb();
  });
  after(async () => {
    await testDb?.drop();
  });

  it("stores the 6,046 swaps with exactly the independent decoder's values", async () => {
    const result = await replayFixture({
      db: testDb.db,
      dir: fixtureDir,
      derived: noDerivedData,
      logger: createSilentLogger(),
      blocksPerBatch: 500,
    });
    assert.equal(result.swaps, 6046, "every Swap log is a swap");

    const { rows } = await testDb.db.query<Record<string, string | number | null>>(
      `SELECT block_number, log_index, tx_hash, tx_index, sender, recipient, maker, exchange, reserve0,
         (amount0_in - amount0_out)::text AS amount0, (amount1_in - amount1_out)::text AS amount1,
         sqrt_price_x96, liquidity, tick, price, block_time
       FROM swaps WHERE chain_id = 1 ORDER BY block_number, log_index`,
    );
    const expected = decoded.filter((d) => d.tx_type === "SWAP");
    assert.equal(rows.length, 6046, "stored swaps");
    assert.equal(expected.length, 6046, "expected swaps");
    for (let i = 0; i < expected.length; i++) {
      const want = expected[i] as Decoded;
      const got = rows[i] as Record<string, string | number | null>;
      const where = `swap ${want.block_number}:${want.pool_log_index}`;
      assert.equal(got.block_number, Number(want.block_number), `${where} block`);
      assert.equal(got.log_index, Number(want.pool_log_index), `${where} log index`);
      assert.equal(got.tx_hash, want.transaction_hash, `${where} tx hash`);
      assert.equal(got.tx_index, Number(want.pool_tx_index), `${where} tx index`);
      assert.equal(got.amount0, want.amount0, `${where} amount0 = in − out`);
      assert.equal(got.amount1, want.amount1, `${where} amount1 = in − out`);
      assert.equal(got.sqrt_price_x96, want.sqrtPriceX96, `${where} sqrtPriceX96`);
      assert.equal(BigInt(got.tick as number), int(want.current_tick as string), `${where} tick`);
      assert.equal(got.liquidity, want.total_liquidity, `${where} liquidity`);
      assert.equal(got.sender, want.sender, `${where} sender`);
      assert.equal(got.recipient, want.receipt, `${where} recipient`);
      assert.equal(got.maker, null, `${where} maker is unknown in replay`);
      assert.equal(got.reserve0, null, `${where} balances are unknown in replay`);
      assert.equal(
        (got.block_time as unknown as Date).toISOString(),
        new Date(`${want.block_timestamp?.replace(" ", "T")}Z`).toISOString(),
        `${where} block time`,
      );
    }
    const firstPrice = rows[0]?.price as number;
    assert.ok(
      Math.abs(1 / firstPrice - 2269.7) < 1,
      `price is USDC in WETH, decimal-adjusted (1/price = ${1 / firstPrice})`,
    );
  });

  it("stores the Mint, Burn and Collect events with their amounts", async () => {
    const { rows } = await testDb.db.query<{
      block_number: number;
      log_index: number;
      kind: string;
      amount0: string;
      amount1: string;
      liquidity_delta: string | null;
      tick_lower: number | null;
      tick_upper: number | null;
    }>(
      `SELECT block_number, log_index, kind, amount0, amount1, liquidity_delta, tick_lower, tick_upper
       FROM pool_events WHERE chain_id = 1 ORDER BY block_number, log_index`,
    );
    const counts = Object.fromEntries(
      ["mint", "burn", "collect"].map((k) => [k, rows.filter((r) => r.kind === k).length]),
    );
    assert.deepEqual(counts, { mint: 54, burn: 69, collect: 65 }, "the manifest's Mint/Burn/Collect counts");
    const expected = decoded.filter((d) => d.tx_type !== "SWAP");
    assert.equal(rows.length, expected.length, "one pool event per non-swap log");
    for (let i = 0; i < expected.length; i++) {
      const want = expected[i] as Decoded;
      const got = rows[i] as (typeof rows)[number];
      const where = `${want.tx_type} ${want.block_number}:${want.pool_log_index}`;
      assert.equal(got.kind, want.tx_type?.toLowerCase(), `${where} kind`);
      assert.equal(got.log_index, Number(want.pool_log_index), `${where} log index`);
      assert.equal(got.amount0, want.amount0, `${where} amount0`);
      assert.equal(got.amount1, want.amount1, `${where} amount1`);
      assert.equal(BigInt(got.tick_lower as number), int(want.tick_lower as string), `${where} tick lower`);
      assert.equal(BigInt(got.tick_upper as number), int(want.tick_upper as string), `${where} tick upper`);
      if (want.tx_type === "MINT")
        assert.equal(got.liquidity_delta, want.liquidity, `${where} liquidity added`);
      if (want.tx_type === "BURN")
        assert.equal(
          BigInt(got.liquidity_delta as string),
          -BigInt(want.liquidity as string),
          `${where} liquidity removed`,
        );
    }
  });

  it("records the checkpoint, and a second replay adds nothing", async () => {
    const [status] = await getSyncStatus(testDb.db, [1]);
    const last = decoded[decoded.length - 1] as Decoded;
    assert.equal(status?.indexedBlock, Number(last.block_number), "checkpoint at the last recorded block");
    const again = await replayFixture({
      db: testDb.db,
      dir: fixtureDir,
      derived: noDerivedData,
      logger: createSilentLogger(),
    });
    assert.equal(again.swaps, 0, "nothing left above the checkpoint");
    const { rows } = await testDb.db.query<{ n: number }>("SELECT count(*)::int AS n FROM swaps");
    assert.equal(rows[0]?.n, 6046, "no duplicates");
  });
});
