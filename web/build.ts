// Builds the explorer page into web/dist with Vite, then writes brotli and gzip copies of the
// text files beside them (src/api/web.ts sends those to browsers that accept them).
//
//   tsx web/build.ts              build
//   tsx web/build.ts --if-stale   build only when the sources changed since the last build
//
// "Changed" is a hash of the page's sources (not mtimes, which a git checkout resets), kept in
// web/dist/.build-hash. On an install without dev dependencies (no Vite) it warns and exits 0:
// the API runs without the page, whose `/` then says how to build it.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

export const webDir = import.meta.dirname;
export const distDir = path.join(webDir, "dist");
const hashFile = path.join(distDir, ".build-hash");
const compressible = new Set([".js", ".css", ".html", ".svg", ".json", ".txt", ".webmanifest"]);

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** A hash of everything the build reads: the page's sources and the versions of its packages. */
export function sourceHash(): string {
  const hash = createHash("sha256");
  const inputs = [
    path.join(webDir, "index.html"),
    path.join(webDir, "vite.config.ts"),
    ...filesUnder(path.join(webDir, "src")).filter((f) => !f.endsWith(".test.ts")),
    ...filesUnder(path.join(webDir, "public")),
  ].sort();
  for (const file of inputs) {
    hash.update(path.relative(webDir, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  for (const pkg of ["vite", "lightweight-charts"]) {
    const manifest = path.join(webDir, "..", "node_modules", pkg, "package.json");
    hash.update(
      existsSync(manifest)
        ? (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version
        : "-",
    );
  }
  return hash.digest("hex");
}

/** True when web/dist is missing or was built from other sources. */
export function isStale(): boolean {
  if (!existsSync(path.join(distDir, "index.html")) || !existsSync(hashFile)) return true;
  return readFileSync(hashFile, "utf8").trim() !== sourceHash();
}

/** Writes `.br` and `.gz` copies of the build's text files of 1 KiB or more. */
function precompress(): void {
  for (const file of filesUnder(distDir)) {
    if (!compressible.has(path.extname(file)) || statSync(file).size < 1024) continue;
    const body = readFileSync(file);
    writeFileSync(
      `${file}.br`,
      brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      }),
    );
    writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  }
}

export type BuildResult = "built" | "fresh" | "no-vite";

/** Builds web/dist (when stale, with `ifStale`). */
export async function buildWeb(options: { ifStale?: boolean; quiet?: boolean } = {}): Promise<BuildResult> {
  if (options.ifStale && !isStale()) return "fresh";
  let vite: typeof import("vite");
  try {
    vite = await import("vite");
  } catch {
    return "no-vite";
  }
  const hash = sourceHash();
  await vite.build({
    configFile: path.join(webDir, "vite.config.ts"),
    logLevel: options.quiet ? "warn" : "info",
  });
  precompress();
  writeFileSync(hashFile, `${hash}\n`);
  return "built";
}

async function main(argv: string[]): Promise<number> {
  const ifStale = argv.includes("--if-stale");
  const started = Date.now();
  const result = await buildWeb({ ifStale, quiet: ifStale });
  if (result === "fresh") return 0;
  if (result === "no-vite") {
    console.warn(
      "web/build.ts: Vite is not installed (dev dependencies left out); the explorer page is not built.",
    );
    return 0;
  }
  console.log(`web/build.ts: explorer page built into web/dist in ${Date.now() - started} ms`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error("web/build.ts: the build failed:", error);
      process.exitCode = 1;
    },
  );
}
