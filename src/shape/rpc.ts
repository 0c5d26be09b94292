import { decodeFunctionData, encodeFunctionResult, parseAbi, type Hex as ViemHex } from "viem";
import type { Hex } from "../decode/types.js";
import { word } from "../protocols/shape.js";
import type { ShapeBlock, ShapeChain, ShapeLog } from "./chain.js";
import { hash32, hex8, Kind } from "./hash.js";

/**
 * The JSON-RPC methods of the synthetic node: what an indexer asks an Ethereum node, answered
 * from the lazily generated chain, with real providers' eth_getLogs limits and messages, and
 * admin methods (shape_*) for reorgs and broken headers.
 */

export const MULTICALL3 = "0xca11bde05977b3631167028862be2a173976ca11";

/** eth_getLogs limits of a provider, with its own error messages. */
export type ProviderLimits = "alchemy" | "infura" | "none";

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: string,
  ) {
    super(message);
  }
}

const multicallAbi = parseAbi([
  "struct Call3 { address target; bool allowFailure; bytes callData; }",
  "struct Result { bool success; bytes returnData; }",
  "function aggregate3(Call3[] calls) payable returns (Result[] returnData)",
]);

const q = (n: number | bigint): string => `0x${n.toString(16)}`;
const ZERO_BLOOM = `0x${"0".repeat(512)}`;
const EMPTY_UNCLES = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347";
const STUB_CODE = "0x608060405234801561001057600080fd5b50600436106100365760003560e01c";
const LOG_CAP = 10_000;
const BLOCK_RANGE = 2_000;
/** Blocks generated between two looks at the budget. */
const GENERATE_STEP = 4;

/** How the node answers beyond the chain's data: provider limits and the methods it lacks. */
export type ShapeRpcOptions = {
  limits: ProviderLimits;
  /**
   * Logs carry `blockTimestamp` (eth_getLogs, receipts), as geth ≥ 1.16, reth, Erigon, Nethermind
   * and Besu answer (execution-apis #639); false answers as older nodes and Hardhat 2 do. Default true.
   */
  logTimestamps?: boolean;
  /** Methods answered with geth's -32601 "does not exist/is not available" (a node that lacks them). */
  refuseMethods?: readonly string[];
  /**
   * False: eth_getBlockByNumber/ByHash answer transaction hashes even when full transactions are
   * asked for (a gateway that does not serve them). Default true.
   */
  fullTransactions?: boolean;
  /**
   * Bounds of a node that must stay responsive (the `tokenmarket devnet --shape` command; tests
   * leave them off for answers that do not depend on the machine's speed): at most `maxLogs` logs
   * in an eth_getLogs answer, and at most `callBudgetMs` of block generation in one call.
   */
  bounds?: { maxLogs: number; callBudgetMs: number };
};

/** The bounds of the command-line node (reth's default max-logs-per-response; a call under 2 s). */
export const NODE_BOUNDS = { maxLogs: 20_000, callBudgetMs: 1_000 } as const;

