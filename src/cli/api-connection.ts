/**
 * How a command reaches the Partner Payouts Service: the configured one, or an embedded sandbox when
 * the command allows it (the demo, and `--sandbox` for trying sheets safely).
 */

import { type RunningSandbox, type SandboxOptions, startSandbox } from "@payouts/sandbox";
import { type AppConfig, requireApi } from "../config/index.js";
import { createPayoutsClient, type PayoutsClient } from "../payouts-api/index.js";

export interface ApiConnection {
  api: PayoutsClient;
  /** Set when the connection is to an embedded sandbox started for this command. */
  sandbox: RunningSandbox | undefined;
  close(): Promise<void>;
}

export async function connectApi(
  config: AppConfig,
  opts: {
    sandbox: "never" | "when-unset" | "always";
    sandboxOptions?: SandboxOptions;
    /** Ends the "must be set" error, e.g. how this command can use the sandbox instead. */
    missingApiHint?: string;
  },
): Promise<ApiConnection> {
  const useSandbox = opts.sandbox === "always" || (opts.sandbox === "when-unset" && !config.apiUrl);
  const sandbox = useSandbox ? await startSandbox(opts.sandboxOptions) : undefined;
  const target = sandbox
    ? { apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: config.entityId }
    : requireApi(config, opts.missingApiHint);
  const api = createPayoutsClient({
    baseUrl: target.apiUrl,
    apiKey: target.apiKey,
    entityId: target.entityId,
    timeoutMs: config.apiTimeoutMs,
  });
  return {
    api,
    sandbox,
    close: async () => {
      await api.close();
      await sandbox?.close();
    },
  };
}
