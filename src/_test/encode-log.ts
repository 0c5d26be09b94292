import { encodeAbiParameters, encodeEventTopics, parseAbiItem } from "viem";
import type { Hex, RawLog } from "../decode/types.js";

/**
 * Encodes an event log with viem, the independent encoder the hand-written decoders are checked
 * against. `signature` with or without its leading `event`; `args` by input name (`_<i>` for an
 * unnamed input).
 */
export function encodeEventLog(
  signature: string,
  args: Record<string, unknown>,
): { topics: Hex[]; data: Hex } {
  const event = parseAbiItem(signature.startsWith("event ") ? signature : `event ${signature}`) as {
    type: "event";
    name: string;
    inputs: readonly { name?: string; type: string; indexed?: boolean }[];
  };
  const topics = encodeEventTopics({ abi: [event], eventName: event.name, args } as never) as Hex[];
  const dataInputs = event.inputs.filter((input) => !input.indexed);
  const data = encodeAbiParameters(
    dataInputs,
    dataInputs.map((input, i) => args[input.name ?? `_${i}`]),
  );
  return { topics, data };
}

/** An encoded event as a log at a position (transaction index 0). */
export function logAt(
  signature: string,
  args: Record<string, unknown>,
  at: { address: Hex; blockNumber: number; logIndex: number; transactionHash: Hex; blockHash?: Hex },
): RawLog {
  return {
    address: at.address,
    ...encodeEventLog(signature, args),
    blockNumber: at.blockNumber,
    blockHash: at.blockHash ?? "0xb2",
    transactionHash: at.transactionHash,
    transactionIndex: 0,
    logIndex: at.logIndex,
  };
}
