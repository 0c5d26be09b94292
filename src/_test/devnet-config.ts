import type { Deployment } from "../devnet/deploy.js";

/**
 * The DEXes of a deployment as config/devnet.json lists them: Uniswap V2 and V3 and, with
 * `allFamilies`, the V4 PoolManager and the Algebra Integral factory too.
 */
export function devnetDexes(deployment: Deployment, allFamilies: boolean) {
  return [
    { name: "Uniswap V2", protocol: "v2", factory: deployment.v2.factory, fee: 3000 },
    { name: "Uniswap V3", protocol: "v3", factory: deployment.v3.factory },
    ...(allFamilies
      ? [
          { name: "Uniswap V4", protocol: "v4", factory: deployment.v4.poolManager },
          {
            name: "Algebra Integral",
            protocol: "algebra",
            factory: deployment.algebra.factory,
            swapEvent: "integral",
          },
        ]
      : []),
  ];
}

/** The reference tokens of a deployment as config/devnet.json lists them: three stablecoins, WETH and WBTC. */
export function devnetReferenceTokens(deployment: Deployment) {
  const t = deployment.tokens;
  return {
    stablecoins: [t.USDC.address, t.USDT.address, t.DAI.address],
    wrappedNative: t.WETH.address,
    wrappedBtc: [t.WBTC.address],
  };
}
