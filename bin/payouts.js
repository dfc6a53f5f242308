#!/usr/bin/env node
// The published entry point: the compiled CLI. `npm ci` builds dist/ through the `prepare` script.
import "../dist/src/cli/main.js";