/** Blocks, transactions, receipts and log objects as a node answers them, built from the chain. */
function blockAnswers(chain: ShapeChain, options: ShapeRpcOptions, generateBelow: (n: number) => void) {
  const logTimestamps = options.logTimestamps ?? true;
  const fullTransactions = options.fullTransactions ?? true;
  const u = chain.universe;
  const { profile, seed } = u;
  const rootHash = (n: number, k: number): string =>
    `0x${[0, 1, 2, 3, 4, 5, 6, 7].map((i) => hex8(hash32(seed, Kind.root, n, k, i, chain.blockHash(n).length))).join("")}`;
  const baseFee = (n: number): bigint =>
    BigInt(1_000_000_000 + (hash32(seed, Kind.root, n, 9) % 9_000_000_000));
  const tipOf = (n: number, index: number): bigint =>
    BigInt(1 + (hash32(seed, Kind.tx, n, index, 5) % 3)) * 1_000_000_000n;
  /** The transaction's `to`: the factory (or manager) for a creation, else the DEX's router. */
  const toOf = (pool: number, kind: string | undefined): Hex => {
    const dex = profile.dexes[u.poolInfo(pool).dex] as (typeof profile.dexes)[number];
    return kind === "create" ? dex.factory : dex.router;
  };

  /** Transaction `index` of block n; `planned` avoids planning the block again for each of its transactions. */
  const txObject = (n: number, index: number, planned = chain.plannedTxs(n)) => {
    const p = planned[index];
    if (!p) return null;
    const fee = baseFee(n);
    const tip = tipOf(n, index);
    return {
      blockHash: chain.blockHash(n),
      blockNumber: q(n),
      from: u.traderAddress(p.trader),
      gas: q(Math.floor(p.gas * 1.3)),
      gasPrice: q(fee + tip),
      maxFeePerGas: q(fee * 2n + tip),
      maxPriorityFeePerGas: q(tip),
      hash: chain.txHash(n, index),
      input: `0x${p.kind === "create" ? "c9c65396" : p.kind === "swap" ? "3593564c" : "e8e33700"}${word(p.pool)}`,
      nonce: q(hash32(seed, Kind.tx, p.trader, n, 6) % 5000),
      to: toOf(p.pool, p.kind),
      transactionIndex: q(index),
      value: "0x0",
      type: "0x2",
      accessList: [],
      chainId: q(profile.chainId),
      v: "0x0",
      yParity: "0x0",
      r: `0x${[0, 1, 2, 3, 4, 5, 6, 7].map((i) => hex8(hash32(seed, Kind.tx, n, index, 10 + i))).join("")}`,
      s: `0x${[0, 1, 2, 3, 4, 5, 6, 7].map((i) => hex8(hash32(seed, Kind.tx, n, index, 20 + i) >>> (i === 0 ? 1 : 0))).join("")}`,
    };
  };

  const blockObject = (n: number, full: boolean) => {
    if (n < 0 || n > chain.head()) return null;
    const txs = chain.plannedTxs(n);
    const gasUsed = txs.reduce((sum, t) => sum + t.gas, 0);
    return {
      number: q(n),
      hash: chain.blockHash(n),
      parentHash: chain.parentHash(n),
      nonce: "0x0000000000000000",
      mixHash: rootHash(n, 4),
      sha3Uncles: EMPTY_UNCLES,
      // Blooms are not computed (no client of this server reads them); all zero bits.
      logsBloom: ZERO_BLOOM,
      transactionsRoot: rootHash(n, 1),
      stateRoot: rootHash(n, 2),
      receiptsRoot: rootHash(n, 3),
      miner: u.traderAddress(1_000_000 + (n % 20)),
      difficulty: "0x0",
      totalDifficulty: "0xc70d815d562d3cfa955",
      extraData: "0x",
      size: q(600 + txs.length * 180),
      gasLimit: q(profile.gasLimit),
      gasUsed: q(gasUsed),
      timestamp: q(chain.timestamp(n)),
      baseFeePerGas: q(baseFee(n)),
      transactions:
        full && fullTransactions
          ? txs.map((t) => txObject(n, t.index, txs))
          : txs.map((t) => chain.txHash(n, t.index)),
      uncles: [],
      withdrawals: [],
      withdrawalsRoot: rootHash(n, 5),
    };
  };

  const logObject = (block: ShapeBlock, txIndex: number, logIndex: number, log: ShapeLog) => ({
    address: log.address,
    topics: log.topics,
    data: log.data,
    blockNumber: q(block.number),
    blockHash: chain.blockHash(block.number),
    ...(logTimestamps ? { blockTimestamp: q(chain.timestamp(block.number)) } : {}),
    transactionHash: chain.txHash(block.number, txIndex),
    transactionIndex: q(txIndex),
    logIndex: q(logIndex),
    removed: false,
  });

  const buildReceipts = (n: number) => {
    const block = chain.block(n);
    let logIndex = 0;
    let cumulative = 0;
    const fee = baseFee(n);
    const planned = chain.planBlock(n);
    return block.txs.map((tx) => {
      cumulative += tx.gas;
      return {
        transactionHash: chain.txHash(n, tx.index),
        transactionIndex: q(tx.index),
        blockHash: chain.blockHash(n),
        blockNumber: q(n),
        from: u.traderAddress(tx.trader),
        to: toOf(tx.pool, planned[tx.index]?.kind),
        cumulativeGasUsed: q(cumulative),
        gasUsed: q(tx.gas),
        effectiveGasPrice: q(fee + tipOf(n, tx.index)),
        contractAddress: null,
        logs: tx.logs.map((log) => logObject(block, tx.index, logIndex++, log)),
        logsBloom: ZERO_BLOOM,
        status: "0x1",
        type: "0x2",
      };
    });
  };
  // Receipts are asked one transaction at a time: the last block's are kept.
  let lastReceipts: { hash: string; value: ReturnType<typeof buildReceipts> } | undefined;
  const receipts = (n: number) => {
    const hash = chain.blockHash(n);
    if (lastReceipts?.hash !== hash) generateBelow(n);
    if (lastReceipts?.hash !== hash) lastReceipts = { hash, value: buildReceipts(n) };
    return lastReceipts.value;
  };
  return { txObject, blockObject, logObject, receipts, baseFee };
}

