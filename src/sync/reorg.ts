import type { Hex } from "../decode/types.js";

/** A stored canonical block: its number, hash and time. */
export type StoredBlock = { number: number; hash: Hex; time: Date };

/**
 * The reorg's common ancestor: the highest of `stored` (highest first, as stored: the kept window
 * dense, older ranges' ends sparser) whose hash the node still has at its height. The node's
 * hashes are asked in chunks, highest first, the first of `firstChunk` blocks (the window, where
 * ordinary reorgs end) and each next one twice as large, so a reorg `d` blocks deep costs about
 * 2·d header reads at most, and a shallow one no more than before. Canonical blocks are a prefix
 * of the stored ones (each links to the one below), so the first match found is the ancestor.
 * Null when no stored block is canonical (a reorg deeper than every kept hash).
 */
export async function findCommonAncestor(
  stored: readonly StoredBlock[],
  hashesAt: (numbers: number[]) => Promise<(Hex | null)[]>,
  firstChunk: number,
): Promise<{ ancestor: StoredBlock | null; asked: number }> {
  let size = Math.max(1, firstChunk);
  let asked = 0;
  for (let i = 0; i < stored.length; i += size, size *= 2) {
    const chunk = stored.slice(i, i + size);
    const onChain = await hashesAt(chunk.map((b) => b.number));
    asked += chunk.length;
    const ancestor = chunk.find((b, j) => onChain[j] === b.hash);
    if (ancestor) return { ancestor, asked };
  }
  return { ancestor: null, asked };
}
