import { type Address, decodeAbiParameters, encodeDeployData, type Hex, parseAbi } from "viem";
import type { CompiledContracts } from "./compile.js";
import type { DeployedPool, Deployment } from "./deploy.js";
import type { RpcCall } from "./rpc.js";

/** The state of a pool that the simulator steers by. */
export type PoolState =
  | { protocol: "v2"; reserve0: bigint; reserve1: bigint }
  | { protocol: "v3"; sqrtPriceX96: bigint; liquidity: bigint };

/** A view call made along with the pool reads; its raw result comes back ("0x" when it reverted). */
export type ExtraRead = { to: Address; data: Hex };

const poolReaderAbi = parseAbi(["constructor(address[] v2Pairs, address[] v3Pools, address[] targets, bytes[] calls)"]);

/**
 * The eth_call that reads every pool of the deployment (and the extra reads) at the latest block
 * in one request, with DevnetPoolReader's creation code and no `to` (nothing is deployed).
 */
export function poolReaderCall(
  contracts: CompiledContracts,
  deployment: Deployment,
  extras: readonly ExtraRead[] = [],
): RpcCall {
  const v2 = deployment.pools.filter((p) => p.protocol === "v2").map((p) => p.address);
  const v3 = deployment.pools.filter((p) => p.protocol === "v3").map((p) => p.address);
  const data = encodeDeployData({
    abi: poolReaderAbi,
    bytecode: contracts.DevnetPoolReader.bytecode,
    args: [v2, v3, extras.map((e) => e.to), extras.map((e) => e.data)],
  });
  return { method: "eth_call", params: [{ data, gas: "0xf42400" }, "latest"] };
}

/** Decodes poolReaderCall's answer: the state per pool key, and the extra reads' raw results. */
export function decodePoolReader(
  deployment: Deployment,
  result: Hex,
): { pools: Map<string, PoolState>; extras: Hex[] } {
  const [words, extras] = decodeAbiParameters([{ type: "uint256[]" }, { type: "bytes[]" }], result);
  const pools = new Map<string, PoolState>();
  const ordered: DeployedPool[] = [
    ...deployment.pools.filter((p) => p.protocol === "v2"),
    ...deployment.pools.filter((p) => p.protocol === "v3"),
  ];
  ordered.forEach((pool, i) => {
    const a = words[2 * i] ?? 0n;
    const b = words[2 * i + 1] ?? 0n;
    pools.set(
      pool.key,
      pool.protocol === "v2"
        ? { protocol: "v2", reserve0: a, reserve1: b }
        : { protocol: "v3", sqrtPriceX96: a, liquidity: b },
    );
  });
  return { pools, extras: [...extras] };
}

/** The pool's raw price: token1 units per token0 unit. */
export function poolRawPrice(state: PoolState): number {
  if (state.protocol === "v2") return Number(state.reserve1) / Number(state.reserve0);
  const sqrt = Number(state.sqrtPriceX96) / 2 ** 96;
  return sqrt * sqrt;
}
