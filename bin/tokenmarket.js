#!/usr/bin/env node
// The `tokenmarket` command: the command line's bundle (bin/cli-bundle.js), rebuilt first when a
// source changed.
import { cliModule } from "./cli-bundle.js";

await import(await cliModule());
