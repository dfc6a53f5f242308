/**
 * Shared by the intake integration tests: a sandbox on an ephemeral loopback port with a real client,
 * and a helper that validates a sheet to the end and indexes the outcome by row number.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type RunningSandbox, type SandboxSeed, startSandbox } from "@payouts/sandbox";
import type { PayoutInstruction } from "../../../src/intake/payout-instruction.js";
import type { Problem, ProblemCode } from "../../../src/intake/problems.js";
import { type IntakeApi, validateSheet } from "../../../src/intake/validate-sheet.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import type { SheetHeader } from "../../../src/sheets/index.js";

export interface SandboxWithClient {
  sandbox: RunningSandbox;
  client: PayoutsClient;
  close(): Promise<void>;
}

export async function startSandboxWithClient(seed?: SandboxSeed): Promise<SandboxWithClient> {
  const sandbox = await startSandbox(seed ? { port: 0, seed } : { port: 0 });
  const client = createPayoutsClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    entityId: sandbox.entityId,
    timeoutMs: 5_000,
  });
  return {
    sandbox,
    client,
    close: async () => {
      await client.close();
      await sandbox.close();
    },
  };
}

export interface RowOutcome {
  problems: Problem[];
  codes: ProblemCode[];
  instruction?: PayoutInstruction;
}

export interface SheetOutcome {
  header: SheetHeader;
  sheetProblems: Problem[];
  /** By row number as the user sees it. */
  rows: Map<number, RowOutcome>;
}

/** Validates a sheet against the service behind `api` and reads every row. */
export async function validateAll(
  sheetPath: string,
  api: IntakeApi,
  options: { sheet?: string } = {},
): Promise<SheetOutcome> {
  const validation = await validateSheet(sheetPath, { api, ...options });
  const rows = new Map<number, RowOutcome>();
  for await (const validated of validation.rows) {
    rows.set(validated.row.rowNumber, {
      problems: validated.problems,
      codes: validated.problems.map((p) => p.code),
      ...(validated.instruction ? { instruction: validated.instruction } : {}),
    });
  }
  return { header: validation.header, sheetProblems: validation.sheetProblems, rows };
}

/** The row's outcome, failing loudly when the row was not read at all. */
export function rowOf(outcome: SheetOutcome, rowNumber: number): RowOutcome {
  const row = outcome.rows.get(rowNumber);
  if (!row)
    throw new Error(`row ${rowNumber} was not read; rows read: ${[...outcome.rows.keys()].join(", ")}`);
  return row;
}

/** A temporary folder for sheets written by a test; `remove()` deletes it. */
export async function makeTempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes a text file exactly as given (the test chooses BOM, line endings and delimiter). */
export async function writeText(dir: string, name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

/** The header our template writes, comma-separated. */
export const TEMPLATE_HEADER =
  "reference,from_account,to_account,amount,currency,delivery,payer_memo,recipient_note,purpose,attachment";
