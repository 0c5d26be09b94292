// Uniswap V2 on the devnet: the official factory and Router02 from npm, one pair per token pair,
// reserves read from the pair's storage, trades and liquidity through the router.
import {
  type Address,
  decodeFunctionResult,
  encodeDeployData,
  encodeEventTopics,
  encodeFunctionData,
  encodePacked,
  getContractAddress,
  type Hex,
  keccak256,
  numberToHex,
} from "viem";
import { v2FactoryAbi, v2PairAbi, v2RouterAbi } from "../abis.js";
import { uniswapBytecode, V2_PAIR_INIT_CODE_HASH } from "../artifacts.js";
import { type DeployedPool, peripheryOf, rawAmountForUsd } from "../deploy.js";
import { beginLiquidityAdd, viewCall } from "../liquidity-planning.js";
import { v2AddLiquidityTx, v2RemoveLiquidityTx, v2SwapTx } from "../periphery.js";
import { deployTx, tradePath } from "./shared.js";
import { type ReservesState, reservesState } from "./states.js";
import type { DevnetFamily } from "./types.js";

// UniswapV2Pair packs reserve0 (112 bits), reserve1 (112) and blockTimestampLast (32) in slot 8
// (fixed by the deployed bytecode; deploy.test.ts checks it against getReserves).
const reservesSlot = numberToHex(8);
const mask112 = (1n << 112n) - 1n;

export const uniswapV2Devnet = {
  name: "v2" as const,
  ownStream: false,

  contractTxs(plan) {
    const from = plan.accounts.deployer;
    return {
      beforeTokens: [
        deployTx(
          from,
          encodeDeployData({ abi: v2FactoryAbi, bytecode: uniswapBytecode("v2Factory"), args: [from] }),
          "UniswapV2Factory",
        ),
        deployTx(
          from,
          encodeDeployData({
            abi: v2RouterAbi,
            bytecode: uniswapBytecode("v2Router02"),
            args: [plan.v2.factory, plan.weth],
          }),
          "UniswapV2Router02",
        ),
      ],
      afterTokens: [],
    };
  },
  placePool(_spec, token0, token1, contracts) {
    return {
      address: pairAddress(contracts.v2.factory, token0, token1),
      tickSpacing: null,
      hooks: null,
      poolManager: null,
    };
  },
  deployerPositions: () => [],
  deposits(pool, spec, plan) {
    const t0 = plan.tokens[pool.token0Key];
    const t1 = plan.tokens[pool.token1Key];
    const amount0 = rawAmountForUsd(t0, spec.fullRangeUsd / 2);
    const amount1 = rawAmountForUsd(t1, spec.fullRangeUsd / 2);
    return [{ pool, token0Key: t0.key, token1Key: t1.key, amount0, amount1 }];
  },
  creationTxs(deposit, plan) {
    const { pool } = deposit;
    return [
      v2AddLiquidityTx({
        periphery: peripheryOf(plan),
        from: plan.accounts.deployer,
        tokenA: pool.token0,
        tokenB: pool.token1,
        amountA: deposit.amount0,
        amountB: deposit.amount1,
        newPair: true,
      }),
    ];
  },
  spenders: (plan) => ({ everyToken: [plan.v2.router], ownTokens: [] }),
  deploymentCheck: (pool, plan) => ({
    lookup: {
      to: plan.v2.factory,
      data: encodeFunctionData({
        abi: v2FactoryAbi,
        functionName: "getPair",
        args: [pool.token0, pool.token1],
      }),
    },
  }),
  // Removing liquidity through the router needs the pair's LP token approved to it.
  providerApprovals: (pool, plan) => [{ token: pool.address, spender: plan.v2.router }],

  stateCalls: (pool) => [{ method: "eth_getStorageAt", params: [pool.address, reservesSlot, "latest"] }],
  decodeState(_pool, next) {
    const word = next();
    return reservesState(word & mask112, (word >> 112n) & mask112);
  },

  swapTopic: encodeEventTopics({ abi: v2PairAbi, eventName: "Swap" })[0] as Hex,
  // Every V2 pair charges 0.3 %.
  routeFee: () => 3000,
  tradeTx: (periphery, trade) =>
    v2SwapTx({ periphery, from: trade.from, path: tradePath(trade), amountIn: trade.amountIn }),

  /**
   * Removes in two steps (the provider's LP balance is read with this block, a share of it is
   * removed in the next), or adds at the pair's own ratio, so the router takes both amounts
   * (nearly) whole.
   */
  planLiquidityChange(context, rng, planned, { lp, pool, remove }) {
    const { book, periphery } = context;
    const busyKey = `${lp}:${pool.key}`;
    if (remove && !book.busyV2Removals.has(busyKey)) {
      book.busyV2Removals.add(busyKey);
      const balanceRead = planned.reads.length;
      const share = 0.3 + 0.6 * rng.next();
      planned.intents.push({
        protocol: "v2",
        lp,
        pool,
        balanceRead,
        share,
        complete(ctx, read, out) {
          ctx.book.busyV2Removals.delete(busyKey);
          const result = read(balanceRead);
          if (result === undefined) return;
          const balance = decodeFunctionResult({ abi: v2PairAbi, functionName: "balanceOf", data: result });
          const liquidity = (balance * BigInt(Math.floor(share * 1000))) / 1000n;
          if (liquidity === 0n) return;
          out.txs.push(
            v2RemoveLiquidityTx({
              periphery: ctx.periphery,
              from: lp,
              tokenA: pool.token0,
              tokenB: pool.token1,
              liquidity,
            }),
          );
          ctx.estimates.dirty.add(pool.key);
          out.liquidityChanges++;
        },
      });
      planned.reads.push(
        viewCall(pool.address, encodeFunctionData({ abi: v2PairAbi, functionName: "balanceOf", args: [lp] })),
      );
      return;
    }
    const { state, usd } = beginLiquidityAdd(context, rng, planned, pool);
    const reserves = reservesOf(state);
    const share = usd / pool.initialLiquidityUsd;
    const amountA = BigInt(Math.floor(Number(reserves.reserve0) * share));
    const amountB = BigInt(Math.floor(Number(reserves.reserve1) * share));
    planned.txs.push(
      v2AddLiquidityTx({ periphery, from: lp, tokenA: pool.token0, tokenB: pool.token1, amountA, amountB }),
    );
  },
} satisfies DevnetFamily;

/** A V2 removal under way: a share of the provider's LP balance, read with the block that decided it. */
export type V2Removal = {
  protocol: "v2";
  lp: Address;
  pool: DeployedPool;
  balanceRead: number;
  share: number;
};

function reservesOf(state: { protocol: string }): ReservesState {
  if (!("reserve0" in state)) throw new Error("a V2 pair's state is its reserves");
  return state as ReservesState;
}

function pairAddress(factory: Address, token0: Address, token1: Address): Address {
  return getContractAddress({
    opcode: "CREATE2",
    from: factory,
    salt: keccak256(encodePacked(["address", "address"], [token0, token1])),
    bytecodeHash: V2_PAIR_INIT_CODE_HASH,
  }).toLowerCase() as Address;
}
