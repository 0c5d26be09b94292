import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, type Hex, parseAbi, parseEventLogs } from "viem";
import { startTestDevnet, type TestDevnet } from "../_test/devnet.js";
import { v2PairAbi, v3PoolAbi } from "./abis.js";
import { peripheryOf } from "./deploy.js";
import { v2SwapTx } from "./periphery.js";
import type { TxReceipt } from "./transactions.js";

const transferAbi = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
]);

// Trades through the official routers on the devnet, read back from the Swap events with viem.
describe("trades through the Uniswap routers", () => {
  let devnet: TestDevnet;
  let wallet: Address;

  before(async () => {
    devnet = await startTestDevnet();
    wallet = devnet.deployment.accounts.traders[3] as Address;
  });
  after(() => devnet?.stop());

  const receiptOf = (sent: { receipt: TxReceipt | null }): TxReceipt => {
    assert.ok(sent.receipt, "mined");
    return sent.receipt;
  };
  const txOf = (hash: Hex) =>
    devnet.rpc.request<{ from: string; to: string }>("eth_getTransactionByHash", [hash]);
  const v2Swaps = (receipt: TxReceipt) =>
    parseEventLogs({ abi: v2PairAbi, eventName: "Swap", logs: receipt.logs as never });
  const v3Swaps = (receipt: TxReceipt) =>
    parseEventLogs({ abi: v3PoolAbi, eventName: "Swap", logs: receipt.logs as never });

  it("swaps on a V2 pair in both directions; the event says what was sent, from the wallet via the router", async () => {
    const pool = devnet.pool("v2:WETH/USDC");
    for (const tokenIn of ["WETH", "USDC"] as const) {
      const tokenOut = tokenIn === "WETH" ? "USDC" : "WETH";
      const amountIn = tokenIn === "WETH" ? 2n * 10n ** 18n : 5_000n * 10n ** 6n;
      const [inBefore, outBefore] = [
        await devnet.balanceOf(tokenIn, wallet),
        await devnet.balanceOf(tokenOut, wallet),
      ];
      const sent = await devnet.swapV2({ from: wallet, pool, tokenIn, amountIn });
      const tx = await txOf(sent.hash);
      assert.equal(tx.from, wallet, "the wallet sent it");
      assert.equal(tx.to, devnet.deployment.v2.router, "to the V2 router");
      const [swap, ...others] = v2Swaps(receiptOf(sent));
      assert.ok(swap && others.length === 0, "one Swap event");
      assert.equal(swap.address, pool.address);
      const zeroIn = devnet.token(tokenIn) === pool.token0;
      const { amount0In, amount1In, amount0Out, amount1Out, to, sender } = swap.args;
      assert.equal(zeroIn ? amount0In : amount1In, amountIn, "the input is the amount sent");
      assert.equal(zeroIn ? amount1In : amount0In, 0n);
      assert.equal(zeroIn ? amount0Out : amount1Out, 0n);
      const amountOut = zeroIn ? amount1Out : amount0Out;
      assert.ok(amountOut > 0n);
      assert.equal(sender.toLowerCase(), devnet.deployment.v2.router);
      assert.equal(to.toLowerCase(), wallet, "paid out to the wallet");
      assert.equal(await devnet.balanceOf(tokenIn, wallet), inBefore - amountIn);
      assert.equal(await devnet.balanceOf(tokenOut, wallet), outBefore + amountOut);
      // Near the market: 2 WETH at ~$3,000 give ~6,000 USDC (less the fee and the impact).
      const usdIn = tokenIn === "WETH" ? 2 * devnet.deployment.tokens.WETH.initialPriceUsd : 5_000;
      const usdOut =
        tokenOut === "USDC"
          ? Number(amountOut) / 1e6
          : (Number(amountOut) / 1e18) * devnet.deployment.tokens.WETH.initialPriceUsd;
      assert.ok(usdOut < usdIn && usdOut > usdIn * 0.99, `${usdIn} → ${usdOut}`);
    }
  });

  it("swaps on V3 pools in both directions with signed amounts from the pool's view", async () => {
    const pool = devnet.pool("v3:WETH/USDC:500");
    for (const tokenIn of ["USDC", "WETH"] as const) {
      const amountIn = tokenIn === "WETH" ? 10n ** 18n : 3_000n * 10n ** 6n;
      const sent = await devnet.swapV3({ from: wallet, pool, tokenIn, amountIn });
      assert.equal((await txOf(sent.hash)).to, devnet.deployment.v3.swapRouter, "to the V3 SwapRouter");
      const [swap] = v3Swaps(receiptOf(sent));
      assert.ok(swap);
      assert.equal(swap.address, pool.address);
      const zeroIn = devnet.token(tokenIn) === pool.token0;
      const paid = zeroIn ? swap.args.amount0 : swap.args.amount1;
      const received = zeroIn ? swap.args.amount1 : swap.args.amount0;
      assert.equal(paid, amountIn, "positive: what the pool received");
      assert.ok(received < 0n, "negative: what the pool paid out");
      assert.equal(swap.args.recipient.toLowerCase(), wallet);
      assert.equal(swap.args.sender.toLowerCase(), devnet.deployment.v3.swapRouter);
    }
    // The 0.01 % tier (enabled by the deployment) trades too.
    const stable = await devnet.swapV3({
      from: wallet,
      pool: "v3:USDC/USDT:100",
      tokenIn: "USDT",
      amountIn: 10_000n * 10n ** 6n,
    });
    const [swap] = v3Swaps(receiptOf(stable));
    assert.ok(
      swap && (swap.args.amount0 < 0n ? -swap.args.amount0 : -swap.args.amount1) > 9_990n * 10n ** 6n,
      "~1:1",
    );
  });

  it("routes multi-hop trades through WETH on both protocols, one Swap per hop", async () => {
    const v2 = await devnet.swapMultiHop({
      from: wallet,
      protocol: "v2",
      path: ["USDC", "WETH", "KIBL"],
      amountIn: 1_000n * 10n ** 6n,
    });
    const v2Events = v2Swaps(receiptOf(v2));
    assert.deepEqual(
      v2Events.map((e) => e.address),
      [devnet.pool("v2:WETH/USDC").address, devnet.pool("v2:KIBL/WETH").address],
    );
    const v3 = await devnet.swapMultiHop({
      from: wallet,
      protocol: "v3",
      path: ["KIBL", "WETH", "USDC"],
      fees: [10_000, 500],
      amountIn: 100_000n * 10n ** 9n,
    });
    const [first, second] = v3Swaps(receiptOf(v3));
    assert.ok(first && second);
    assert.equal(first.address, devnet.pool("v3:KIBL/WETH:10000").address);
    assert.equal(second.address, devnet.pool("v3:WETH/USDC:500").address);
    // The WETH the first pool paid out is what the second one received.
    const weth = devnet.deployment.tokens.WETH.address;
    const wethOut =
      devnet.pool("v3:KIBL/WETH:10000").token0 === weth ? first.args.amount0 : first.args.amount1;
    const wethIn =
      devnet.pool("v3:WETH/USDC:500").token0 === weth ? second.args.amount0 : second.args.amount1;
    assert.equal(-wethOut, wethIn);
  });

  it("adds and removes liquidity on V2 and V3", async () => {
    const lp = devnet.deployment.accounts.liquidityProviders[0] as Address;
    const pair = devnet.pool("v2:LINK/USDC");
    const added = await devnet.addLiquidityV2({
      from: lp,
      pool: pair,
      amount0: 10n ** 20n,
      amount1: 10n ** 20n,
    });
    assert.equal(
      parseEventLogs({ abi: v2PairAbi, eventName: "Mint", logs: receiptOf(added).logs as never }).length,
      1,
    );
    const removed = await devnet.removeLiquidityV2({ from: lp, pool: pair });
    assert.equal(
      parseEventLogs({ abi: v2PairAbi, eventName: "Burn", logs: receiptOf(removed).logs as never }).length,
      1,
    );

    const pool = devnet.pool("v3:LINK/WETH:3000");
    const minted = await devnet.mintPositionV3({ from: lp, pool, amount0: 10n ** 21n, amount1: 10n ** 21n });
    const [transfer] = parseEventLogs({
      abi: transferAbi,
      eventName: "Transfer",
      logs: receiptOf(minted).logs as never,
    }).filter((e) => e.address === devnet.deployment.v3.positionManager);
    assert.ok(transfer, "a position NFT was minted");
    assert.equal(
      transfer.args.tokenId,
      BigInt(devnet.deployment.positions.length + 1),
      "ids follow the deployment's",
    );
    const [mint] = parseEventLogs({
      abi: v3PoolAbi,
      eventName: "Mint",
      logs: receiptOf(minted).logs as never,
    });
    assert.ok(mint && mint.args.amount > 0n);
    const burned = await devnet.removePositionV3({
      from: lp,
      tokenId: transfer.args.tokenId,
      liquidity: mint.args.amount,
    });
    const logs = receiptOf(burned).logs as never;
    assert.equal(parseEventLogs({ abi: v3PoolAbi, eventName: "Burn", logs }).length, 1);
    assert.equal(parseEventLogs({ abi: v3PoolAbi, eventName: "Collect", logs }).length, 1);
  });

  it("throws on a reverted trade, naming it", async () => {
    const pool = devnet.pool("v2:WETH/USDC");
    const tx = v2SwapTx({
      periphery: peripheryOf(devnet.deployment),
      from: wallet,
      path: [pool.token0, pool.token1],
      amountIn: 1000n,
      amountOutMin: 10n ** 30n,
    });
    await assert.rejects(devnet.send(tx), (error: Error) => {
      assert.equal(error.name, "DevnetTxError");
      assert.ok(error.message.startsWith("V2 swap 1000 along"), error.message);
      assert.ok(error.message.includes("INSUFFICIENT_OUTPUT_AMOUNT"), "the router's reason");
      return true;
    });
  });

  it("mines on demand, at chosen times, several trades per block, and reverts to snapshots", async () => {
    const snapshot = await devnet.snapshot();
    const before = await devnet.latestBlock();
    await devnet.setAutomine(false);
    const a = await devnet.swapV2({
      from: wallet,
      pool: "v2:WETH/DAI",
      tokenIn: "DAI",
      amountIn: 10n ** 21n,
    });
    const b = await devnet.swapV3({
      from: wallet,
      pool: "v3:MKR/DAI:3000",
      tokenIn: "DAI",
      amountIn: 10n ** 21n,
    });
    assert.equal(a.receipt, null, "waits for mine()");
    await devnet.mine({ timestamp: before.timestamp + 3600 });
    await devnet.setAutomine(true);
    const block = await devnet.latestBlock();
    assert.equal(block.number, before.number + 1);
    assert.equal(block.timestamp, before.timestamp + 3600);
    const receipts = await devnet.rpc.batch<TxReceipt>([
      { method: "eth_getTransactionReceipt", params: [a.hash] },
      { method: "eth_getTransactionReceipt", params: [b.hash] },
    ]);
    assert.deepEqual(
      receipts.map((r) => [Number(r.blockNumber), r.status]),
      [
        [block.number, "0x1"],
        [block.number, "0x1"],
      ],
    );
    await devnet.mine({ blocks: 10, interval: 12 });
    const last = await devnet.latestBlock();
    const first = await devnet.rpc.request<{ timestamp: Hex }>("eth_getBlockByNumber", [
      `0x${(block.number + 1).toString(16)}`,
      false,
    ]);
    assert.equal(last.number, block.number + 10);
    assert.equal(last.timestamp - Number(first.timestamp), 9 * 12, "12 s apart");
    await devnet.revert(snapshot);
    assert.deepEqual(await devnet.latestBlock(), before);
  });
});
