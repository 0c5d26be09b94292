import { type Address, decodeFunctionResult, encodeFunctionData, type Hex, numberToHex } from "viem";
import { erc20Abi, v2PairAbi } from "../devnet/abis.js";
import { type DeployedPool, type Deployment, deployMarket, peripheryOf } from "../devnet/deploy.js";
import type { TokenKey } from "../devnet/market.js";
import { startHardhatNode } from "../devnet/node.js";
import {
  approveTx,
  v2AddLiquidityTx,
  v2RemoveLiquidityTx,
  v2SwapTx,
  v3MintTx,
  v3RemoveLiquidityTx,
  v3SwapTx,
} from "../devnet/periphery.js";
import { fullRangeTicks } from "../devnet/pool-math.js";
import { createDevnetRpc, type DevnetRpc } from "../devnet/rpc.js";
import { DevnetTxError, type TxReceipt, type TxRequest } from "../devnet/transactions.js";
import { createLogger, createSilentLogger } from "../internal/logger.js";

/** A pool given by its key ("v3:WETH/USDC:500", "v2:LINK/USDC") or as deployed. */
export type PoolRef = string | DeployedPool;
/** A token given by its devnet key ("USDC", "FAKEUSDC") or its address. */
export type TokenRef = TokenKey | Address;

/**
 * What a helper transaction gave: its hash, and its receipt once mined (null while automining
 * is off, until `mine()`). A reverted transaction throws instead.
 */
export type SentTx = { hash: Hex; receipt: TxReceipt | null };

/** An exact-input swap on one pool; `tokenIn` picks the direction. */
export type PoolSwapOptions = {
  from: Address;
  pool: PoolRef;
  tokenIn: TokenRef;
  amountIn: bigint;
  recipient?: Address;
};

export type TestDevnet = {
  rpcUrl: string;
  wsUrl: string;
  chainId: number;
  /** The node's process (SIGSTOP freezes it: the tests of readiness). */
  pid: number;
  deployment: Deployment;
  /** The node's unlocked, funded wallets (every one holds each token and approved the routers). */
  wallets: Address[];
  rpc: DevnetRpc;
  /** Stops the node. Idempotent; call it in `after()`. */
  stop(): Promise<void>;
  /** Snapshot of the chain (evm_snapshot); an id can be reverted to once. */
  snapshot(): Promise<Hex>;
  revert(id: Hex): Promise<void>;
  /** Mines `blocks` blocks (default 1), the first at `timestamp` when given, `interval` seconds apart. */
  mine(options?: { blocks?: number; timestamp?: number | Date; interval?: number }): Promise<void>;
  /** On by default: each helper transaction is its own block. Off: transactions wait for mine(). */
  setAutomine(on: boolean): Promise<void>;
  latestBlock(): Promise<{ number: number; timestamp: number; hash: Hex }>;
  pool(ref: PoolRef): DeployedPool;
  token(ref: TokenRef): Address;
  balanceOf(token: TokenRef, owner: Address): Promise<bigint>;
  /** Exact-input swap on one V2 pair through Router02; `tokenIn` picks the direction. */
  swapV2(options: PoolSwapOptions): Promise<SentTx>;
  /** Exact-input swap on one V3 pool through the SwapRouter (exactInputSingle). */
  swapV3(options: PoolSwapOptions): Promise<SentTx>;
  /** Exact-input multi-hop swap: V2 along `path`, or V3 along `path` with one fee tier per hop. */
  swapMultiHop(options: {
    from: Address;
    protocol: "v2" | "v3";
    path: readonly TokenRef[];
    fees?: readonly number[];
    amountIn: bigint;
    recipient?: Address;
  }): Promise<SentTx>;
  addLiquidityV2(options: {
    from: Address;
    pool: PoolRef;
    amount0: bigint;
    amount1: bigint;
  }): Promise<SentTx>;
  /** Burns `liquidity` LP tokens of the wallet (default: all it holds); approves the router first. */
  removeLiquidityV2(options: { from: Address; pool: PoolRef; liquidity?: bigint }): Promise<SentTx>;
  /** Mints a V3 position (full range unless ticks are given); the new token id is in the receipt. */
  mintPositionV3(options: {
    from: Address;
    pool: PoolRef;
    amount0: bigint;
    amount1: bigint;
    tickLower?: number;
    tickUpper?: number;
  }): Promise<SentTx>;
  /** Removes `liquidity` of a V3 position and collects the tokens to its owner. */
  removePositionV3(options: { from: Address; tokenId: bigint; liquidity: bigint }): Promise<SentTx>;
  /** Sends any transaction built with src/devnet/periphery.ts (or by hand). */
  send(tx: TxRequest): Promise<SentTx>;
};

