// Uniswap V3 on the devnet: the official factory, NonfungiblePositionManager and SwapRouter from
// npm; the deployer's positions (full range and ranges around the price) are position-manager
// NFTs, providers mint and burn their own, traders swap through the router.
import {
  type Address,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeDeployData,
  encodeEventTopics,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  keccak256,
  numberToHex,
  parseAbi,
} from "viem";
import { positionManagerAbi, swapRouterAbi, v3FactoryAbi, v3PoolAbi } from "../abis.js";
import { uniswapBytecode, V3_POOL_INIT_CODE_HASH } from "../artifacts.js";
import { peripheryOf } from "../deploy.js";
import { beginLiquidityAdd, viewCall } from "../liquidity-planning.js";
import { tickSpacingByFee } from "../market.js";
import { noTokenDescriptor, v3CreatePoolTx, v3MintTx, v3RemoveLiquidityTx, v3SwapTx } from "../periphery.js";
import {
  amountsForUsd,
  fullRangeTicks,
  rangeTicks,
  rawPriceFromUsd,
  sqrtPriceX96FromPrice,
} from "../pool-math.js";
import { poolRawPrice } from "../pool-state.js";
import { deployTx, initialRawPrice, tradePath, usdUnit } from "./shared.js";
import { concentratedFromWords } from "./states.js";
import type { DevnetFamily } from "./types.js";

const erc721Abi = parseAbi(["function ownerOf(uint256 tokenId) view returns (address)"]);

// UniswapV3Pool keeps Slot0 (sqrtPriceX96 in the low 160 bits) in slot 0 and liquidity in slot 4
// (fixed by the deployed bytecode; deploy.test.ts checks them against the view functions).
const slot0Slot = numberToHex(0);
const liquiditySlot = numberToHex(4);

/** The family's registry name. */
const name = "v3" as const;

