import * as assert from "node:assert/strict";
import { it } from "node:test";
import { createTestDb } from "../_test/db.js";
import { deployMarket } from "../devnet/deploy.js";
import { startHardhatNode } from "../devnet/node.js";
import { createSimulator } from "../devnet/simulator.js";
import { createLogger, createSilentLogger } from "../internal/logger.js";
import { noDerivedData } from "./derived.js";
import { createIndexer } from "./indexer.js";

it("scratch", { timeout: 300_000 }, async () => {
  const logger = createLogger({ level: "info", pretty: false });
  let t = Date.now();
  const node = await startHardhatNode({ port: 0, chainId: 31337, logger: createSilentLogger(), initialDate: new Date(Date.now() - 3 * 86400_000) });
  console.log("node", Date.now() - t); t = Date.now();
  const deployment = await deployMarket({ rpcUrl: node.rpcUrl, seed: 42 });
  console.log("deploy", Date.now() - t, deployment.blockNumber); t = Date.now();
  const sim = createSimulator({ rpcUrl: node.rpcUrl, deployment, seed: 42, logger: createSilentLogger() });
  const stats = await sim.writeHistory({ days: 1, until: new Date(Date.now() - 3600_000) });
  console.log("history", Date.now() - t, stats); t = Date.now();
  const testDb = await createTestDb();
  const indexer = createIndexer({
    config: {
      chains: [
        {
          id: 31337, name: "devnet", rpc: [node.rpcUrl], confirmations: 0, startBlock: 0, reorgWindow: 64, maxLagBlocks: 20,
          pollIntervalMs: 200, maxBlockRange: 2000, devnet: true,
          dexes: [
            { name: "Uniswap V2", protocol: "v2", factory: deployment.v2.factory, fee: 3000, swapEvent: "uniswap" },
            { name: "Uniswap V3", protocol: "v3", factory: deployment.v3.factory, swapEvent: "uniswap" },
          ],
          referenceTokens: { stablecoins: [deployment.tokens.USDC.address], wrappedNative: deployment.weth, wrappedBtc: [], others: [] },
        } as never,
      ],
    },
    db: testDb.db, logger, derived: noDerivedData, options: { follow: false },
  });
  await indexer.start();
  await indexer.done();
  console.log("index", Date.now() - t, indexer.status());
  const { rows } = await testDb.db.query("SELECT (SELECT count(*) FROM swaps) s, (SELECT count(*) FROM pool_events) e, (SELECT count(*) FROM pools) p, (SELECT count(*) FROM tokens) t, (SELECT count(*) FROM blocks) b");
  console.log(rows);
  const tokens = await testDb.db.query("SELECT address, name, symbol, decimals FROM tokens ORDER BY symbol");
  console.log(tokens.rows);
  assert.ok(true);
  await testDb.drop();
  await node.stop();
});
