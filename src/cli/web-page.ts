import { spawn } from "node:child_process";
import * as path from "node:path";
import { isStale, webDir } from "../../web/build.js";
import type { Logger } from "../internal/logger.js";

/**
 * Builds the explorer page when its sources changed since its last build (`npm install` builds
 * it). Checked in the start command itself rather than in an npm hook, which would cost a Node
 * process (about 0.8 s) at every start. A failed build leaves the API running; its `/` says how
 * to build the page.
 */
export async function buildPageIfStale(logger: Logger): Promise<void> {
  if (!isStale()) return;
  logger.info("the explorer page is older than its sources: building it");
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(webDir, "build.ts")], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.once("error", () => resolve(null));
    child.once("exit", resolve);
  });
  if (code !== 0) logger.warn({ exit_code: code }, "the explorer page could not be built: npm run build:web");
}
