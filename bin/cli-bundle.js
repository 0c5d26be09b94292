// The command line's code as ES modules in node_modules/.cache/tokenmarket/cli (an entry, main.js,
// and the chunks each command imports when it runs), bundled from the TypeScript sources by
// esbuild (packages stay in node_modules) and built again whenever a source it holds changed.
// Node loads it directly: through tsx's loader every module, ours and the packages', passes the
// loader's hooks on another thread, which costs a start about 1.5 s on a 2-core machine, plus
// that thread's and an esbuild process's memory.
//
// What must hold: the bundle behaves as the sources do. Each source's `import.meta.url` and
// `import.meta.dirname` are replaced by its own file's, so the paths it builds (migrations, the
// page, contracts, worker modules) and the checks "is this file the entry" stay those of the
// sources; and no source may use top-level await (a bundle turns it into a chain of
// asynchronous module initialisations that a cycle between modules can stall for ever).
//
//   node bin/cli-bundle.js      builds the bundle now (`npm install` does)
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const root = path.resolve(import.meta.dirname, "..");
const outDir = path.join(root, "node_modules", ".cache", "tokenmarket");
/** The bundle: its entry and the chunks the commands import when they run, in a folder of its own. */
const bundleDir = path.join(outDir, "cli");
const bundleFile = path.join(bundleDir, "main.js");
/** The project files the bundle was built from, with their size and modification time. */
const inputsFile = path.join(bundleDir, "inputs.json");
const entry = path.join(root, "src", "cli", "main.ts");

/**
 * Whether the bundle is missing or older than one of its sources. A source added since is
 * reached only through an import in a source that changed, so the recorded inputs suffice.
 */
export function bundleIsStale() {
  let inputs;
  try {
    statSync(bundleFile);
    inputs = JSON.parse(readFileSync(inputsFile, "utf8"));
  } catch {
    return true;
  }
  for (const [file, seen] of Object.entries(inputs)) {
    try {
      const stat = statSync(path.join(root, file));
      if (stat.size !== seen.size || stat.mtimeMs !== seen.mtimeMs) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** Builds the bundle. */
export async function buildBundle() {
  const esbuild = await import("esbuild");
  const ownSource = new RegExp(`^${escapeRegExp(root)}/(src|web)/.*\\.ts$`);
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    // The commands' modules (and the packages they import) load when a command runs, as from the sources.
    splitting: true,
    outdir: bundleDir,
    entryNames: "[name]",
    chunkNames: "[name]-[hash]",
    outExtension: { ".js": ".js" },
    write: false,
    metafile: true,
    logLevel: "error",
    absWorkingDir: root,
    plugins: [
      {
        name: "own-import-meta",
        setup(build) {
          build.onLoad({ filter: /\.ts$/ }, (args) => {
            if (!ownSource.test(args.path)) return undefined;
            const source = readFileSync(args.path, "utf8")
              .replaceAll("import.meta.dirname", JSON.stringify(path.dirname(args.path)))
              .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href));
            return { contents: source, loader: "ts" };
          });
        },
      },
    ],
  });
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    if (file.startsWith("node_modules/")) continue;
    const stat = statSync(path.join(root, file));
    inputs[file] = { size: stat.size, mtimeMs: stat.mtimeMs };
  }
  // Written into a folder of this process's own, then swapped in whole: processes starting at once
  // each load one consistent set of chunks.
  const staging = `${bundleDir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  for (const output of result.outputFiles) {
    writeFileSync(path.join(staging, path.relative(bundleDir, output.path)), output.contents);
  }
  writeFileSync(path.join(staging, "inputs.json"), `${JSON.stringify(inputs)}\n`);
  const old = `${bundleDir}.${process.pid}.old`;
  try {
    renameSync(bundleDir, old);
  } catch {
    // None yet, or another process moved it meanwhile.
  }
  try {
    renameSync(staging, bundleDir);
  } catch {
    // Another process put its own in place meanwhile: built from the same sources.
  }
  rmSync(old, { recursive: true, force: true });
  rmSync(staging, { recursive: true, force: true });
}

/**
 * The URL of the module to run the command line from: the bundle, built first when stale; the
 * sources through tsx when it cannot be built (a read-only node_modules) or TOKENMARKET_SOURCES=1.
 */
export async function cliModule() {
  if (process.env.TOKENMARKET_SOURCES !== "1") {
    try {
      if (bundleIsStale()) await buildBundle();
      return pathToFileURL(bundleFile).href;
    } catch (error) {
      process.emitWarning(
        `could not bundle the command line (${error.message}); running its sources through tsx`,
      );
    }
  }
  const { register } = await import("tsx/esm/api");
  register();
  return pathToFileURL(entry).href;
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildBundle().catch((error) => {
    console.error(`bin/cli-bundle.js: ${error.message}`);
    process.exitCode = 1;
  });
}
