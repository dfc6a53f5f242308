/**
 * The set-up of the browser tests that walk a held batch: the API stack with approvals from a USD
 * threshold and the reconcile sweep, a submitter and an approver with passwords, and Chromium.
 */
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { parseApprovalThresholds } from "../../src/approvals/index.js";
import { type ApiStack, startApiStack } from "./api-stack.js";
import { launchChromium } from "./browser.js";

export interface ConsoleStack {
  stack: ApiStack;
  browser: BrowserContext;
  page: Page;
}

export async function startConsoleStack(options: {
  label: string;
  clock: { toInProgressMs: number; toFinalMs: number };
  /** USD total from which a batch waits for one approval. */
  usdThreshold: string;
  /** [name, password] of each. */
  submitter: [string, string];
  approver: [string, string];
}): Promise<ConsoleStack> {
  const stack = await startApiStack({
    label: options.label,
    clock: options.clock,
    approval: {
      thresholds: parseApprovalThresholds(`USD:${options.usdThreshold}`),
      required: 1,
      expiresHours: 24,
    },
    reconcile: { sweepEveryMs: 500, staleAfterMs: 300 },
  });
  await stack.server.auth.addUser(options.submitter[0], "submitter", options.submitter[1]);
  await stack.server.auth.addUser(options.approver[0], "approver", options.approver[1]);
  const { browser, page } = await launchChromium(path.join(stack.dir, "profile"), { acceptDownloads: true });
  return { stack, browser, page };
}
