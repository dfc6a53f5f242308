// Fails when any installed package declares an `engines.node` range that excludes the Node version our
// machines run (package.json `engines.node`), so an upgrade that needs a newer Node is caught in CI.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const semver = require("semver");
const ours = JSON.parse(readFileSync("package.json", "utf8")).engines.node;
const floor = semver.minVersion(ours).version;
const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const bad = Object.entries(lock.packages)
  .filter(([name, info]) => name && info.engines?.node && !semver.satisfies(floor, info.engines.node))
  .map(([name, info]) => `  ${name.replace(/^node_modules\//, "")} needs node ${info.engines.node}`);
if (bad.length > 0) {
  console.error(`These packages do not support node ${floor} (our engines: ${ours}):\n${bad.join("\n")}`);
  process.exit(1);
}
console.log(`every installed package supports node ${floor}`);