export const uniswapV3Devnet = {
  name,
  ownStream: false,

  contractTxs(plan) {
    const from = plan.accounts.deployer;
    return {
      beforeTokens: [
        deployTx(from, uniswapBytecode("v3Factory"), "UniswapV3Factory"),
        deployTx(
          from,
          encodeDeployData({
            abi: positionManagerAbi,
            bytecode: uniswapBytecode("positionManager"),
            args: [plan.v3.factory, plan.weth, noTokenDescriptor],
          }),
          "NonfungiblePositionManager",
        ),
        deployTx(
          from,
          encodeDeployData({
            abi: swapRouterAbi,
            bytecode: uniswapBytecode("swapRouter"),
            args: [plan.v3.factory, plan.weth],
          }),
          "SwapRouter",
        ),
      ],
      afterTokens: [
        // Fee tier 0.01 % (tick spacing 1), enabled by governance on mainnet in 2021; not in the factory's constructor.
        {
          from,
          to: plan.v3.factory,
          data: encodeFunctionData({ abi: v3FactoryAbi, functionName: "enableFeeAmount", args: [100, 1] }),
          gas: 100_000n,
          label: "enable the V3 fee tier 100",
        },
      ],
    };
  },
  placePool(spec, token0, token1, contracts) {
    return {
      address: poolAddress(contracts.v3.factory, token0, token1, spec.fee),
      tickSpacing: tickSpacingByFee[spec.fee] ?? null,
      hooks: null,
      poolManager: null,
    };
  },
  deployerPositions(spec, placement, token0, token1) {
    const { tickSpacing } = placement;
    if (tickSpacing === null) return [];
    const rawPrice = rawPriceFromUsd(usdUnit(token0), usdUnit(token1));
    return [null, ...(spec.ranges ?? [])].map((range) =>
      range === null ? fullRangeTicks(tickSpacing) : rangeTicks(rawPrice, range.widthPct, tickSpacing),
    );
  },
  deposits(pool, spec, plan) {
    const t0 = plan.tokens[pool.token0Key];
    const t1 = plan.tokens[pool.token1Key];
    const base = { pool, token0Key: t0.key, token1Key: t1.key };
    const rawPrice = rawPriceFromUsd(usdUnit(t0), usdUnit(t1));
    const ranges = [{ usd: spec.fullRangeUsd, widthPct: null }, ...(spec.ranges ?? [])];
    const positions = plan.positions.filter((p) => p.poolKey === pool.key);
    return ranges.flatMap((range, i) => {
      const position = positions[i];
      if (position === undefined) return [];
      const ticks = { tickLower: position.tickLower, tickUpper: position.tickUpper };
      const amounts = amountsForUsd({
        usd: range.usd,
        rawPrice,
        ...ticks,
        token0: usdUnit(t0),
        token1: usdUnit(t1),
      });
      return [{ ...base, ...amounts, ticks }];
    });
  },
  creationTxs(deposit, plan, created) {
    const { pool } = deposit;
    const from = plan.accounts.deployer;
    const txs = [];
    if (!created.has(pool.key)) {
      created.add(pool.key);
      txs.push(
        v3CreatePoolTx({
          periphery: peripheryOf(plan),
          from,
          token0: pool.token0,
          token1: pool.token1,
          fee: pool.fee,
          sqrtPriceX96: sqrtPriceX96FromPrice(initialRawPrice(pool, plan)),
        }),
      );
    }
    if (deposit.ticks === undefined) return txs;
    txs.push(
      v3MintTx({
        periphery: peripheryOf(plan),
        from,
        token0: pool.token0,
        token1: pool.token1,
        fee: pool.fee,
        ...deposit.ticks,
        amount0: deposit.amount0,
        amount1: deposit.amount1,
      }),
    );
    return txs;
  },
  spenders: (plan) => ({ everyToken: [plan.v3.swapRouter, plan.v3.positionManager], ownTokens: [] }),
  deploymentCheck: (pool, plan) => ({
    lookup: {
      to: plan.v3.factory,
      data: encodeFunctionData({
        abi: v3FactoryAbi,
        functionName: "getPool",
        args: [pool.token0, pool.token1, pool.fee],
      }),
    },
  }),
  providerApprovals: () => [],

  stateCalls: (pool) => [
    { method: "eth_getStorageAt", params: [pool.address, slot0Slot, "latest"] },
    { method: "eth_getStorageAt", params: [pool.address, liquiditySlot, "latest"] },
  ],
  decodeState: (_pool, next) => concentratedFromWords(next(), next()),

  swapTopic: encodeEventTopics({ abi: v3PoolAbi, eventName: "Swap" })[0] as Hex,
  tradeTx: (periphery, trade) =>
    v3SwapTx({
      periphery,
      from: trade.from,
      path: tradePath(trade),
      fees: trade.hops.map((h) => h.pool.fee),
      amountIn: trade.amountIn,
    }),

  /**
   * Removes a position the provider minted here whole (in two steps: its position and owner are
   * read with this block, it is removed in the next), or mints a new one around the price.
   */
  planLiquidityChange(context, rng, planned, { lp, pool, remove }) {
    const { book, estimates, periphery } = context;
    const own = book.lpPositions.findIndex((p) => p.owner === lp);
    if (remove && own >= 0) {
      const [position] = book.lpPositions.splice(own, 1);
      if (position === undefined) return;
      const { tokenId } = position;
      const positionRead = planned.reads.length;
      const ownerRead = planned.reads.length + 1;
      planned.intents.push({
        protocol: name,
        lp,
        tokenId,
        positionRead,
        ownerRead,
        complete(ctx, read, out) {
          const positionResult = read(positionRead);
          const ownerResult = read(ownerRead);
          if (positionResult === undefined || ownerResult === undefined) return;
          const decoded = decodePosition(positionResult, ownerResult);
          // A read that does not decode as asked (not the position manager's answer) is left alone.
          if (decoded === undefined) return;
          const { owner, position } = decoded;
          const liquidity = position[7];
          // A position that is not the provider's (an id assumption gone wrong) is left alone.
          if (owner.toLowerCase() !== lp || liquidity === 0n) return;
          out.txs.push(v3RemoveLiquidityTx({ periphery: ctx.periphery, from: lp, tokenId, liquidity }));
          const removedFrom = ctx.estimates.deployment.pools.find(
            (p) =>
              p.protocol === name &&
              p.fee === position[4] &&
              p.token0 === position[2].toLowerCase() &&
              p.token1 === position[3].toLowerCase(),
          );
          if (removedFrom !== undefined) ctx.estimates.dirty.add(removedFrom.key);
          out.liquidityChanges++;
        },
      });
      planned.reads.push(
        viewCall(
          periphery.positionManager,
          encodeFunctionData({ abi: positionManagerAbi, functionName: "positions", args: [tokenId] }),
        ),
        viewCall(
          periphery.positionManager,
          encodeFunctionData({ abi: erc721Abi, functionName: "ownerOf", args: [tokenId] }),
        ),
      );
      return;
    }
    const { state, usd } = beginLiquidityAdd(context, rng, planned, pool);
    const rawPrice = poolRawPrice(state);
    const widthPct = pool.fee <= 100 ? 0.1 + rng.next() * 0.9 : 2 + rng.next() * 23;
    const ticks = rangeTicks(rawPrice, widthPct, pool.tickSpacing ?? 60);
    const amounts = amountsForUsd({
      usd,
      rawPrice,
      ...ticks,
      token0: estimates.unit(pool.token0Key),
      token1: estimates.unit(pool.token1Key),
    });
    planned.txs.push(
      v3MintTx({
        periphery,
        from: lp,
        token0: pool.token0,
        token1: pool.token1,
        fee: pool.fee,
        ...ticks,
        ...amounts,
      }),
    );
    book.lpPositions.push({ tokenId: book.nextTokenId++, owner: lp });
  },
} satisfies DevnetFamily;

/** A V3 removal under way: a position the provider minted, whose position and owner are read first. */
export type V3Removal = {
  protocol: "v3";
  lp: Address;
  tokenId: bigint;
  positionRead: number;
  ownerRead: number;
};

function decodePosition(positionResult: Hex, ownerResult: Hex) {
  try {
    return {
      owner: decodeFunctionResult({ abi: erc721Abi, functionName: "ownerOf", data: ownerResult }),
      position: decodeFunctionResult({
        abi: positionManagerAbi,
        functionName: "positions",
        data: positionResult,
      }),
    };
  } catch {
    return undefined;
  }
}

function poolAddress(factory: Address, token0: Address, token1: Address, fee: number): Address {
  return getContractAddress({
    opcode: "CREATE2",
    from: factory,
    salt: keccak256(
      encodeAbiParameters(
        [{ type: "address" }, { type: "address" }, { type: "uint24" }],
        [token0, token1, fee],
      ),
    ),
    bytecodeHash: V3_POOL_INIT_CODE_HASH,
  }).toLowerCase() as Address;
}
