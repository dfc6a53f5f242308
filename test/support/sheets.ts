/** Payout sheets the tests write: valid rows on the sandbox's sample accounts. */
import { writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Writes `<dir>/<label>.csv`: `rows` valid USD ACH rows (references `<label>-1`...) from `ops-checking`
 * to `vendor-ach`, each its own amount (10.01, 10.02, ...: the same payment twice would be a possible
 * duplicate). Returns its path.
 */
export async function writeAchSheet(dir: string, label: string, rows: number): Promise<string> {
  const lines = ["reference,from_account,to_account,amount,currency,delivery"];
  for (let i = 1; i <= rows; i++)
    lines.push(`${label}-${i},ops-checking,vendor-ach,${(10 + i / 100).toFixed(2)},USD,standard-ach`);
  const file = path.join(dir, `${label}.csv`);
  await writeFile(file, `${lines.join("\n")}\n`);
  return file;
}
