import * as path from "node:path";
import { ConfigError } from "../internal/errors.js";

/**
 * Reads `KEY=value` lines of `file` (default: `.env` in the working directory, where
 * `.env.example` tells users to copy it) into `process.env`. A variable already set in the real
 * environment wins, so `FOO=x npm start` overrides the file; a missing file is fine (the demo
 * needs none). Returns whether a file was read.
 */
export function loadEnvFile(file: string = path.resolve(".env")): boolean {
  try {
    process.loadEnvFile(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new ConfigError(".env", `cannot read ${file}: ${(error as Error).message}`);
  }
}
