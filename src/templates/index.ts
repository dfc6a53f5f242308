/**
 * The payout sheet template (`templates/payout-template.{xlsx,csv}`) and what it describes.
 * `writeTemplate` backs `payouts template [--format xlsx|csv] [-o PATH]`.
 */
export { buildTemplate, buildTemplateWorkbook, templateFileName, writeTemplate } from "./build-template.js";
export {
  AMOUNT_FORMAT,
  COMMON_CURRENCIES,
  type CurrencyEntry,
  LAST_DATA_ROW,
  SHEETS,
  TEMPLATE_COLUMNS,
  TEMPLATE_FORMATS,
  TEMPLATE_HEADERS,
  TEXT_FORMAT,
  type TemplateColumn,
  type TemplateFormat,
} from "./template-spec.js";
