/**
 * `payouts demo`: the main job on embedded defaults.
 *
 * Until the queue pipeline lands, the demo is a scripted tour of the service through our client: it
 * starts the sandbox in-process (unless PAYOUTS_API_URL points elsewhere), validates the sample sheet
 * against the live accounts, pays two rows directly (one FX with a rate-locked quote), waits until they
 * settle and prints what happened.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { packageFile } from "../../assets/index.js";
import { loadConfig } from "../../config/index.js";
import { summarizeValidation, summaryLines, validateSheet } from "../../intake/index.js";
import {
  type Account,
  type Payment,
  type PayoutsClient,
  TERMINAL_PAYMENT_STATUSES,
} from "../../payouts-api/index.js";
import { connectApi } from "../api-connection.js";
import { CliError, EXIT } from "../exit-codes.js";

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("Run the main job on embedded defaults (starts a sandbox unless PAYOUTS_API_URL is set)")
    .argument("[sheet]", "the payout sheet to validate (default: samples/payouts-valid.csv)")
    .action(async (sheet?: string) => {
      process.exitCode = await runDemo((line) => process.stdout.write(`${line}\n`), sheet);
    });
}

export async function runDemo(say: (line: string) => void, sheetPath?: string): Promise<number> {
  const connection = await connectApi(loadConfig(), {
    sandbox: "when-unset",
    sandboxOptions: { clock: { toInProgressMs: 500, toFinalMs: 1000 } },
  });
  if (connection.sandbox)
    say(`SANDBOX started at ${connection.sandbox.url} (simulated service; no real money moves)`);
  const { api } = connection;
  try {
    const accounts: Account[] = [];
    for await (const a of api.accounts.listAll()) accounts.push(a);
    const internal = accounts.filter((a) => a.ownershipType === "internal");
    say(`accounts: ${internal.length} internal, ${accounts.length - internal.length} external`);
    const limits = await api.limitations.get();
    for (const c of limits.capabilities)
      say(`  ${c.operation.padEnd(28)} ${c.allowed ? "allowed" : "blocked"}`);

    const sheet = sheetPath ?? packageFile("samples/payouts-valid.csv");
    const summary = await summarizeValidation(await validateSheet(sheet, { api }));
    for (const line of summaryLines(path.relative(process.cwd(), sheet) || sheet, summary)) say(line);

    const byRef = (ref: string) => {
      const found = accounts.find((a) => a.externalId === ref);
      if (!found)
        throw new CliError(`the service has no account "${ref}"; the demo expects the sandbox seed`);
      return found;
    };
    const from = byRef("ops-checking");
    const eur = byRef("supplier-eur");
    const quote = await api.tools.fxQuote({ receivingAccountId: eur.id, amount: 125_000, currency: "EUR" });
    say(`FX quote: EUR 1250.00 for USD ${(quote.amount / 100).toFixed(2)} at ${quote.usdToForeignRate}`);
    const run = randomUUID().slice(0, 8);
    const created: Payment[] = [
      await api.payments.create(
        {
          amount: 125_000,
          currency: "EUR",
          deliveryPreference: "international-fx",
          fxQuoteToken: quote.quoteToken,
          originatingAccountId: from.id,
          receivingAccountId: eur.id,
          compliance: { type: "goods-and-services", purpose: "Supplier invoice" },
          externalId: `demo-${run}-eur`,
          metadata: { demo: run },
        },
        { idempotencyKey: randomUUID() },
      ),
      await api.payments.create(
        {
          amount: 50_000,
          deliveryPreference: "standard-ach",
          originatingAccountId: from.id,
          receivingAccountId: byRef("vendor-ach").id,
          externalId: `demo-${run}-ach`,
          metadata: { demo: run },
        },
        { idempotencyKey: randomUUID() },
      ),
    ];
    const final = await Promise.all(created.map((p) => waitUntilFinal(api, p.id)));
    for (const p of final) {
      say(
        `payment ${p.id} ${p.externalId}: ${p.status} (${p.deliveryPreference}, ${p.amount} ${p.currency} minor units)`,
      );
    }
    return final.every((p) => p.status === "completed") ? EXIT.ok : EXIT.inputProblems;
  } finally {
    await connection.close();
  }
}

async function waitUntilFinal(api: PayoutsClient, id: string, timeoutMs = 60_000): Promise<Payment> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = await api.payments.get(id);
    if (TERMINAL_PAYMENT_STATUSES.includes(p.status) || Date.now() > deadline) return p;
    await sleep(200);
  }
}
