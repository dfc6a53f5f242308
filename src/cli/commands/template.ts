/** `payouts template`: write a blank payout sheet to fill in. */
import path from "node:path";
import { type Command, Option } from "commander";
import {
  TEMPLATE_FORMATS,
  type TemplateFormat,
  templateFileName,
  writeTemplate,
} from "../../templates/index.js";

export function registerTemplate(program: Command): void {
  program
    .command("template")
    .description("Write a blank payout sheet (XLSX with dropdowns and instructions, or CSV)")
    .addOption(new Option("--format <format>", "file format").choices([...TEMPLATE_FORMATS]).default("xlsx"))
    .option("-o, --output <path>", "where to write it (default: payout-template.<format> in this folder)")
    .action(async (opts: { format: TemplateFormat; output?: string }) => {
      const out = path.resolve(opts.output ?? templateFileName(opts.format));
      await writeTemplate(opts.format, out);
      process.stdout.write(`${out}\n`);
    });
}
