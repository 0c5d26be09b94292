import type { Address, Hex } from "viem";
import {
  algebraCreatePoolTxs,
  algebraMintTx,
  algebraPoolAddress,
  algebraRemoveLiquidityTxs,
  algebraSwapTx,
} from "../devnet/algebra.js";
import { type Deployment, v4KeyOf } from "../devnet/deploy.js";
import type { TokenKey } from "../devnet/market.js";
import { approveTx } from "../devnet/periphery.js";
import { fullRangeTicks, rawPriceFromUsd, sqrtPriceX96FromPrice } from "../devnet/pool-math.js";
import { DevnetTxError, type TxReceipt, type TxRequest } from "../devnet/transactions.js";
import {
  liquidityForUsd,
  nativeCurrency,
  type PoolKey,
  poolIdOf,
  saltOf,
  v4InitializeTx,
  v4ModifyLiquidityTx,
  v4SwapTx,
} from "../devnet/v4.js";
import type { TestDevnet } from "./devnet.js";

/** What one block of mineFamilyEvents holds beyond the deployed pools' liquidity changes and swaps. */
export type FamilyEvents = {
  /** A new V4 pool (no hooks) of these tokens, fee and spacing: Initialize, liquidity, a swap. */
  newV4Pool?: { tokens: [TokenKey, TokenKey]; fee: number; tickSpacing: number };
  /** A new Algebra pool of these tokens: the factory's Pool event, Initialize, a mint, a swap. */
  newAlgebraPool?: [TokenKey, TokenKey];
  /** Scales the amounts, so that two branches of a reorg differ. */
  size?: number;
};

export type MinedFamilyEvents = { block: number; v4PoolId: Hex | null; algebraPool: Address | null };

// The deployed pools the block changes: a V4 pool without native coin (no value to send) and the
// Algebra pool.
const v4PoolKey = "v4:LINK/WETH:3000:hook";

/**
 * Mines one block, 12 s after the head, whose transactions (all the deployer's, so its nonces
 * order them) are: on the deployed V4 pool, liquidity added and part of it removed
 * (ModifyLiquidity ±) and a swap; on the deployed Algebra pool, a mint, a swap, a burn and its
 * collect; and the new pools asked for. Every transaction must succeed.
 */
