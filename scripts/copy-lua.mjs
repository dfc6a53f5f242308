// Copies the Lua scripts (src/**/*.lua) into dist/src/, beside the compiled modules that read them:
// tsc emits only JavaScript. Part of `npm run build`.
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";

let copied = 0;
for (const file of readdirSync("src", { recursive: true, encoding: "utf8" })) {
  if (!file.endsWith(".lua")) continue;
  const to = join("dist", "src", file);
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(join("src", file), to);
  copied++;
}
if (copied === 0) throw new Error("no Lua scripts found under src/");
