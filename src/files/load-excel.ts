/**
 * exceljs, loaded the first time an XLSX file is written. It is the heaviest module the tool has
 * (about a fifth of a second to load), and most commands never write a workbook: `payouts status`
 * or `payouts worker` should not wait for it.
 */
type ExcelModule = typeof import("exceljs");

let loading: Promise<ExcelModule> | undefined;

export function loadExcel(): Promise<ExcelModule> {
  loading ??= import("exceljs").then((m) => (m as unknown as { default?: ExcelModule }).default ?? m);
  return loading;
}