export async function mineFamilyEvents(devnet: TestDevnet, events: FamilyEvents): Promise<MinedFamilyEvents> {
  const { deployment } = devnet;
  const from = deployment.accounts.deployer;
  const size = BigInt(Math.round((events.size ?? 1) * 1000));
  const txs: TxRequest[] = [];

  const v4Pool = devnet.pool(v4PoolKey);
  const v4Key = v4KeyOf(v4Pool);
  const v4Ticks = fullRangeTicks(v4Pool.tickSpacing ?? 60);
  const usd = 50_000 * (events.size ?? 1);
  const v4Liquidity = liquidityOf(deployment, v4Pool.token0Key, v4Pool.token1Key, usd);
  const modify = (key: PoolKey, ticks: { tickLower: number; tickUpper: number }, liquidityDelta: bigint) =>
    v4ModifyLiquidityTx({
      router: deployment.v4.modifyLiquidityRouter,
      from,
      key,
      ...ticks,
      liquidityDelta,
      salt: saltOf(from),
    });
  const v4Swap = (key: PoolKey, amountIn: bigint) =>
    v4SwapTx({ router: deployment.v4.swapRouter, from, key, zeroForOne: true, amountIn });
  txs.push(
    modify(v4Key, v4Ticks, v4Liquidity),
    v4Swap(v4Key, (rawAmount(deployment, v4Pool.token0Key, 300) * size) / 1000n),
    modify(v4Key, v4Ticks, -v4Liquidity / 2n),
  );

  const algebra = deployment.pools.find((p) => p.protocol === "algebra");
  if (algebra === undefined) throw new Error("the devnet has no Algebra pool");
  const algebraTicks = fullRangeTicks(algebra.tickSpacing ?? 60);
  const algebraLiquidity = liquidityOf(deployment, algebra.token0Key, algebra.token1Key, usd);
  txs.push(
    algebraMintTx({
      callee: deployment.algebra.callee,
      from,
      pool: algebra.address,
      ...algebraTicks,
      liquidity: algebraLiquidity,
    }),
    algebraSwapTx({
      callee: deployment.algebra.callee,
      from,
      pool: algebra.address,
      zeroForOne: false,
      amountIn: (rawAmount(deployment, algebra.token1Key, 500) * size) / 1000n,
    }),
    ...algebraRemoveLiquidityTxs({
      from,
      pool: algebra.address,
      ...algebraTicks,
      liquidity: algebraLiquidity / 3n,
    }),
  );

  let v4PoolId: Hex | null = null;
  if (events.newV4Pool) {
    const { tokens, fee, tickSpacing } = events.newV4Pool;
    const [a, b] = sorted(deployment, tokens);
    const key: PoolKey = {
      currency0: a.address,
      currency1: b.address,
      fee,
      tickSpacing,
      hooks: nativeCurrency,
    };
    v4PoolId = poolIdOf(key);
    const ticks = fullRangeTicks(tickSpacing);
    txs.push(
      v4InitializeTx({ from, manager: deployment.v4.poolManager, key, sqrtPriceX96: sqrtPriceOf(a, b) }),
      modify(key, ticks, liquidityOf(deployment, a.key, b.key, usd)),
      v4Swap(key, rawAmount(deployment, a.key, 200)),
    );
  }

  let algebraPool: Address | null = null;
  if (events.newAlgebraPool) {
    const [a, b] = sorted(deployment, events.newAlgebraPool);
    algebraPool = algebraPoolAddress(deployment.algebra.poolDeployer, a.address, b.address);
    const ticks = fullRangeTicks(60);
    txs.push(
      // The callee takes only the deployed Algebra pool's tokens until approved for others.
      ...[a, b].map((t) => approveTx({ from, token: t.address, spender: deployment.algebra.callee })),
      ...algebraCreatePoolTxs({
        from,
        factory: deployment.algebra.factory,
        pool: algebraPool,
        token0: a.address,
        token1: b.address,
        sqrtPriceX96: sqrtPriceOf(a, b),
      }),
      algebraMintTx({
        callee: deployment.algebra.callee,
        from,
        pool: algebraPool,
        ...ticks,
        liquidity: liquidityOf(deployment, a.key, b.key, usd),
      }),
      algebraSwapTx({
        callee: deployment.algebra.callee,
        from,
        pool: algebraPool,
        zeroForOne: true,
        amountIn: rawAmount(deployment, a.key, 200),
      }),
    );
  }

  const hashes: Hex[] = [];
  for (const tx of txs) hashes.push((await devnet.send(tx)).hash);
  const head = await devnet.latestBlock();
  await devnet.mine({ timestamp: head.timestamp + 12 });
  const receipts = await devnet.rpc.batch<TxReceipt | null>(
    hashes.map((hash) => ({ method: "eth_getTransactionReceipt", params: [hash] })),
  );
  receipts.forEach((receipt, i) => {
    const label = txs[i]?.label ?? "transaction";
    if (receipt?.status !== "0x1") throw new DevnetTxError(`${label}: ${receipt ? "reverted" : "not mined"}`);
    if (Number(receipt.blockNumber) !== head.number + 1)
      throw new DevnetTxError(`${label}: not in the one block`);
  });
  return { block: head.number + 1, v4PoolId, algebraPool };
}

type Token = Deployment["tokens"][TokenKey];

function sorted(deployment: Deployment, keys: [TokenKey, TokenKey]): [Token, Token] {
  const a = deployment.tokens[keys[0]];
  const b = deployment.tokens[keys[1]];
  return a.address < b.address ? [a, b] : [b, a];
}

function sqrtPriceOf(a: Deployment["tokens"][TokenKey], b: Deployment["tokens"][TokenKey]): bigint {
  const unit = (t: Deployment["tokens"][TokenKey]) => ({
    priceUsd: t.initialPriceUsd,
    decimals: t.unitDecimals,
  });
  return sqrtPriceX96FromPrice(rawPriceFromUsd(unit(a), unit(b)));
}

/** Full-range liquidity worth about `usd` at the tokens' initial prices. */
function liquidityOf(deployment: Deployment, key0: TokenKey, key1: TokenKey, usd: number): bigint {
  const [t0, t1] = [deployment.tokens[key0], deployment.tokens[key1]];
  const unit = (t: Token) => ({ priceUsd: t.initialPriceUsd, decimals: t.unitDecimals });
  return liquidityForUsd(usd, Math.sqrt(rawPriceFromUsd(unit(t0), unit(t1))), unit(t1));
}

function rawAmount(deployment: Deployment, key: TokenKey, usd: number): bigint {
  const token = deployment.tokens[key];
  return BigInt(Math.floor((usd / token.initialPriceUsd) * 10 ** token.unitDecimals));
}
