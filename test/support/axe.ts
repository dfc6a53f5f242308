/**
 * Accessibility checks in the browser tests: axe-core (the npm package) is evaluated in the page (over
 * the DevTools protocol, so the console's strict CSP stays on) and run on the whole document. A test
 * fails on any serious or critical finding, naming the rule, what it means and where.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

let source: string | undefined;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Serious and critical findings of axe-core on the page as it is now ("rule: help (where)" each). */
export async function axeFindings(page: Page): Promise<string[]> {
  source ??= await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  if (!(await page.evaluate('"axe" in window'))) await page.evaluate(source);
  const violations = (await page.evaluate(
    'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)',
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.id}: ${v.help} (${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(" "))
          .join(", ")})`,
    );
}
