/**
 * The devnet's registry of DEX families: how each deploys its real contracts on the demo chain
 * and how the simulator trades it (`DevnetFamily`, ./types.ts). The devnet finds a pool's family
 * here by its registry name (`pool.protocol`, as in `src/protocols/index.ts`) and never branches
 * on it. Adding a family to the demo is a module beside these and a line in `all`.
 *
 * These modules live in src/devnet, not in src/protocols/<family>/: they build on the devnet's
 * transaction builders, artifacts and planner, and src/protocols (an ingestion stage) must not
 * import from the devnet.
 */
import { algebraDevnet } from "./algebra.js";
import type { DevnetFamily } from "./types.js";
import { uniswapV2Devnet, type V2Removal } from "./uniswap-v2.js";
import { uniswapV3Devnet, type V3Removal } from "./uniswap-v3.js";
import { uniswapV4Devnet } from "./uniswap-v4.js";

export type * from "./types.js";

/** What a removal decided in one block carries until its reads are back (the families that remove in two steps). */
export type RemovalData = V2Removal | V3Removal;

/**
 * Every family of the demo, in the order their approvals and checks are sent. A function, not a
 * constant: the family modules and the devnet's modules import each other, and a module of the
 * cycle may be evaluated before this list could be built.
 */
const all = () => [uniswapV2Devnet, uniswapV3Devnet, uniswapV4Devnet, algebraDevnet] as const;

/** The registry names of the demo's families (a pool spec's `protocol`). */
export type DevnetFamilyName = ReturnType<typeof all>[number]["name"];

let byName: ReadonlyMap<string, DevnetFamily> | undefined;

/** Every family of the demo, in registry order. */
export function devnetFamilies(): readonly DevnetFamily[] {
  return all();
}

/** The devnet side of a family by its registry name; throws for a family the demo does not run. */
export function devnetFamilyOf(name: string): DevnetFamily {
  byName ??= new Map(all().map((family) => [family.name, family]));
  const family = byName.get(name);
  if (family === undefined) throw new Error(`the devnet runs no DEX family "${name}"`);
  return family;
}
