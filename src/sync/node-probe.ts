import type { ChainConfig } from "../config/schema.js";
import { TransactionSourceUnsupportedError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { MULTICALL3, type RpcClient } from "../rpc/client.js";
import type { RpcMetrics } from "../rpc/metrics.js";
import type { TransactionSource } from "../rpc/types.js";
import { checkTransactionSource, probeTransactionSource } from "./transaction-source.js";

export type NodeProbe = {
  /**
   * What the node serves, asked once at start: Multicall3 (token metadata is read through it),
   * and the transaction source. "auto" probes the node (again only after the node stopped serving
   * the chosen method); a configured source is checked once, and a node that does not serve it
   * stops the chain with a message naming the setting.
   */
  probe(): Promise<void>;
  /** Where swaps' senders and targets are read; null until the probe has run (transactionSource "auto"). */
  source(): TransactionSource | null;
  /** Multicall3 is deployed on the chain: token metadata is read through it. */
  multicall(): boolean;
  /** The node no longer serves the chosen method (a failover): "auto" probes again at the next probe(). */
  forget(): void;
};

/** What a chain's node serves, asked at start: node-probe's state lives across restarts of the chain. */
export function createNodeProbe(args: {
  rpc: RpcClient;
  chain: Pick<ChainConfig, "id" | "name" | "transactionSource">;
  logger: Logger;
  metrics: RpcMetrics;
}): NodeProbe {
  const { rpc, chain, logger, metrics } = args;
  /** Where swaps' senders and targets are read; null until the probe has run (transactionSource "auto"). */
  let transactionSource: TransactionSource | null = null;
  /** The configured source has been checked against the node (once, at the first start). */
  let configuredChecked = false;
  /** Multicall3 is deployed on the chain (null: not asked yet). */
  let hasMulticall: boolean | null = null;

  const probe = async () => {
    hasMulticall ??= (await rpc.getCode(MULTICALL3, "latest")) !== "0x";
    if (transactionSource !== null) return;
    const head = await rpc.getBlockNumber();
    const configured = chain.transactionSource;
    let reason = "configured";
    if (configured === "auto") {
      const probed = await probeTransactionSource(rpc, head);
      transactionSource = probed.source;
      reason = probed.reason;
    } else {
      const refused = configuredChecked ? null : await checkTransactionSource(rpc, head, configured);
      if (refused !== null) {
        throw new TransactionSourceUnsupportedError(
          `chain ${chain.id} (${chain.name}): chains[].transactionSource is "${configured}" but the node does not serve it (${refused}); set it to "auto"`,
        );
      }
      configuredChecked = true;
      transactionSource = configured;
    }
    metrics.transactionSource(chain.id, transactionSource);
    logger.info(
      {
        transaction_source: transactionSource,
        configured,
        probe_block: head,
        reason,
        multicall3: hasMulticall,
      },
      "transaction source chosen",
    );
  };

  return {
    probe,
    source: () => transactionSource,
    multicall: () => hasMulticall === true,
    forget() {
      transactionSource = null;
    },
  };
}
