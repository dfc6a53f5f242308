/**
 * Regenerates the checked-in template and sample files:
 *   templates/payout-template.{xlsx,csv}
 *   samples/payouts-valid.{csv,xlsx}, samples/payouts-mistakes.{csv,xlsx}
 *   samples/attachments/invoice-mxn-0001.pdf
 *
 * Run from the repository root (no extra tooling: Vite's module runner compiles the TypeScript):
 *   node --input-type=module -e 'await (await import("vite")).runnerImport("./scripts/make-samples.ts")'
 *
 * The account externalIds are those of the sandbox seed (samples/sandbox-seed.json). Sandbox
 * triggers: an amount whose minor units end in 13 fails, one ending in 77 stays `scheduled`; the
 * valid sheet has exactly one 13 row and no 77 row (a 77 row would never become final).
 * samples/README.md says how each row is meant to end; keep it in step with the rows below.
 */
import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type ExcelJS from "exceljs";
import { UTF8_BOM, writeFileAtomic } from "../src/files/index.js";
import {
  buildTemplate,
  buildTemplateWorkbook,
  SHEETS,
  TEMPLATE_HEADERS,
  templateFileName,
} from "../src/templates/index.js";

const ROOT = resolve(import.meta.dirname ?? ".", "..");

/** An amount as typed in a CSV, and as stored in the XLSX (a number, text, formula or error cell). */
interface SampleAmount {
  csv: string;
  xlsx: ExcelJS.CellValue;
}

/** One sample row, in template column order (amount separate because it differs per format). */
interface SampleRow {
  reference: string;
  from: string;
  to: string;
  amount: SampleAmount;
  currency: string;
  delivery: string;
  payerMemo: string;
  recipientNote: string;
  purpose: string;
  attachment: string;
  costCenter: string;
  invoice: string;
}

function num(text: string): SampleAmount {
  return { csv: text, xlsx: Number(text) };
}
function text(value: string): SampleAmount {
  return { csv: value, xlsx: value === "" ? null : value };
}

