import { encodeFunctionData, type Hex, numberToHex } from "viem";
import type { Logger } from "../internal/logger.js";
import { positionManagerAbi } from "./abis.js";
import type { Deployment } from "./deploy.js";
import { devnetFamilies, devnetFamilyOf } from "./families/index.js";
import { approveTx } from "./periphery.js";
import {
  createPlanner,
  historySchedule,
  type PlannedBlock,
  type Trade,
  type TradeBudget,
} from "./planner.js";
import { decodePoolStates, poolStateCalls } from "./pool-state.js";
import { createRandom } from "./random.js";
import { createDevnetRpc, type RpcCall, RpcCallError } from "./rpc.js";
import {
  checkSent,
  executeTransactions,
  type NonceBook,
  readNonces,
  sendTransactionCalls,
} from "./transactions.js";

/** What writeHistory wrote. */
export type HistoryStats = {
  blocks: number;
  /** Transactions sent (trades and liquidity changes). */
  transactions: number;
  /** Swap events on chain in the history's blocks (a multi-hop trade emits one per hop). */
  swaps: number;
  /** Swap events the sent trades should have emitted; more than `swaps` means some reverted. */
  expectedSwaps: number;
  liquidityChanges: number;
  firstBlock: number;
  lastBlock: number;
  from: Date;
  to: Date;
  elapsedMs: number;
};

export type Simulator = {
  /** Writes `days` of trading up to `until` (block timestamps in that range), as fast as the node mines. */
  writeHistory(options: { days: number; until: Date; signal?: AbortSignal }): Promise<HistoryStats>;
  /** Mines a block every ~`blockIntervalMs` (jittered) with 0–5 swaps at wall-clock time, until stop(). */
  startLive(options: { blockIntervalMs: number }): void;
  /** Stops live trading (waiting for the block in progress) and turns automining back on. */
  stop(): Promise<void>;
};

/** Logs what a history wrote (a warning when some trades reverted). */
export function logHistory(logger: Logger, days: number, history: HistoryStats): void {
  const fields = {
    days,
    blocks: history.blocks,
    swaps: history.swaps,
    expected_swaps: history.expectedSwaps,
    liquidity_changes: history.liquidityChanges,
    elapsed_ms: history.elapsedMs,
  };
  if (history.swaps < history.expectedSwaps)
    logger.warn(fields, "devnet history written; some trades reverted");
  else logger.info(fields, "devnet history written");
}

/** A planned block and the batch that mines it. */
type BatchedBlock = { planned: PlannedBlock; calls: RpcCall[] };
/** A planned block on its way: the batch's answers come back in `results`. */
type SentBlock = { planned: PlannedBlock; results: Promise<unknown[]> };

/**
 * Creates the market simulator of a deployment; deterministic from the seed. It sends what the
 * planner (planner.ts) decides, one batch per block, and hands the answers back to it.
 */
