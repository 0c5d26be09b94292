import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Hex, keccak256 } from "viem";

const require = createRequire(import.meta.url);

/** A contract artifact published in an npm package (`path` from the package's name), parsed. */
export function npmArtifact<T>(path: string): T {
  return JSON.parse(readFileSync(require.resolve(path), "utf8")) as T;
}

/** Code from an artifact's hex field, with its 0x (waffle builds leave it out, hardhat and foundry keep it). */
export const artifactHex = (code: string): Hex => (code.startsWith("0x") ? code : `0x${code}`) as Hex;

/** Where each official Uniswap contract's npm artifact lives. */
const artifactPaths = {
  weth9: "@uniswap/v2-periphery/build/WETH9.json",
  v2Factory: "@uniswap/v2-core/build/UniswapV2Factory.json",
  v2Pair: "@uniswap/v2-core/build/UniswapV2Pair.json",
  v2Router02: "@uniswap/v2-periphery/build/UniswapV2Router02.json",
  v3Factory: "@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json",
  v3Pool: "@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json",
  positionManager:
    "@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json",
  swapRouter: "@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json",
} as const;

export type UniswapArtifact = keyof typeof artifactPaths;

/** The creation bytecode of an official Uniswap contract, as published on npm. */
export function uniswapBytecode(name: UniswapArtifact): Hex {
  return artifactHex(npmArtifact<{ bytecode: string }>(artifactPaths[name]).bytecode);
}

/**
 * The init-code hashes that the routers and the position manager hard-code to find pools by
 * CREATE2. They equal mainnet's, so the deployed periphery finds the devnet's pools; a changed
 * artifact would break every route, and deploy.ts checks them against these.
 */
export const V2_PAIR_INIT_CODE_HASH: Hex =
  "0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f";
export const V3_POOL_INIT_CODE_HASH: Hex =
  "0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54";

/** Hash of an artifact's creation code, for the check above. */
export function initCodeHash(name: "v2Pair" | "v3Pool"): Hex {
  return keccak256(uniswapBytecode(name));
}