/** A block tag or number as a block number (`latest`, `safe`, `finalized`, `earliest`, hex, { blockHash }). */
function blockNumberOf(chain: ShapeChain, tag: unknown): number {
  const h = chain.head();
  if (tag === undefined || tag === null || tag === "latest" || tag === "pending") return h;
  if (tag === "earliest") return 0;
  const { finalityDepth } = chain.universe.profile;
  if (tag === "safe") return Math.max(0, h - Math.ceil(finalityDepth / 2));
  if (tag === "finalized") return Math.max(0, h - finalityDepth);
  if (typeof tag === "object") {
    const t = tag as { blockNumber?: string; blockHash?: string };
    if (t.blockHash) {
      const n = chain.blockNumberOfHash(t.blockHash);
      if (n === null) throw new RpcError(-32000, `header for hash ${t.blockHash} not found`);
      return n;
    }
    return blockNumberOf(chain, t.blockNumber);
  }
  if (typeof tag === "string" && /^0x[0-9a-fA-F]+$/.test(tag)) return Number.parseInt(tag, 16);
  throw new RpcError(
    -32602,
    `invalid argument: hex string without 0x prefix or invalid block tag ${String(tag)}`,
  );
}

/** The error of an eth_getLogs answer over a provider's (or the node's) limits. */
function logLimitError(
  limits: ProviderLimits,
  maxLogs: number,
  from: number,
  overAt: number,
  capped: boolean,
) {
  const goodTo = Math.max(from, overAt - 1);
  if (!capped)
    return new RpcError(
      -32602,
      `query exceeds max results ${maxLogs}, retry with the range ${from}-${goodTo}`,
    );
  if (limits === "infura") {
    return new RpcError(
      -32005,
      `query returned more than 10000 results. Try with this block range [${q(from)}, ${q(goodTo)}].`,
    );
  }
  return new RpcError(
    -32602,
    "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. " +
      `Based on your parameters and the response size limit, this block range should work: [${q(from)}, ${q(goodTo)}]`,
  );
}

const asList = (value: unknown): string[] | null => {
  if (value === undefined || value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => String(v).toLowerCase());
};

