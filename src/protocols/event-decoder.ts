import {
  type AbiParameter,
  type AbiParameterToPrimitiveType,
  type ParseAbiItem,
  parseAbiItem,
  toEventSelector,
} from "viem";
import type { Hex } from "../decode/types.js";
import { addressAt, intAt, topicAddress, topicInt, uintAt, wordCount } from "../decode/words.js";
import type { LogLike } from "./types.js";

type Inputs<S extends string> =
  ParseAbiItem<`event ${S}`> extends { inputs: infer I extends readonly AbiParameter[] } ? I : never;

/**
 * An event's named arguments, typed from its signature text as viem types them: integers of up
 * to 48 bits as numbers, wider ones as bigints, addresses and bytes32 as hex.
 */
export type EventArgs<S extends string> = {
  [P in Inputs<S>[number] as P extends { name: infer N extends string }
    ? N
    : never]: AbiParameterToPrimitiveType<P>;
};

type Reader = (topics: readonly Hex[], data: Hex) => unknown;

/** A Solidity integer type's sign and width (`int24`: signed, 24 bits); null for any other type. */
function integerType(type: string): { signed: boolean; bits: number } | null {
  const match = /^(u?)int(\d+)$/.exec(type);
  return match ? { signed: match[1] === "", bits: Number(match[2]) } : null;
}

/** Integers of up to 48 bits are read as numbers (as viem types them), wider ones as bigints. */
const NUMBER_BITS = 48;

/** The reader of an indexed argument in topic `i`. */
function topicReader(type: string, i: number): Reader {
  if (type === "address") return (t) => topicAddress(t[i] as string);
  // A PoolId: compared and stored as lowercase hex.
  if (type === "bytes32") return (t) => (t[i] as string).toLowerCase() as Hex;
  const int = integerType(type);
  // Read as signed: a well-formed topic of a narrow integer, signed or not, reads the same.
  if (int && int.bits <= NUMBER_BITS) return (t) => Number(topicInt(t[i] as string));
  if (int?.signed) return (t) => topicInt(t[i] as string);
  if (int) return (t) => BigInt(t[i] as string);
  throw new Error(`indexed ${type} is not decoded`);
}

/** The reader of a static argument in data word `i`. */
function wordReader(type: string, i: number): Reader {
  if (type === "address") return (_t, data) => addressAt(data, i);
  if (type === "bytes32") return (_t, data) => `0x${data.slice(2 + i * 64, 2 + (i + 1) * 64)}` as Hex;
  const int = integerType(type);
  if (!int) throw new Error(`${type} is not decoded (static arguments only)`);
  if (int.bits <= NUMBER_BITS) {
    return int.signed ? (_t, data) => Number(intAt(data, i)) : (_t, data) => Number(uintAt(data, i));
  }
  return int.signed ? (_t, data) => intAt(data, i) : (_t, data) => uintAt(data, i);
}

/**
 * The decoder of an event of static arguments from its signature text (without `event`): a log
 * is that event when its topic0 is the signature's and it has exactly one topic per indexed
 * argument and one data word per other argument. Unnamed arguments are read past, not returned;
 * `fixed` fields (an event's `type`, …) come first in each decoded event.
 */
export function argsDecoder<
  const S extends string,
  const F extends Record<string, unknown> = Record<never, never>,
>(signature: S, fixed?: F): (log: LogLike) => (F & EventArgs<S>) | null {
  const event = parseAbiItem(`event ${signature}`) as {
    inputs: readonly (AbiParameter & { indexed?: boolean })[];
  };
  const topic0 = toEventSelector(`event ${signature}`);
  let topicCount = 1;
  let words = 0;
  const readers: [string, Reader][] = Object.entries(fixed ?? {}).map(([name, value]) => [name, () => value]);
  for (const input of event.inputs) {
    const read = input.indexed ? topicReader(input.type, topicCount++) : wordReader(input.type, words++);
    if (input.name) readers.push([input.name, read]);
  }
  return (log) => {
    const { topics: t, data } = log;
    if (t[0] !== topic0 || t.length !== topicCount || wordCount(data) !== words) return null;
    const args: Record<string, unknown> = {};
    for (const [name, read] of readers) args[name] = read(t, data);
    return args as F & EventArgs<S>;
  };
}

/** A camelCase name in kebab-case: "v4ModifyLiquidity" is "v4-modify-liquidity". */
export type Kebab<S extends string, Done extends string = ""> = S extends `${infer C}${infer Rest}`
  ? Kebab<Rest, `${Done}${C extends Lowercase<C> ? C : `-${Lowercase<C>}`}`>
  : Done;

const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A decoded event of a family's signatures `M` named `K`: its `type` (the name in kebab-case) and its arguments. */
export type TableEvent<M extends Record<string, string>, K extends keyof M & string> = {
  [N in K]: { type: Kebab<N> } & EventArgs<M[N]>;
}[K];

/**
 * The decoder of the events `names` of a family's signature texts: the log's topic0 picks the
 * event, decoded with its `type` the event's name in kebab-case ("v2Sync" is "v2-sync"); null
 * for a log of none of them, or a malformed one.
 */
export function tableDecoder<const M extends Record<string, string>, const K extends keyof M & string>(
  signatures: M,
  names: readonly K[],
): (log: LogLike) => TableEvent<M, K> | null {
  const byTopic = new Map<string, (log: LogLike) => TableEvent<M, K> | null>();
  for (const name of names) {
    const signature = signatures[name] as string;
    const decode = argsDecoder(signature, { type: kebab(name) });
    byTopic.set(toEventSelector(`event ${signature}`), decode as (log: LogLike) => TableEvent<M, K> | null);
  }
  return (log) => byTopic.get(log.topics[0] as string)?.(log) ?? null;
}

/** topic0 of each event of a family's signature texts (without `event`), by the same names; lowercase hex. */
export function eventTopics<const M extends Record<string, string>>(signatures: M): Record<keyof M, Hex> {
  return Object.fromEntries(
    Object.entries(signatures).map(([name, signature]) => [name, toEventSelector(`event ${signature}`)]),
  ) as Record<keyof M, Hex>;
}