/**
 * Starts a fresh Hardhat node for one test file (on a free port, so files run in parallel) with
 * the market deployed but no history: about a second. Logs are silent unless DEVNET_LOG is set
 * (to a pino level).
 */
export async function startTestDevnet(
  options: { chainId?: number; seed?: number; port?: number; initialDate?: Date } = {},
): Promise<TestDevnet> {
  const logger = process.env.DEVNET_LOG
    ? createLogger({ level: process.env.DEVNET_LOG, name: "devnet" })
    : createSilentLogger();
  const node = await startHardhatNode({
    port: options.port ?? 0,
    chainId: options.chainId ?? 31337,
    ...(options.initialDate ? { initialDate: options.initialDate } : {}),
    logger,
  });
  let deployment: Deployment;
  try {
    deployment = await deployMarket({ rpcUrl: node.rpcUrl, seed: options.seed ?? 42, logger });
  } catch (error) {
    await node.stop();
    throw error;
  }
  const rpc = createDevnetRpc(node.rpcUrl);
  const periphery = peripheryOf(deployment);
  let automine = true;

  const pool = (ref: PoolRef): DeployedPool => {
    if (typeof ref !== "string") return ref;
    const found = deployment.pools.find((p) => p.key === ref || p.address === ref.toLowerCase());
    if (found === undefined) throw new Error(`no devnet pool ${ref}`);
    return found;
  };
  const token = (ref: TokenRef): Address => {
    if (ref.startsWith("0x")) return ref.toLowerCase() as Address;
    const found = deployment.tokens[ref as TokenKey];
    if (found === undefined) throw new Error(`no devnet token ${ref}`);
    return found.address;
  };
  const call = async (to: Address, data: Hex) => rpc.request<Hex>("eth_call", [{ to, data }, "latest"]);
  const balanceOf = async (ref: TokenRef, owner: Address) =>
    decodeFunctionResult({
      abi: erc20Abi,
      functionName: "balanceOf",
      data: await call(
        token(ref),
        encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [owner] }),
      ),
    });

  const send = async (tx: TxRequest): Promise<SentTx> => {
    let hash: Hex;
    try {
      hash = await rpc.request<Hex>("eth_sendTransaction", [
        {
          from: tx.from,
          ...(tx.to ? { to: tx.to } : {}),
          data: tx.data,
          value: numberToHex(tx.value ?? 0n),
          gas: numberToHex(tx.gas),
        },
      ]);
    } catch (error) {
      // Automining, Hardhat answers a reverted transaction with an error: say which one it was.
      throw new DevnetTxError(`${tx.label}: ${(error as Error).message}`, { cause: error });
    }
    if (!automine) return { hash, receipt: null };
    const receipt = await rpc.request<TxReceipt | null>("eth_getTransactionReceipt", [hash]);
    if (receipt === null) throw new DevnetTxError(`${tx.label}: not mined although automining is on`);
    if (receipt.status !== "0x1") throw new DevnetTxError(`${tx.label}: reverted (${hash})`);
    return { hash, receipt };
  };

  /** Exact-input swap along `path` (token addresses): V2's router, or V3's with one fee tier per hop. */
  const swapAlong = (o: Omit<Parameters<TestDevnet["swapMultiHop"]>[0], "path"> & { path: Address[] }) => {
    const common = {
      periphery,
      from: o.from,
      path: o.path,
      amountIn: o.amountIn,
      ...(o.recipient ? { recipient: o.recipient } : {}),
    };
    if (o.protocol === "v2") return send(v2SwapTx(common));
    if (o.fees === undefined) throw new Error("a V3 multi-hop swap needs the fee tier of each hop");
    return send(v3SwapTx({ ...common, fees: o.fees }));
  };

  const swapOnPool = (protocol: "v2" | "v3", o: PoolSwapOptions) => {
    const p = pool(o.pool);
    if (p.protocol !== protocol) throw new Error(`${p.key} is not a ${protocol} pool`);
    const tokenIn = token(o.tokenIn);
    if (tokenIn !== p.token0 && tokenIn !== p.token1)
      throw new Error(`${o.tokenIn} is not a token of ${p.key}`);
    const path = [tokenIn, tokenIn === p.token0 ? p.token1 : p.token0];
    return swapAlong({ ...o, protocol, path, fees: [p.fee] });
  };

  let stopping: Promise<void> | undefined;
  return {
    rpcUrl: node.rpcUrl,
    wsUrl: node.wsUrl,
    chainId: node.chainId,
    pid: node.pid,
    deployment,
    wallets: [
      deployment.accounts.deployer,
      ...deployment.accounts.liquidityProviders,
      ...deployment.accounts.traders,
    ],
    rpc,
    stop() {
      stopping ??= node.stop();
      return stopping;
    },
    snapshot: () => rpc.request<Hex>("evm_snapshot"),
    async revert(id) {
      if (!(await rpc.request<boolean>("evm_revert", [id])))
        throw new Error(`snapshot ${id} cannot be reverted to`);
    },
    async mine(o = {}) {
      const blocks = o.blocks ?? 1;
      if (o.timestamp !== undefined) {
        const seconds = o.timestamp instanceof Date ? Math.floor(o.timestamp.getTime() / 1000) : o.timestamp;
        await rpc.request("evm_setNextBlockTimestamp", [seconds]);
      }
      await rpc.request("hardhat_mine", [
        numberToHex(blocks),
        ...(o.interval !== undefined ? [numberToHex(o.interval)] : []),
      ]);
    },
    async setAutomine(on) {
      await rpc.request("evm_setAutomine", [on]);
      automine = on;
    },
    async latestBlock() {
      const block = await rpc.request<{ number: Hex; timestamp: Hex; hash: Hex }>("eth_getBlockByNumber", [
        "latest",
        false,
      ]);
      return { number: Number(block.number), timestamp: Number(block.timestamp), hash: block.hash };
    },
    pool,
    token,
    balanceOf,
    swapV2: (o) => swapOnPool("v2", o),
    swapV3: (o) => swapOnPool("v3", o),
    swapMultiHop: (o) => swapAlong({ ...o, path: o.path.map(token) }),
    addLiquidityV2(o) {
      const p = pool(o.pool);
      const pair = { periphery, from: o.from, tokenA: p.token0, tokenB: p.token1 };
      return send(v2AddLiquidityTx({ ...pair, amountA: o.amount0, amountB: o.amount1 }));
    },
    async removeLiquidityV2(o) {
      const p = pool(o.pool);
      const liquidity =
        o.liquidity ??
        decodeFunctionResult({
          abi: v2PairAbi,
          functionName: "balanceOf",
          data: await call(
            p.address,
            encodeFunctionData({ abi: v2PairAbi, functionName: "balanceOf", args: [o.from] }),
          ),
        });
      await send(
        approveTx({
          from: o.from,
          token: p.address,
          spender: periphery.v2Router,
          label: `approve ${p.key} LP tokens`,
        }),
      );
      return send(
        v2RemoveLiquidityTx({ periphery, from: o.from, tokenA: p.token0, tokenB: p.token1, liquidity }),
      );
    },
    mintPositionV3(o) {
      const p = pool(o.pool);
      if (p.protocol !== "v3" || p.tickSpacing === null) throw new Error(`${p.key} is not a V3 pool`);
      const full = fullRangeTicks(p.tickSpacing);
      return send(
        v3MintTx({
          periphery,
          from: o.from,
          token0: p.token0,
          token1: p.token1,
          fee: p.fee,
          tickLower: o.tickLower ?? full.tickLower,
          tickUpper: o.tickUpper ?? full.tickUpper,
          amount0: o.amount0,
          amount1: o.amount1,
        }),
      );
    },
    removePositionV3: (o) =>
      send(v3RemoveLiquidityTx({ periphery, from: o.from, tokenId: o.tokenId, liquidity: o.liquidity })),
    send,
  };
}