/** eth_getLogs: address and topic filters, the provider's limits, the call's budget. */
function logQuery(
  chain: ShapeChain,
  options: ShapeRpcOptions,
  logObject: ReturnType<typeof blockAnswers>["logObject"],
  generateBelow: (n: number, began: number) => void,
) {
  const maxLogs = options.bounds?.maxLogs ?? Number.POSITIVE_INFINITY;
  const callBudgetMs = options.bounds?.callBudgetMs ?? Number.POSITIVE_INFINITY;
  const matches = (log: ShapeLog, addresses: Set<string> | null, topicSets: (Set<string> | null)[]) => {
    if (addresses && !addresses.has(log.address)) return false;
    return topicSets.every((set, k) => !set || set.has(log.topics[k] ?? ""));
  };
  return (filter: Record<string, unknown>) => {
    let from: number;
    let to: number;
    if (filter.blockHash) {
      const n = chain.blockNumberOfHash(String(filter.blockHash));
      if (n === null) throw new RpcError(-32000, "unknown block");
      [from, to] = [n, n];
    } else {
      from = blockNumberOf(chain, filter.fromBlock ?? "latest");
      to = Math.min(blockNumberOf(chain, filter.toBlock ?? "latest"), chain.head());
    }
    if (from > to) {
      if (from > chain.head()) return [];
      throw new RpcError(-32602, "invalid block range params");
    }
    const addresses = asList(filter.address);
    const addressSet = addresses ? new Set(addresses) : null;
    const topicSets = (Array.isArray(filter.topics) ? filter.topics : []).map((t) => {
      const list = asList(t);
      return list ? new Set(list) : null;
    });
    // Alchemy caps the response only when the range is over 2K blocks; Infura always does.
    const capped =
      options.limits === "infura" || (options.limits === "alchemy" && to - from + 1 > BLOCK_RANGE);
    const began = performance.now();
    generateBelow(from, began);
    const out: ReturnType<typeof logObject>[] = [];
    let overAt = -1;
    let timedOutAt = -1;
    chain.blocks(from, to, (block) => {
      let logIndex = 0;
      for (const tx of block.txs) {
        for (const log of tx.logs) {
          const index = logIndex++;
          if (matches(log, addressSet, topicSets)) out.push(logObject(block, tx.index, index, log));
        }
      }
      if ((capped && out.length > LOG_CAP) || out.length > maxLogs) {
        overAt = block.number;
        return false;
      }
      if (block.number < to && performance.now() - began > callBudgetMs) {
        timedOutAt = block.number;
        return false;
      }
      return true;
    });
    if (timedOutAt >= 0) {
      throw new RpcError(
        -32000,
        `query timeout exceeded: retry with a smaller block range, such as [${q(from)}, ${q(timedOutAt)}]`,
      );
    }
    if (overAt >= 0) throw logLimitError(options.limits, maxLogs, from, overAt, capped);
    return out;
  };
}

const reverted = () => new RpcError(-32000, "execution reverted");
const abiString = (text: string): string => {
  const bytes = Buffer.from(text, "utf8");
  const padded = bytes.toString("hex").padEnd(Math.ceil(bytes.length / 32) * 64, "0");
  return `0x${word(32)}${word(bytes.length)}${padded}`;
};
const bytes32 = (text: string): string =>
  `0x${Buffer.from(text, "utf8").subarray(0, 32).toString("hex").padEnd(64, "0")}`;
const addressArg = (data: string, i: number): string =>
  `0x${data.slice(10 + i * 64 + 24, 10 + (i + 1) * 64)}`;

