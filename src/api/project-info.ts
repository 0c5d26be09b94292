import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import type { Config } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import type { ProjectInfo } from "./schemas.js";

export type ProjectInfoBook = {
  /** The project info of a token; every field null when no source knows it. */
  get(chainId: number, address: string): ProjectInfo;
  size(): number;
};

const FIELDS = ["website", "logo_url", "twitter", "discord"] as const;
const UNKNOWN: ProjectInfo = Object.freeze({ website: null, logo_url: null, twitter: null, discord: null });

/** A curated entry: any of the four fields, keyed by token id `<address>:<chainId>`. */
type CuratedFile = Record<string, Partial<Record<(typeof FIELDS)[number], string | null>>>;
type TokenList = { tokens?: { chainId?: unknown; address?: unknown; logoURI?: unknown }[] };

const key = (chainId: number, address: string) => `${address.toLowerCase()}:${chainId}`;

/** Only web URLs (https, or a path on this host) are answered; ipfs:// and data: URIs are left out. */
function usableUrl(value: unknown): string | null {
  if (typeof value !== "string" || value.length > 500) return null;
  return /^https:\/\/\S+$/.test(value) || /^\/logos\/[\w.-]+$/.test(value) ? value : null;
}

/**
 * Project info (website, logo, twitter, discord) of tokens, merged field by field from, in order
 * of precedence: the curated file `config.projectInfoFile`, the demo's own file
 * `config/devnet-project-info.json` (when the devnet is enabled; its logos are local SVG files
 * served under /logos/), and the token lists of `config.tokenLists` (Token Lists format; logos only).
 */
export function loadProjectInfo(options: { config: Config; logger: Logger; root: string }): ProjectInfoBook {
  const { config, logger, root } = options;
  const book = new Map<string, ProjectInfo>();
  const merge = (id: string, info: Partial<Record<(typeof FIELDS)[number], unknown>>) => {
    const current = book.get(id) ?? { ...UNKNOWN };
    for (const field of FIELDS) {
      const value =
        field === "logo_url" ? usableUrl(info[field]) : typeof info[field] === "string" ? info[field] : null;
      if (value !== null && typeof value === "string") current[field] = value;
    }
    book.set(id, current);
  };

  const require = createRequire(path.join(root, "package.json"));
  const readJson = (name: string): unknown => {
    const file = name.endsWith(".json") ? path.resolve(root, name) : require.resolve(name);
    return JSON.parse(readFileSync(file, "utf8"));
  };

  // Lowest precedence first: later sources overwrite the fields they know.
  for (const list of config.tokenLists) {
    try {
      const tokens = (readJson(list) as TokenList).tokens ?? [];
      for (const token of tokens) {
        if (typeof token.chainId !== "number" || typeof token.address !== "string") continue;
        merge(key(token.chainId, token.address), { logo_url: token.logoURI });
      }
    } catch (error) {
      logger.warn({ err: error, token_list: list }, "cannot read token list; its logos are left out");
    }
  }
  const curatedFiles: string[] = [];
  const devnetFile = path.join(root, "config", "devnet-project-info.json");
  if (config.devnet.enabled && existsSync(devnetFile)) curatedFiles.push(devnetFile);
  if (config.projectInfoFile) curatedFiles.push(path.resolve(root, config.projectInfoFile));
  for (const file of curatedFiles) {
    try {
      const entries = readJson(file) as CuratedFile;
      for (const [id, info] of Object.entries(entries)) {
        const match = /^(0x[0-9a-fA-F]{40}):([1-9][0-9]*)$/.exec(id);
        if (!match || typeof info !== "object" || info === null) continue;
        merge(key(Number(match[2]), match[1] as string), info);
      }
    } catch (error) {
      logger.warn({ err: error, file }, "cannot read project info file; it is left out");
    }
  }
  return {
    get: (chainId, address) => book.get(key(chainId, address)) ?? UNKNOWN,
    size: () => book.size,
  };
}