type Fields = [
  string,
  string,
  string,
  SampleAmount,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
function row(...f: Fields): SampleRow {
  const [
    reference,
    from,
    to,
    amount,
    currency,
    delivery,
    payerMemo,
    recipientNote,
    purpose,
    attachment,
    costCenter,
    invoice,
  ] = f;
  return {
    reference,
    from,
    to,
    amount,
    currency,
    delivery,
    payerMemo,
    recipientNote,
    purpose,
    attachment,
    costCenter,
    invoice,
  };
}

const MXN_ATTACHMENT = "attachments/invoice-mxn-0001.pdf";

// Minor units of every amount here end in neither 13 nor 77, except PAY-2404-022 (13: fails on purpose).
// biome-ignore format: one sample row per line reads as the sheet it becomes
const VALID_ROWS: SampleRow[] = [
  row("PAY-2404-001", "ops-checking", "vendor-ach", num("1250.00"), "USD", "standard-ach", "April janitorial services", "Invoice ACME-7781, thank you", "", "", "CC-410 Facilities", "ACME-7781"),
  row("PAY-2404-002", "ops-checking", "vendor-ach-2", num("980.40"), "USD", "same-day-ach", "Office supplies restock", "PO 5521", "", "", "CC-410 Facilities", "OFS-5521"),
  row("PAY-2404-003", "ops-checking", "vendor-ach", num("310.25"), "USD", "rtp", "Emergency HVAC repair", "Call-out of April 12", "", "", "CC-410 Facilities", "ACME-7790"),
  row("PAY-2404-004", "ops-checking", "vendor-check", num("450.00"), "USD", "standard-check", "Q2 landscaping", "Q2 landscaping, invoice GRN-204", "", "", "CC-410 Facilities", "GRN-204"),
  row("PAY-2404-005", "ops-checking", "vendor-check", num("275.50"), "USD", "express-check", "Signage reprint", "Reprint of lobby signs", "", "", "CC-220 Marketing", "SGN-118"),
  row("PAY-2404-006", "ops-checking", "vendor-check", num("1200.00"), "USD", "overnight-check", "Deposit, storage unit 14B", "Security deposit, unit 14B", "", "", "CC-410 Facilities", "STR-0090"),
  row("PAY-2404-007", "ops-checking", "vendor-wire", num("25000.00"), "USD", "domestic-wire", "Equipment lease, April", "Lease contract LSE-2404", "", "", "CC-300 Operations", "LSE-2404"),
  row("PAY-2404-008", "ops-checking", "vendor-wire", num("18500.00"), "USD", "instant-domestic-wire", "Server hardware, rush order", "Rush order HW-3381", "", "", "CC-510 IT", "HW-3381"),
  row("PAY-2404-009", "ops-checking", "vendor-vcard", num("640.00"), "USD", "virtual-card", "Software subscriptions, April", "Subscriptions April", "", "", "CC-510 IT", "SUB-0424"),
  row("PAY-2404-010", "ops-checking", "vendor-vcard", num("89.99"), "USD", "instant-virtual-card", "Conference registration", "Registration, J. Rivera", "", "", "CC-220 Marketing", "CONF-2024-18"),
  row("PAY-2404-011", "ops-checking", "supplier-eur", num("4200.00"), "EUR", "international-fx", "Machine parts, order 20419", "Rechnung EU-INV-20419", "Purchase of machine parts", "", "CC-300 Operations", "EU-INV-20419"),
  row("PAY-2404-012", "ops-checking", "supplier-gbp", num("3150.75"), "GBP", "fast-international-fx", "Strategy consulting, March", "Invoice GB-1147", "Consulting services", "", "CC-600 Strategy", "GB-1147"),
  row("PAY-2404-013", "ops-checking", "supplier-jpy", num("150000"), "JPY", "international-fx", "Precision components", "請求書 JP-88412", "Purchase of precision components", "", "CC-300 Operations", "JP-88412"),
  row("PAY-2404-014", "ops-checking", "supplier-mxn", num("52340.50"), "MXN", "international-fx", "Packaging materials, first order", "Factura MX-0001, gracias", "Purchase of packaging materials", MXN_ATTACHMENT, "CC-300 Operations", "MX-0001"),
  row("PAY-2404-015", "ops-checking", "supplier-usd-intl", num("5600.00"), "USD", "international-fx", "Freight forwarding, April", "Invoice FF-2290", "Freight forwarding services", "", "CC-300 Operations", "FF-2290"),
  row("PAY-2404-016", "ops-checking", "contractor-gusd", num("2000.00"), "USD", "international-gusd", "Contract work, April", "Thanks for April!", "Software development services", "", "CC-510 IT", "CTR-0424"),
  row("PAY-2404-017", "corporate-card", "vendor-ach-2", num("725.00"), "USD", "same-day-ach", "Catering, all-hands", "All-hands catering", "", "", "CC-100 Admin", "CAT-0412"),
  row("PAY-2404-018", "corporate-card", "vendor-wire", num("9800.00"), "USD", "instant-domestic-wire", "Trade show booth", "Booth 3, spring fair", "", "", "CC-220 Marketing", "TS-2024-3"),
  row("PAY-2404-019", "corporate-card", "vendor-check", num("350.00"), "USD", "standard-check", "Donation, food bank", "With our thanks", "", "", "CC-100 Admin", "DON-0419"),
  row("PAY-2404-020", "ops-checking", "vendor-ach", num("1875.00"), "", "", "Cleaning retainer, May", "Retainer May", "", "", "CC-410 Facilities", "ACME-7795"),
  row("PAY-2404-021", "ops-checking", "vendor-check", num("95.00"), "", "", "Parking permit refund", "Refund of permit P-031", "", "", "CC-100 Admin", "PRK-031"),
  row("PAY-2404-022", "ops-checking", "vendor-ach-2", num("432.13"), "USD", "standard-ach", "Toner cartridges", "PO 5530", "", "", "CC-410 Facilities", "OFS-5530"),
  // In the XLSX this amount is the formula 100.1+200.2, whose double result 300.29999999999995 reads
  // as 300.30 at the 15 significant digits Excel shows (docs/design.md §3.6).
  row("PAY-2404-023", "ops-checking", "vendor-ach", { csv: "300.30", xlsx: { formula: "100.1+200.2", result: 100.1 + 200.2 } }, "USD", "standard-ach", "Two invoice lines: 100.10 + 200.20", "Invoices ACME-7798 and ACME-7799", "", "", "CC-410 Facilities", "ACME-7799"),
];

const LONG_MEMO =
  `Payment for services rendered ${"as per the attached statement of work and the change orders agreed ".repeat(4)}`.trim();
const LONG_METADATA = `INV-${"2024-04-".repeat(15)}0001`;

// biome-ignore format: one sample row per line reads as the sheet it becomes
const MISTAKE_ROWS: SampleRow[] = [
  row("MIS-001", "ops-checking", "vendor-ach", num("100.00"), "USD", "standard-ach", "First use of MIS-001", "", "", "", "CC-410 Facilities", "M-001"),
  row("MIS-001", "ops-checking", "vendor-ach-2", num("200.00"), "USD", "standard-ach", "Reference used twice", "", "", "", "CC-410 Facilities", "M-002"),
  row("MIS 003", "ops-checking", "vendor-ach", num("50.00"), "USD", "standard-ach", "Space in reference", "", "", "", "", ""),
  row("MIS/004", "ops-checking", "vendor-ach", num("50.00"), "USD", "standard-ach", "Slash in reference", "", "", "", "", ""),
  row("MIS-005", "ops-checking", "vendor-acme", num("75.00"), "USD", "standard-ach", "Unknown payee", "", "", "", "", ""),
  row("MIS-006", "vendor-ach", "vendor-ach-2", num("60.00"), "USD", "standard-ach", "Payer is a payee account", "", "", "", "", ""),
  row("MIS-007", "ops-checking", "corporate-card", num("60.00"), "USD", "", "Payee is one of our own accounts", "", "", "", "", ""),
  row("MIS-008", "ops-checking", "vendor-ach", text("1,234"), "USD", "standard-ach", "Ambiguous amount", "", "", "", "", ""),
  row("MIS-009", "ops-checking", "vendor-ach", num("12.345"), "USD", "standard-ach", "Three decimals in USD", "", "", "", "", ""),
  row("MIS-010", "ops-checking", "supplier-jpy", num("10.5"), "JPY", "international-fx", "Decimals in JPY", "", "Purchase of components", "", "", ""),
  row("MIS-011", "ops-checking", "vendor-ach", num("-50.00"), "USD", "standard-ach", "Negative amount", "", "", "", "", ""),
  row("MIS-012", "ops-checking", "vendor-ach", num("0"), "USD", "standard-ach", "Zero amount", "", "", "", "", ""),
  row("MIS-013", "ops-checking", "vendor-ach", text(""), "USD", "standard-ach", "Blank amount", "", "", "", "", ""),
  row("MIS-014", "ops-checking", "supplier-eur", text("$100.00"), "EUR", "international-fx", "Dollar sign on a EUR row", "", "Purchase of machine parts", "", "", ""),
  row("MIS-015", "ops-checking", "vendor-ach", num("100.00"), "EUR", "standard-ach", "EUR to a USD bank account", "", "", "", "", ""),
  row("MIS-016", "ops-checking", "vendor-check", num("100.00"), "USD", "rtp", "RTP to a check payee", "", "", "", "", ""),
  row("MIS-017", "corporate-card", "vendor-ach", num("100.00"), "USD", "standard-ach", "standard-ach from a card", "", "", "", "", ""),
  row("MIS-018", "corporate-card", "vendor-vcard", num("100.00"), "USD", "virtual-card", "Virtual card from a card", "", "", "", "", ""),
  row("MIS-019", "payroll-unverified", "vendor-ach", num("100.00"), "USD", "standard-ach", "Payer not verified yet", "", "", "", "", ""),
  row("MIS-020", "ops-checking", "payee-card", num("100.00"), "USD", "", "Card payee: no rail", "", "", "", "", ""),
  row("MIS-021", "ops-checking", "supplier-mxn", num("1000.00"), "MXN", "international-fx", "Attachment file missing", "", "Purchase of packaging materials", "attachments/missing-invoice.pdf", "", ""),
  row("MIS-022", "ops-checking", "vendor-ach", num("100.00"), "USD", "standard-ach", LONG_MEMO, "", "", "", "", ""),
  row("MIS-023", "ops-checking", "vendor-ach", num("100.00"), "USD", "standard-ach", "Metadata value too long", "", "", "", "", LONG_METADATA),
  row("MIS-024", "ops-checking", "vendor-ach", { csv: "#REF!", xlsx: { formula: "#REF!*2", result: { error: "#REF!" } } }, "USD", "standard-ach", "Formula pointing at a deleted sheet", "", "", "", "", ""),
  row("MIS-025", "ops-checking", "vendor-ach", num("100.00"), "USD", "express", "Unknown delivery option", "", "", "", "", ""),
  row("MIS-026", "ops-checking", "vendor-ach", num("100.00"), "US$", "standard-ach", "Not an ISO currency code", "", "", "", "", ""),
  row("MIS-027", "ops-checking", "vendor-ach", num("27.00"), "USD", "standard-ach", "Valid row: the note below is shown as text", '=HYPERLINK("http://example.com/refund","Click for your refund")', "", "", "CC-410 Facilities", "M-027"),
];

function csvCells(r: SampleRow): string[] {
  return [
    r.reference,
    r.from,
    r.to,
    r.amount.csv,
    r.currency,
    r.delivery,
    r.payerMemo,
    r.recipientNote,
    r.purpose,
    r.attachment,
    r.costCenter,
    r.invoice,
  ];
}

/**
 * Sample CSVs are what a person's spreadsheet exports: text as typed. They are written with plain
 * RFC 4180 quoting and no formula escaping, since they are inputs (an escaped `'-50.00` is not what
 * anyone would submit).
 */
function sampleCsv(rows: SampleRow[]): string {
  const quote = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  const line = (cells: readonly string[]) => `${cells.map(quote).join(",")}\r\n`;
  return UTF8_BOM + line(TEMPLATE_HEADERS) + rows.map((r) => line(csvCells(r))).join("");
}

/** A sample XLSX is the template workbook with the rows filled in (dropdowns and help included). */
async function sampleXlsx(rows: SampleRow[]): Promise<Buffer> {
  const workbook = await buildTemplateWorkbook();
  const sheet = workbook.getWorksheet(SHEETS.data);
  if (!sheet) throw new Error("template has no data sheet");
  rows.forEach((r, i) => {
    const cells: ExcelJS.CellValue[] = csvCells(r).map((v) => (v === "" ? null : v));
    cells[3] = r.amount.xlsx;
    const sheetRow = sheet.getRow(i + 2);
    sheetRow.values = cells;
    // Whole yen: the template's 2-decimal display would suggest sen that JPY does not have.
    if (r.currency === "JPY") sheetRow.getCell(4).numFmt = "#,##0";
    sheetRow.commit();
  });
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/** A one-page PDF invoice, with a correct cross-reference table so strict readers accept it. */
function invoicePdf(): Buffer {
  const content = [
    "BT /F1 20 Tf 72 720 Td (Factura / Invoice MX-0001) Tj ET",
    "BT /F1 12 Tf 72 690 Td (Empaques del Norte S.A. de C.V.) Tj ET",
    "BT /F1 12 Tf 72 670 Td (Packaging materials: 52,340.50 MXN) Tj ET",
    "BT /F1 10 Tf 72 640 Td (Sample attachment for the payouts demo.) Tj ET",
  ].join("\n");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(pdf));
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xrefAt = Buffer.byteLength(pdf);
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, "0")} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(pdf, "latin1");
}

async function write(relative: string, data: string | Buffer): Promise<void> {
  const path = join(ROOT, relative);
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, data);
  console.log(`wrote ${relative}`);
}

await write(join("templates", templateFileName("xlsx")), await buildTemplate("xlsx"));
await write(join("templates", templateFileName("csv")), await buildTemplate("csv"));
await write("samples/payouts-valid.csv", sampleCsv(VALID_ROWS));
await write("samples/payouts-valid.xlsx", await sampleXlsx(VALID_ROWS));
await write("samples/payouts-mistakes.csv", sampleCsv(MISTAKE_ROWS));
await write("samples/payouts-mistakes.xlsx", await sampleXlsx(MISTAKE_ROWS));
await write(join("samples", MXN_ATTACHMENT), invoicePdf());
