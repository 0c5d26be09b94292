/**
 * The registry of DEX families. The pipeline finds a pool's family here by its name
 * (`pools.protocol`) and asks it; adding a family is a folder beside these and a line in
 * `families` (and its event type in `PoolEvent`).
 */
import type { Hex } from "../decode/types.js";
import type { ProtocolName } from "../model/index.js";
import { algebra } from "./algebra/index.js";
import {
  type BinEvent,
  pancakeswapInfinityBin,
  pancakeswapInfinityCl,
} from "./pancakeswap-infinity/index.js";
import type { FamilyVariant, ProtocolFamily, SwapEventLayout } from "./types.js";
import { uniswapV2, type V2Event } from "./uniswap-v2/index.js";
import { uniswapV3, type V3Event } from "./uniswap-v3/index.js";
import { uniswapV4, type V4Event } from "./uniswap-v4/index.js";

export type * from "./types.js";
export type { BinEvent, V2Event, V3Event, V4Event };
export { algebra, pancakeswapInfinityBin, pancakeswapInfinityCl, uniswapV2, uniswapV3, uniswapV4 };

/** Every registered family, in the order the configuration's schema and the API list them. */
export const families: readonly ProtocolFamily[] = [
  uniswapV2,
  uniswapV3,
  uniswapV4,
  algebra,
  pancakeswapInfinityCl,
  pancakeswapInfinityBin,
];

/** A decoded pool event of any registered family. */
export type PoolEvent = V2Event | V3Event | V4Event | BinEvent;

/** The registered families' names (`protocol` in the configuration, the store and the API). */
export const protocolNames = families.map((f) => f.name) as [ProtocolName, ...ProtocolName[]];

const byName = new Map<ProtocolName, ProtocolFamily>(families.map((f) => [f.name, f]));

/** The family of a name; throws for a name no family has (the configuration's schema checks it first). */
export function familyOf(name: ProtocolName): ProtocolFamily {
  const family = byName.get(name);
  if (!family) throw new Error(`unknown DEX family "${name}" (known: ${protocolNames.join(", ")})`);
  return family;
}

/** Every family's variants by name (a recording's `protocol`), with their family. */
export const variants: ReadonlyMap<string, FamilyVariant & { family: ProtocolFamily }> = new Map(
  families.flatMap((family) => family.variants.map((v) => [v.id, { ...v, family }] as const)),
);

/** What the registry needs of a configured DEX to tell the logs it reads. */
type DexKind = { protocol: ProtocolName; swapEvent: SwapEventLayout };

/** topic0 of each DEX's pool-creation event. */
export function creationTopicOf(dex: DexKind): Hex {
  return familyOf(dex.protocol).creationTopic;
}

/** The topic0s the pools of a DEX emit and the indexer decodes. */
export function poolTopicsOf(dex: DexKind): Hex[] {
  return familyOf(dex.protocol).poolTopics(dex.swapEvent);
}

/** topic0 of every swap event of every family (the transactions of these logs are fetched). */
export const swapTopics: readonly Hex[] = [...new Set(families.flatMap((f) => f.swapTopics))];