export function createSimulator(options: {
  rpcUrl: string;
  deployment: Deployment;
  seed: number;
  logger: Logger;
}): Simulator {
  const { deployment, logger } = options;
  const rpc = createDevnetRpc(options.rpcUrl);
  const random = createRandom(options.seed).fork("simulator");
  const planner = createPlanner({ deployment, random });
  /** topic0 of every family's Swap: the swaps a history mined are counted by them. */
  const swapTopics = devnetFamilies().map((family) => family.swapTopic);
  /** The pools' state reads: the same calls every time. */
  const poolReads = poolStateCalls(deployment.pools);
  const { traders, liquidityProviders } = deployment.accounts;

  let nonces: NonceBook = new Map();
  let lastTimestamp = 0;
  let approved = false;
  let live: { stopped: boolean; timer?: NodeJS.Timeout; inFlight?: Promise<void> } | undefined;

  /**
   * Reads what the simulator keeps (nonces, pools, the next position id) and approves once. The
   * market starts at `timestamp` (the history's start), not at the latest block, whose time
   * depends on how long the deployment took: the history must depend on the seed alone.
   */
  const prepare = async (timestamp: number) => {
    const latest = await rpc.request<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    lastTimestamp = Number(latest.timestamp);
    nonces = await readNonces(rpc, [deployment.accounts.deployer, ...liquidityProviders, ...traders]);
    const supplyCall = {
      method: "eth_call",
      params: [
        {
          to: deployment.v3.positionManager,
          data: encodeFunctionData({ abi: positionManagerAbi, functionName: "totalSupply" }),
        },
        "latest",
      ],
    };
    const results = await rpc.batch<Hex>([...poolReads, supplyCall]);
    planner.reset({
      states: decodePoolStates(deployment.pools, results.slice(0, -1)),
      // Position ids are sequential, and nobody burns positions here.
      nextTokenId: BigInt(results.at(-1) ?? "0x0") + 1n,
      startTimestamp: timestamp,
    });
    if (approved) return;
    // What the families need approved to remove liquidity (V2: the pair's LP token to the router).
    const approvals = liquidityProviders.flatMap((lp) =>
      deployment.pools.flatMap((pool) =>
        devnetFamilyOf(pool.protocol)
          .providerApprovals(pool, deployment)
          .map(({ token, spender }) =>
            approveTx({ from: lp, token, spender, label: `approve ${pool.key} LP tokens` }),
          ),
      ),
    );
    const ts = Math.max(timestamp, lastTimestamp + 1);
    await executeTransactions(rpc, nonces, approvals, { timestamp: ts });
    lastTimestamp = ts;
    approved = true;
  };

  /**
   * Plans the block dated `timestamp` and its batch, to be mined in one round trip: the node runs
   * a batch in order (see hardhat-node.cjs), so it holds the pool reads (they see the state after
   * the previous block), the other reads, the transactions and evm_mine with the block's timestamp.
   */
  const planBlock = (timestamp: number, budget: TradeBudget): BatchedBlock => {
    const planned = planner.planBlock(timestamp, budget);
    const calls = [
      ...(planned.refresh ? poolReads : []),
      ...planned.reads,
      ...sendTransactionCalls(nonces, planned.txs),
      { method: "evm_mine", params: [timestamp] },
    ];
    lastTimestamp = timestamp;
    return { planned, calls };
  };

  const sendBlock = ({ planned, calls }: BatchedBlock): SentBlock => {
    const results = rpc.batchSettled(calls);
    // Awaited in settleBlock; marked handled now so a failure is not an unhandled rejection meanwhile.
    results.catch(() => {});
    return { planned, results };
  };

  /** Checks a sent block's answers and hands its reads to the planner (`later`: see Planner.settle). */
  const settleBlock = async (sent: SentBlock, later: readonly Trade[]) => {
    const { planned } = sent;
    const results = await sent.results;
    const stateCount = planned.refresh ? poolReads.length : 0;
    const readCount = stateCount + planned.reads.length;
    const reads = results.slice(0, readCount);
    await checkSent(rpc, nonces, planned.txs, results.slice(readCount, -1));
    const failed = [...reads, results.at(-1)].find((r) => r instanceof RpcCallError);
    if (failed) throw failed;
    planner.settle(
      planned,
      {
        poolStates: planned.refresh
          ? decodePoolStates(deployment.pools, reads.slice(0, stateCount) as Hex[])
          : undefined,
        results: reads.slice(stateCount),
      },
      later,
    );
  };

  return {
    async writeHistory({ days, until, signal }) {
      const startedAt = performance.now();
      const untilSeconds = Math.floor(until.getTime() / 1000);
      const fromSeconds = untilSeconds - Math.round(days * 86_400);
      await rpc.request("evm_setAutomine", [false]);
      try {
        await prepare(fromSeconds);
        if (lastTimestamp > fromSeconds + 3600) {
          // Blocks cannot go back in time: the history would be squeezed after the head.
          throw new Error(
            `the chain's latest block (${new Date(lastTimestamp * 1000).toISOString()}) is after the history's start ` +
              `(${new Date(fromSeconds * 1000).toISOString()}): date the node's genesis at or before it (initialDate)`,
          );
        }
        const firstBlock = Number(await rpc.request<Hex>("eth_blockNumber")) + 1;
        // The schedule is a function of the seed and the range only; a block is dated at its
        // time, or just after the previous block when the deployment's blocks are later still.
        const schedule = historySchedule(
          random.fork(`schedule:${untilSeconds}:${days}`),
          fromSeconds,
          untilSeconds,
        );
        const stats = { blocks: 0, transactions: 0, expectedSwaps: 0, liquidityChanges: 0 };
        // Each block is planned while the node mines the one before: two cores at work.
        let previous: SentBlock | undefined;
        for (const { time, randomTrades } of schedule) {
          signal?.throwIfAborted();
          const block = planBlock(Math.max(time, lastTimestamp + 1), { randomTrades });
          if (previous !== undefined) await settleBlock(previous, block.planned.trades);
          previous = sendBlock(block);
          stats.blocks++;
          stats.transactions += block.planned.txs.length;
          stats.expectedSwaps += block.planned.expectedSwaps;
          stats.liquidityChanges += block.planned.liquidityChanges;
          if (stats.blocks % 500 === 0) {
            logger.debug(
              { blocks: stats.blocks, at: new Date(time * 1000).toISOString() },
              "writing devnet history",
            );
          }
        }
        if (previous !== undefined) await settleBlock(previous, []);
        const lastBlock = firstBlock + stats.blocks - 1;
        const swaps =
          stats.blocks === 0
            ? 0
            : (
                await rpc.request<unknown[]>("eth_getLogs", [
                  {
                    fromBlock: numberToHex(firstBlock),
                    toBlock: numberToHex(lastBlock),
                    topics: [swapTopics],
                  },
                ])
              ).length;
        const result: HistoryStats = {
          ...stats,
          swaps,
          firstBlock,
          lastBlock,
          from: new Date(fromSeconds * 1000),
          to: new Date(untilSeconds * 1000),
          elapsedMs: Math.round(performance.now() - startedAt),
        };
        logHistory(logger, days, result);
        return result;
      } finally {
        // Leave a node that automines again; a failure here must not hide the one that got us here.
        await rpc
          .request("evm_setAutomine", [true])
          .catch((error: unknown) => logger.warn({ err: error }, "could not turn automining back on"));
      }
    },

    startLive({ blockIntervalMs }) {
      if (live !== undefined) throw new Error("the simulator is already trading live");
      const state: { stopped: boolean; timer?: NodeJS.Timeout; inFlight?: Promise<void> } = {
        stopped: false,
      };
      live = state;
      const liveRandom = random.fork("live");
      let needsPrepare = !approved;
      const tick = async () => {
        try {
          if (needsPrepare) {
            await prepare(Math.floor(Date.now() / 1000));
            needsPrepare = false;
          }
          await rpc.request("evm_setAutomine", [false]);
          const timestamp = Math.max(Math.floor(Date.now() / 1000), lastTimestamp);
          await settleBlock(sendBlock(planBlock(timestamp, { totalTrades: liveRandom.int(6) })), []);
        } catch (error) {
          if (state.stopped) return;
          // Someone else may have used a trader's nonce, or mined in between: read everything again.
          logger.warn({ err: error }, "devnet live block failed; resynchronising");
          needsPrepare = true;
        }
      };
      const scheduleNext = () => {
        if (state.stopped) return;
        state.timer = setTimeout(
          () => {
            state.inFlight = tick().finally(scheduleNext);
          },
          blockIntervalMs * (0.5 + liveRandom.next()),
        );
      };
      scheduleNext();
      logger.info({ block_interval_ms: blockIntervalMs }, "devnet live trading started");
    },

    async stop() {
      const state = live;
      if (state === undefined) return;
      state.stopped = true;
      clearTimeout(state.timer);
      await state.inFlight;
      live = undefined;
      // Leave a node that behaves like a plain Hardhat node (when it still runs).
      await rpc.request("evm_setAutomine", [true]).catch(() => {});
    },
  };
}
