import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { parseConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { shapeChainConfig, shapeProfiles } from "../shape/profiles.js";
import { type ShapeServer, startShapeServer } from "../shape/server.js";
import { checkStartBlocks } from "./start-block.js";

/** The start block against the node's head and against the data a database holds. */
describe("checkStartBlocks", () => {
  let server: ShapeServer;
  let testDb: TestDb;
  const logger = createSilentLogger();
  const configAt = (startBlock: number): Config =>
    parseConfig({
      devnet: { enabled: false },
      chains: [{ ...shapeChainConfig(shapeProfiles.ethereum, server.url), startBlock }],
    });
  const chainRow = async () => (await testDb.db.query("SELECT 1 FROM chains WHERE chain_id = 1")).rows.length;
  /** What an indexer leaves: the chain, and its checkpoint (with the block's hash once a batch is in). */
  const indexed = async (block: number, hash: string | null) => {
    await testDb.db.query(
      "INSERT INTO chains (chain_id, name, genesis_hash, devnet) VALUES (1, 'x', $1, false) ON CONFLICT DO NOTHING",
      [`0x${"0".repeat(64)}`],
    );
    await testDb.db.query(
      `INSERT INTO sync_state (chain_id, indexed_block, indexed_block_hash) VALUES (1, $1, $2)
       ON CONFLICT (chain_id) DO UPDATE SET indexed_block = $1, indexed_block_hash = $2`,
      [block, hash],
    );
  };

  before(async () => {
    [server, testDb] = await Promise.all([
      startShapeServer({
        profile: "ethereum",
        pools: 200,
        tokens: 100,
        historyBlocks: 20,
        live: false,
        port: 0,
      }),
      createTestDb(),
    ]);
  });
  after(async () => {
    await server?.close();
    await testDb?.drop();
  });

  it("a start block past the node's head is an error naming both, and writes nothing", async () => {
    const head = server.chain.head();
    await assert.rejects(
      checkStartBlocks({ config: configAt(23_800_000), db: testDb.db, logger }),
      new RegExp(
        `^LaunchError: chain 1 \\(.*\\): startBlock 23,800,000 is past the node's head ${head}: set startBlock \\(TOKENMARKET__chains__0__startBlock\\) to a block at or below ${head}`,
      ),
    );
    const { rows } = await testDb.db.query("SELECT 1 FROM settings WHERE key = 'start_block:1'");
    assert.equal(rows.length, 0);
  });

  it("a start block changed before anything was indexed is applied: the chain's state is dropped", async () => {
    await checkStartBlocks({ config: configAt(10), db: testDb.db, logger });
    // An indexer made the checkpoint for start 10 and a factory scan stored state, but no batch.
    await indexed(9, null);
    await checkStartBlocks({ config: configAt(5), db: testDb.db, logger });
    assert.equal(await chainRow(), 0, "the chain's state dropped, to be indexed afresh from 5");
  });

  it("a start block changed under indexed data is refused, naming both blocks and the setting", async () => {
    await checkStartBlocks({ config: configAt(5), db: testDb.db, logger });
    await indexed(12, `0x${"1".repeat(64)}`);
    await assert.rejects(
      checkStartBlocks({ config: configAt(8), db: testDb.db, logger }),
      /the database holds this chain indexed from block 5 up to 12, but the configured startBlock is 8: set startBlock back to 5 \(TOKENMARKET__chains__0__startBlock\), or index from 8 into another database/,
    );
    assert.equal(await chainRow(), 1, "nothing dropped");
    // The same start block again: no complaint.
    await checkStartBlocks({ config: configAt(5), db: testDb.db, logger });
  });
});
