/** The set-up of the console (browser) tests: {@link useConsoleStack}. */
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type ApiStack, type ApiStackOptions, callApi, startApiStack } from "./api-stack.js";
import { launchChromium } from "./browser.js";

export interface ConsoleFixtureOptions extends ApiStackOptions {
  /** API tokens made for the test's own calls: name → role. The first is the one `call` uses. */
  tokens?: Record<string, string>;
  /** People who log in to the console: name → [role, password]. */
  users: Record<string, [role: string, password: string]>;
  /** Let the browser save downloads (a test that reads a downloaded file). */
  acceptDownloads?: boolean;
  /** How long closing may take. Default 60 s. */
  closeTimeoutMs?: number;
}

export interface ConsoleFixture {
  readonly stack: ApiStack;
  readonly page: Page;
  /** The secret of each token in {@link ConsoleFixtureOptions.tokens}, by name. */
  readonly tokens: Record<string, string>;
  /** An API call with the first token. */
  call(method: string, route: string, body?: unknown): ReturnType<typeof callApi>;
  /** An API call with the token named `who`. */
  callAs(who: string, method: string, route: string, body?: unknown): ReturnType<typeof callApi>;
}

/**
 * The set-up most console tests share: an API stack, API tokens for the test's own calls, people who
 * log in to the console, and Chromium; started before the file's tests and closed after them. Register
 * it at the top of a test file; its fields are there once the file's tests run. A file's own `afterAll`
 * registered after it runs before it (vitest runs after hooks in reverse), so what the file started on
 * the stack stops first.
 */
export function useConsoleStack(options: ConsoleFixtureOptions): ConsoleFixture {
  const { tokens: roles = {}, users, acceptDownloads, closeTimeoutMs, ...stackOptions } = options;
  let stack: ApiStack | undefined;
  let browser: BrowserContext | undefined;
  let page: Page | undefined;
  const tokens: Record<string, string> = {};
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the console fixture's ${what} is not started yet`);
    return value;
  };
  const callAs = (who: string, method: string, route: string, body?: unknown) =>
    callApi(started(stack, "stack").server.url, tokens[who], method, route, body);
  const first = Object.keys(roles)[0];

  beforeAll(async () => {
    stack = await startApiStack(stackOptions);
    for (const [name, role] of Object.entries(roles))
      tokens[name] = (await stack.server.auth.createToken(name, role, "test")).token;
    for (const [name, [role, password]] of Object.entries(users))
      await stack.server.auth.addUser(name, role, password);
    ({ browser, page } = await launchChromium(path.join(stack.dir, "profile"), { acceptDownloads }));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  }, closeTimeoutMs ?? 60_000);

  return {
    get stack() {
      return started(stack, "stack");
    },
    get page() {
      return started(page, "page");
    },
    tokens,
    call: (method, route, body) => callAs(first ?? "", method, route, body),
    callAs,
  };
}