/** eth_call: the tokens' ERC-20 views, the pools' views (their family's), Multicall3's aggregate3. */
function contractCalls(chain: ShapeChain) {
  const u = chain.universe;
  const { profile, seed } = u;
  const contracts = new Set(
    profile.dexes.flatMap((d) => [d.factory, d.router, ...(d.vault ? [d.vault] : [])]) as string[],
  );

  function tokenCall(token: number, selector: string, data: string, n: number): string {
    const meta = u.tokenMeta(token);
    switch (selector) {
      case "0x06fdde03":
      case "0x95d89b41": {
        const field = selector === "0x06fdde03" ? meta.name : meta.symbol;
        if (field.kind === "revert") throw reverted();
        return field.kind === "bytes32" ? bytes32(field.value) : abiString(field.value);
      }
      case "0x313ce567":
        if (meta.decimals === null) throw reverted();
        return `0x${word(meta.decimals)}`;
      case "0x18160ddd":
        return `0x${word(meta.totalSupply)}`;
      case "0x70a08231":
        return `0x${word(balanceOf(token, addressArg(data, 0), n))}`;
      default:
        throw reverted();
    }
  }

  function poolCall(pool: number, selector: string, n: number): string {
    const info = u.poolInfo(pool);
    const state = chain.poolStateAt(pool, n);
    if (!state) return "0x";
    switch (selector) {
      case "0x0dfe1681":
        return `0x${word(BigInt(info.shape.token0))}`;
      case "0xd21220a7":
        return `0x${word(BigInt(info.shape.token1))}`;
      case "0xc45a0155":
        return `0x${word(BigInt(info.shape.factory))}`;
      default: {
        const answer = info.family.shape.call(selector, info.shape, state, chain.timestamp(n));
        if (answer === null) throw reverted();
        return answer;
      }
    }
  }

  function call(to: string, data: string, n: number): string {
    if (to === MULTICALL3) return multicall(data, n);
    const token = u.tokenIndex(to);
    if (token !== null) return tokenCall(token, data.slice(0, 10), data, n);
    const pool = u.poolIndex(to);
    if (pool !== null && u.poolInfo(pool).createdBlock <= n) return poolCall(pool, data.slice(0, 10), n);
    // No contract there (an account, or a pool not created yet): the call succeeds with no data.
    return "0x";
  }

  function balanceOf(token: number, owner: string, n: number): bigint {
    const pool = u.poolIndex(owner);
    if (pool !== null) {
      const info = u.poolInfo(pool);
      if (info.token0 !== token && info.token1 !== token) return 0n;
      const state = chain.poolStateAt(pool, n);
      if (!state) return 0n;
      return info.token0 === token ? state.r0 : state.r1;
    }
    if (contracts.has(owner)) return 0n;
    // Other holders: a deterministic balance (the synthetic chain tracks no wallets).
    const meta = u.tokenMeta(token);
    const h = hash32(seed, Kind.balance, token, Number.parseInt(owner.slice(2, 10), 16) || 0);
    return h % 4 === 0 ? 0n : BigInt(h % 1_000_000) * 10n ** BigInt(meta.unitDecimals);
  }

  function multicall(data: string, n: number): string {
    let decoded: ReturnType<typeof decodeFunctionData<typeof multicallAbi>>;
    try {
      decoded = decodeFunctionData({ abi: multicallAbi, data: data as ViemHex });
    } catch {
      throw reverted();
    }
    const calls = decoded.args[0] as readonly { target: string; allowFailure: boolean; callData: string }[];
    const results = calls.map((c) => {
      try {
        return {
          success: true,
          returnData: call(c.target.toLowerCase(), c.callData.toLowerCase(), n) as ViemHex,
        };
      } catch (error) {
        if (!c.allowFailure) throw new RpcError(-32000, "execution reverted: Multicall3: call failed");
        if (error instanceof RpcError) return { success: false, returnData: "0x" as ViemHex };
        throw error;
      }
    });
    return encodeFunctionResult({ abi: multicallAbi, functionName: "aggregate3", result: results });
  }

  const hasCode = (address: string, n: number): boolean => {
    if (address === MULTICALL3 || contracts.has(address)) return true;
    if (u.tokenIndex(address) !== null) return true;
    const pool = u.poolIndex(address);
    return pool !== null && u.poolInfo(pool).createdBlock <= n;
  };
  return { call, hasCode };
}

