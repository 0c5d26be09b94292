// Links to a chain's block explorer (`explorer_url` of /v1/networks: `${base}/tx/<hash>`,
// `/address/<addr>`, `/token/<addr>`, `/block/<n>`, the Etherscan family's paths). Pure.

import type { Network } from "./api.js";

/** Each link, or undefined for a value that is not what the path takes. */
export type ExplorerLinks = {
  tx(hash: string): string | undefined;
  address(address: string): string | undefined;
  token(address: string): string | undefined;
  block(block: number | null | undefined): string | undefined;
};

const hexPattern = /^0x[0-9a-fA-F]+$/;

/**
 * The links of an explorer base URL, or undefined when there is none or it is not an http(s)
 * URL (a `javascript:` base would turn every link into a script). Values that are not hex (or a
 * block number) get no link, so that nothing but the documented paths is ever linked.
 */
export function explorerLinks(base: string | null | undefined): ExplorerLinks | undefined {
  if (!base) return undefined;
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  const root = url.href.replace(/\/+$/, "");
  const hex = (kind: string, value: string) => {
    const plain = value.split(":")[0] ?? value; // a token id `<address>:<chain>` links its address
    return hexPattern.test(plain) ? `${root}/${kind}/${plain.toLowerCase()}` : undefined;
  };
  return {
    tx: (hash) => hex("tx", hash),
    address: (address) => hex("address", address),
    token: (address) => hex("token", address),
    block: (block) =>
      typeof block === "number" && Number.isSafeInteger(block) && block >= 0
        ? `${root}/block/${block}`
        : undefined,
  };
}

/** The explorer of a chain among the configured networks. */
export function explorerOf(networks: readonly Network[], chain: number | string): ExplorerLinks | undefined {
  return explorerLinks(networks.find((n) => String(n.chain) === String(chain))?.explorer_url);
}
