/**
 * Lists functions longer than N lines (default 120) and whether a comment above them says why
 * (no function over about 120 lines without one). Run from the repository: node scripts/long-functions.mjs [N]
 */

import { execSync } from "node:child_process";
import { readFileSync } from "node:fs";
import ts from "typescript";

const files = execSync("git ls-files 'src/*.ts' 'bin/*' 'bench/*.ts' 'scripts/*'", { cwd: process.cwd() })
  .toString()
  .trim()
  .split("\n")
  .filter((f) => /\.(ts|mjs|js)$/.test(f));
const limit = Number(process.argv[2] ?? 120);
for (const f of files) {
  const text = readFileSync(f, "utf8");
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node)
    ) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      if (end - start + 1 > limit) {
        let name = node.name?.getText?.() ?? "";
        if (
          !name &&
          node.parent &&
          (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent))
        )
          name = node.parent.name.getText();
        if (!name && node.parent && ts.isCallExpression(node.parent))
          name = `(callback of ${node.parent.expression.getText().slice(0, 40)})`;
        // comment right above the function (or its statement)
        let holder = node;
        while (
          holder.parent &&
          !ts.isSourceFile(holder.parent) &&
          !ts.isBlock(holder.parent) &&
          !ts.isClassDeclaration(holder.parent) &&
          !ts.isObjectLiteralExpression(holder.parent)
        )
          holder = holder.parent;
        const ranges = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [];
        const comment = ranges.map((r) => text.slice(r.pos, r.end)).join("\n");
        const why = /\b(long|lines|one (place|function|piece)|kept|why)\b/i.test(comment);
        console.log(`${end - start + 1}\t${f}:${start}\t${name}\t${why ? "why-comment" : "NO why"}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