export function createShapeRpc(chain: ShapeChain, options: ShapeRpcOptions) {
  const callBudgetMs = options.bounds?.callBudgetMs ?? Number.POSITIVE_INFINITY;
  const refused = new Set(options.refuseMethods ?? []);
  const u = chain.universe;
  const { profile, seed } = u;

  /** The highest block generated in order by generateBelow (lowered by a reorg). */
  let generatedTo = -1;
  /**
   * Generates the chain below the segment of block n, a few blocks at a time, within the call's
   * budget (blocks are generated synchronously: past it the head, other clients and a SIGINT
   * wait); past it, a retryable "busy" answer (what is generated is kept: the next call goes on).
   */
  const generateBelow = (n: number, began = performance.now()) => {
    const { segmentsDone, segmentBlocks } = chain.stats();
    const target = Math.floor(n / segmentBlocks) * segmentBlocks - 1;
    let at = Math.max(generatedTo, segmentsDone * segmentBlocks - 1);
    while (at < target) {
      if (performance.now() - began > callBudgetMs) {
        throw new RpcError(
          -32000,
          `server busy: the node is generating the chain below block ${n} (at block ${at}); try again`,
        );
      }
      const next = Math.min(target, at + GENERATE_STEP);
      chain.blocks(next, next, () => false);
      at = next;
      generatedTo = Math.max(generatedTo, next);
    }
  };
  const answers = blockAnswers(chain, options, generateBelow);
  const getLogs = logQuery(chain, options, answers.logObject, generateBelow);
  const contracts = contractCalls(chain);
  const tagged = (tag: unknown) => blockNumberOf(chain, tag);
  const requireKnown = (n: number) => {
    if (n > chain.head()) throw new RpcError(-32000, "header not found");
  };
  const holderWord = (address: unknown) => Number.parseInt(String(address).slice(2, 10), 16) || 0;

  const methods: Record<string, (params: unknown[]) => unknown> = {
    web3_clientVersion: () => `tokenmarket-shape/${profile.name}`,
    net_version: () => String(profile.chainId),
    net_listening: () => true,
    eth_chainId: () => q(profile.chainId),
    eth_syncing: () => false,
    eth_blockNumber: () => q(chain.head()),
    eth_gasPrice: () => q(answers.baseFee(chain.head()) + 1_000_000_000n),
    eth_maxPriorityFeePerGas: () => q(1_000_000_000),
    eth_getBlockByNumber: ([tag, full]) => answers.blockObject(tagged(tag), Boolean(full)),
    eth_getBlockByHash: ([hash, full]) => {
      const n = chain.blockNumberOfHash(String(hash));
      return n === null ? null : answers.blockObject(n, Boolean(full));
    },
    eth_getBlockTransactionCountByNumber: ([tag]) => {
      const n = tagged(tag);
      return n > chain.head() ? null : q(chain.txCount(n));
    },
    eth_getTransactionByHash: ([hash]) => {
      const at = chain.txPosition(String(hash));
      return at ? answers.txObject(at.block, at.index) : null;
    },
    eth_getTransactionByBlockNumberAndIndex: ([tag, index]) => {
      const n = tagged(tag);
      return n > chain.head() ? null : answers.txObject(n, Number(index));
    },
    eth_getTransactionReceipt: ([hash]) => {
      const at = chain.txPosition(String(hash));
      return at ? (answers.receipts(at.block)[at.index] ?? null) : null;
    },
    eth_getBlockReceipts: ([tag]) => {
      const n = tagged(tag);
      return n > chain.head() ? null : answers.receipts(n);
    },
    eth_getLogs: ([filter]) => getLogs((filter ?? {}) as Record<string, unknown>),
    eth_call: ([tx, tag]) => {
      const n = tagged(tag ?? "latest");
      requireKnown(n);
      generateBelow(n);
      const { to, data, input } = (tx ?? {}) as { to?: string; data?: string; input?: string };
      if (!to) throw new RpcError(-32602, "missing 'to' in eth_call");
      return contracts.call(to.toLowerCase(), (data ?? input ?? "0x").toLowerCase(), n);
    },
    eth_getCode: ([address, tag]) => {
      const n = tagged(tag ?? "latest");
      requireKnown(n);
      return contracts.hasCode(String(address).toLowerCase(), n) ? STUB_CODE : "0x";
    },
    eth_getBalance: ([address, tag]) => {
      requireKnown(tagged(tag ?? "latest"));
      return q(BigInt(hash32(seed, Kind.balance, holderWord(address), 0xeeee) % 100_000) * 10n ** 15n);
    },
    eth_getTransactionCount: ([address]) => q(hash32(seed, Kind.balance, holderWord(address), 1) % 5000),
    shape_info: () => ({
      profile: profile.name,
      chainId: profile.chainId,
      head: chain.head(),
      blockTimeMs: profile.blockTimeMs,
      tokens: u.tokenCount,
      initialPools: u.initialPools,
      pools: u.poolsAt(chain.head()),
      creationEraBlocks: u.creationEraBlocks,
      ...chain.stats(),
    }),
    shape_reorg: ([depth]) => {
      const d = Number(depth);
      if (!Number.isInteger(d) || d < 1)
        throw new RpcError(-32602, "shape_reorg(depth): depth must be an integer ≥ 1");
      const { from, to } = chain.reorg(d);
      generatedTo = Math.min(generatedTo, from - 1);
      return { from, to, head: chain.head(), headHash: chain.blockHash(chain.head()) };
    },
    shape_unlinkedHeaders: ([from, count]) => {
      chain.unlinkHeaders(Number(from), Number(count));
      return true;
    },
    shape_advance: ([blocks]) => q(chain.advance(Number(blocks ?? 1))),
  };

  return {
    /** Answers one JSON-RPC call; throws RpcError for the JSON-RPC error answers. */
    handle(method: string, params: unknown[]): unknown {
      const fn = refused.has(method) ? undefined : methods[method];
      if (!fn) throw new RpcError(-32601, `the method ${method} does not exist/is not available`);
      return fn(params);
    },
    methods: Object.keys(methods),
  };
}
