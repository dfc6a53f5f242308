/**
 * The pure row rules of intake: a hand-built header (titled the way people title their own sheets, not
 * our canonical names) and rows checked against a live context built from fixed accounts. Every
 * problem must name the row as the user sees it, the column as headed in their sheet, and say what
 * is wrong with which value.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkHeader, checkRow, REFERENCE_MAX } from "../../../src/intake/check-row.js";
import { buildLiveContext, type LiveContext } from "../../../src/intake/live-context.js";
import { RESERVED_METADATA_KEYS } from "../../../src/intake/payout-instruction.js";
import { PROBLEM_CODES, type ProblemCode } from "../../../src/intake/problems.js";
import type { AmountConvention } from "../../../src/money/index.js";
import {
  type Account,
  type Capability,
  METADATA_KEY_MAX,
  METADATA_MAX_KEYS,
  METADATA_VALUE_MAX,
  TEXT_LIMITS,
} from "../../../src/payouts-api/wire-types.js";
import { findHeader, type SheetCell, type SheetHeader, type SheetRow } from "../../../src/sheets/index.js";
import { account } from "./live-accounts.js";

// ---------------------------------------------------------------------------------------------------
// Fixtures: accounts like the sandbox seed, a header titled by a user, rows built from plain strings.
// ---------------------------------------------------------------------------------------------------

const international = (currency: string) => ({ currency, accountNumberLast4: "0001", address: {} });

const ACCOUNTS: Account[] = [
  account("ops-checking", "internal", "ach", { isVerified: true }),
  account("payroll-unverified", "internal", "ach", { isVerified: false }),
  account("corporate-card", "internal", "card", { isVerified: true }),
  account("vendor-ach", "external", "ach"),
  account("vendor-check", "external", "check"),
  account("vendor-wire", "external", "domestic-wire"),
  account("vendor-vcard", "external", "virtual-card"),
  account("payee-card", "external", "card"),
  account("supplier-eur", "external", "international-fx", { international: international("EUR") }),
  account("supplier-jpy", "external", "international-fx", { international: international("JPY") }),
  account("contractor-gusd", "external", "international-gusd"),
];

const allowed = (operation: string): Capability => ({ operation, allowed: true, reasons: [] });
const ALL_ALLOWED = {
  capabilities: [allowed("payment.domestic:write"), allowed("payment.international:write")],
};
const live = buildLiveContext(ACCOUNTS, ALL_ALLOWED);

/** Column titles as a user might write them; each maps to one of our columns (see src/sheets/header.ts). */
const TITLES = [
  "Ref", //                  A reference
  "From", //                 B from_account
  "Payee Account", //        C to_account
  "Amount", //               D amount
  "CCY", //                  E currency
  "Delivery Preference", //  F delivery
  "Memo", //                 G payer_memo
  "Note to recipient", //    H recipient_note
  "Purpose", //              I purpose
  "Attachment", //           J attachment
  "metadata.cost_center", // K metadata.cost_center
  "Meta: Invoice", //        L metadata.Invoice (a metadata key keeps its case)
  "Approved by", //          M not one of ours: carried along, never checked
];

function makeHeader(titles: string[], amountConvention: AmountConvention = "dot"): SheetHeader {
  const found = findHeader([titles]);
  if (!found) throw new Error("test header not recognised");
  // A title row above the header, as in many exported sheets: row numbers below count it.
  return { columns: found.columns, headerRowNumber: 2, format: "xlsx", encoding: "xlsx", amountConvention };
}
const HEADER = makeHeader(TITLES);

type CellInput = string | SheetCell;
const ROW = 7;
const SHEET_DIR = path.resolve("/data/sheets/april");

/** A valid row of a bank-funded ACH payout, with `changes` applied (by canonical column name). */
function makeRow(changes: Record<string, CellInput> = {}, rowNumber = ROW, header = HEADER): SheetRow {
  const values: Record<string, CellInput> = {
    reference: "PAY-0001",
    from_account: "ops-checking",
    to_account: "vendor-ach",
    amount: "1250.00",
    currency: "USD",
    delivery: "standard-ach",
    ...changes,
  };
  const cells: Record<string, SheetCell> = {};
  for (const column of header.columns) {
    const value = values[column.key];
    if (value === undefined) cells[column.key] = { text: "", kind: "empty" };
    else cells[column.key] = typeof value === "string" ? { text: value, kind: "string" } : value;
  }
  return { rowNumber, cells };
}

function check(changes: Record<string, CellInput> = {}, context: LiveContext = live, header = HEADER) {
  return checkRow(makeRow(changes, ROW, header), { live: context, header, sheetDir: SHEET_DIR });
}

// ---------------------------------------------------------------------------------------------------
// One case per problem code the pure rules emit.
// ---------------------------------------------------------------------------------------------------

interface Case {
  code: ProblemCode;
  what: string;
  changes: Record<string, CellInput>;
  /** The column title as written in the header. */
  column: string;
  /** Pieces the message must contain: the value, and what to do. */
  says: string[];
  context?: LiveContext;
  header?: SheetHeader;
}

const restricted = (operation: string): LiveContext =>
  buildLiveContext(ACCOUNTS, {
    capabilities: [
      {
        operation,
        allowed: false,
        reasons: [
          {
            code: "MissingInformation",
            message: "Beneficial owner information is incomplete.",
            missingFields: ["beneficialOwners.fx-account-holder", "taxInfo.identifier"],
          },
        ],
      },
    ],
  });

const ROW_CASES: Case[] = [
  {
    code: "CELL_ERROR",
    what: "an amount cell showing #REF!",
    changes: { amount: { text: "#REF!", kind: "error", error: "#REF!" } },
    column: "Amount",
    says: [`D${ROW}`, "#REF!", "fix the formula or type the value"],
  },
  {
    code: "ID_PRECISION_LOST",
    what: "a 19-digit payee id that Excel stored as a number",
    changes: {
      to_account: { text: "1234567890123456800", kind: "number", number: 1234567890123456800, lossy: true },
    },
    column: "Payee Account",
    says: [`C${ROW}`, "1234567890123456800", "more than 15 digits", "Format the column as Text"],
  },
  {
    code: "REFERENCE_INVALID",
    what: "a reference with a slash",
    changes: { reference: "INV/2404" },
    column: "Ref",
    says: ['"INV/2404"', 'letters, digits, "-" and "_"'],
  },
  {
    code: "REFERENCE_TOO_LONG",
    what: "a reference one character too long",
    changes: { reference: "R".repeat(REFERENCE_MAX + 1) },
    column: "Ref",
    says: [`${REFERENCE_MAX + 1} characters`, `at most ${REFERENCE_MAX}`],
  },
  {
    code: "FROM_ACCOUNT_MISSING",
    what: "a blank paying account",
    changes: { from_account: "  " },
    column: "From",
    says: ["from_account is blank", "acct_ id or the account's externalId"],
  },
  {
    code: "FROM_ACCOUNT_NOT_FOUND",
    what: "a misspelt paying account",
    changes: { from_account: "ops-chequing" },
    column: "From",
    says: ['"ops-chequing"', "check the spelling"],
  },
  {
    code: "FROM_ACCOUNT_NOT_INTERNAL",
    what: "a payee account used to pay",
    changes: { from_account: "vendor-check" },
    column: "From",
    says: ["vendor-check (acct_vendor_check)", "internal"],
  },
  {
    code: "FROM_ACCOUNT_NOT_VERIFIED",
    what: "an unverified ACH paying account",
    changes: { from_account: "payroll-unverified" },
    column: "From",
    says: ["payroll-unverified", "not verified", "finish verification"],
  },
  {
    code: "TO_ACCOUNT_MISSING",
    what: "a blank payee",
    changes: { to_account: "" },
    column: "Payee Account",
    says: ["to_account is blank", "acct_ id or the account's externalId"],
  },
  {
    code: "TO_ACCOUNT_NOT_FOUND",
    what: "an unknown payee",
    changes: { to_account: "vendor-acme" },
    column: "Payee Account",
    says: ['"vendor-acme"', "create the account first"],
  },
  {
    code: "TO_ACCOUNT_NOT_EXTERNAL",
    what: "one of our own accounts as payee",
    changes: { to_account: "acct_corporate_card" },
    column: "Payee Account",
    says: ["corporate-card (acct_corporate_card)", "payee (external) account"],
  },
  {
    code: "TO_ACCOUNT_NO_RAIL",
    what: "a card account as payee",
    changes: { to_account: "payee-card", delivery: "" },
    column: "Payee Account",
    says: ["payee-card", "card account", "choose another payee account"],
  },
  {
    code: "CURRENCY_INVALID",
    what: "a currency written as a symbol",
    changes: { currency: "US$" },
    column: "CCY",
    says: ['"US$"', "three-letter ISO 4217 code"],
  },
  {
    code: "CURRENCY_UNKNOWN",
    what: "a three-letter code that is no currency",
    changes: { currency: "XYZ" },
    column: "CCY",
    says: ['"XYZ"', "ISO 4217"],
  },
  {
    code: "CURRENCY_MISMATCH",
    what: "EUR to a USD bank account",
    changes: { currency: "EUR" },
    column: "CCY",
    says: ["vendor-ach", "paid in USD", "the row says EUR", "write USD"],
  },
  {
    code: "AMOUNT_MISSING",
    what: "a blank amount",
    changes: { amount: "" },
    column: "Amount",
    says: ["blank"],
  },
  {
    code: "AMOUNT_INVALID",
    what: "a letter O typed for a zero",
    changes: { amount: "1O0.00" },
    column: "Amount",
    says: ['"1O0.00"', "not an amount"],
  },
  {
    code: "AMOUNT_AMBIGUOUS",
    what: "1,234 in a sheet whose decimal mark is unclear",
    changes: { amount: "1,234" },
    header: makeHeader(TITLES, "unknown"),
    column: "Amount",
    says: ['"1,234"'],
  },
  {
    code: "AMOUNT_NEGATIVE",
    what: "a negative amount",
    changes: { amount: "-50.00" },
    column: "Amount",
    says: ['"-50.00"', "must be positive"],
  },
  {
    code: "AMOUNT_ZERO",
    what: "a zero amount",
    changes: { amount: "0.00" },
    column: "Amount",
    says: ['"0.00"', "more than zero"],
  },
  {
    code: "AMOUNT_TOO_PRECISE",
    what: "three decimals in USD",
    changes: { amount: "12.345" },
    column: "Amount",
    says: ['"12.345"', "USD", "never rounded"],
  },
  {
    code: "AMOUNT_TOO_LARGE",
    what: "more minor units than can be counted exactly",
    changes: { amount: "900000000000000.00" },
    column: "Amount",
    says: ['"900000000000000.00"', "too large"],
  },
  {
    code: "AMOUNT_CURRENCY_MISMATCH",
    what: "a euro sign on a USD row",
    changes: { amount: "€100.00" },
    column: "Amount",
    says: ['"€100.00"', "USD"],
  },
  {
    code: "DELIVERY_UNKNOWN",
    what: "a made-up delivery speed",
    changes: { delivery: "express" },
    column: "Delivery Preference",
    says: ['"express"', "standard-ach, same-day-ach, rtp", "leave it blank"],
  },
  {
    code: "DELIVERY_RAIL_MISMATCH",
    what: "rtp to a check payee",
    changes: { to_account: "vendor-check", delivery: "rtp" },
    column: "Delivery Preference",
    says: ["rtp cannot pay vendor-check", "standard-check, express-check, overnight-check"],
  },
  {
    code: "DELIVERY_SUPERSEDED_FOR_CARD",
    what: "standard-ach from a card",
    changes: { from_account: "corporate-card", delivery: "standard-ach" },
    column: "Delivery Preference",
    says: ["standard-ach", "corporate-card", "use same-day-ach"],
  },
  {
    code: "DELIVERY_VIRTUAL_CARD_FROM_CARD",
    what: "a virtual card paid from a card",
    changes: { from_account: "corporate-card", to_account: "vendor-vcard", delivery: "virtual-card" },
    column: "Delivery Preference",
    says: ["vendor-vcard", "corporate-card", "pay it from a bank account"],
  },
  {
    code: "OPERATION_NOT_ALLOWED",
    what: "a domestic payment the entity may not make",
    changes: {},
    context: restricted("payment.domestic:write"),
    column: "Payee Account",
    says: [
      "payment.domestic",
      "MissingInformation",
      "beneficialOwners.fx-account-holder, taxInfo.identifier",
    ],
  },
  {
    code: "TEXT_TOO_LONG",
    what: "a payer memo over the service's limit",
    changes: { payer_memo: "m".repeat(TEXT_LIMITS.payerMemo + 1) },
    column: "Memo",
    says: [`${TEXT_LIMITS.payerMemo + 1} characters`, `at most ${TEXT_LIMITS.payerMemo}`],
  },
  {
    code: "METADATA_VALUE_TOO_LONG",
    what: "a metadata value over the service's limit",
    changes: { "metadata.Invoice": "I".repeat(METADATA_VALUE_MAX + 1) },
    column: "Meta: Invoice",
    says: [`${METADATA_VALUE_MAX + 1} characters`, `at most ${METADATA_VALUE_MAX}`],
  },
  {
    code: "ATTACHMENT_INVALID",
    what: "an attachment path that climbs out of the sheet's folder",
    changes: { attachment: "../payroll/secret.pdf" },
    column: "Attachment",
    says: ['"../payroll/secret.pdf"', "inside the sheet's folder"],
  },
];

/** Codes only the sheet-wide I/O checks of validate-sheet.ts emit (tested in test/integration/intake). */
const IO_CODES: ProblemCode[] = [
  "REFERENCE_DUPLICATE",
  "POSSIBLE_DUPLICATE", // test/integration/intake/possible-duplicates.test.ts
  "DELIVERY_NOT_ELIGIBLE",
  "ATTACHMENT_NOT_FOUND",
  "ATTACHMENT_TOO_LARGE",
  "ATTACHMENT_LINK", // test/unit/intake/attachment-file.test.ts
];
const HEADER_CODES: ProblemCode[] = ["COLUMN_MISSING", "METADATA_KEY_INVALID", "TOO_MANY_METADATA_COLUMNS"];
/** Codes of the control totals, checked once every row was read (test/unit/intake/control-totals.test.ts). */
const CONTROL_CODES: ProblemCode[] = [
  "CONTROL_TOTAL_MISMATCH",
  "CONTROL_ROWS_MISMATCH",
  "CONTROL_TOTAL_UNREADABLE",
  "CONTROL_TOTAL_NOT_LAST",
];
/** Codes about cells outside the header, tested on their own below. */
const UNHEADED_CODES: ProblemCode[] = ["UNHEADED_CELL"];

describe("checkRow: one problem per mistake, with row, column title and a plain sentence", () => {
  it("covers every problem code that the pure rules can emit", () => {
    const covered = new Set<ProblemCode>([
      ...ROW_CASES.map((c) => c.code),
      ...HEADER_CODES,
      ...IO_CODES,
      ...UNHEADED_CODES,
      ...CONTROL_CODES,
    ]);
    expect(PROBLEM_CODES.filter((code) => !covered.has(code))).toEqual([]);
  });

  it.each(ROW_CASES)("$code: $what", ({ code, changes, column, says, context, header }) => {
    const result = check(changes, context ?? live, header ?? HEADER);
    expect(result.problems).toEqual([{ row: ROW, column, code, message: expect.any(String) }]);
    for (const piece of says) expect(result.problems[0]?.message).toContain(piece);
    expect(result.instruction).toBeUndefined();
    expect(result.needsEligibilityCheck).toBe(false);
  });
});

describe("checkRow: a valid row becomes a payout instruction", () => {
  it("resolves accounts to acct_ ids, the amount to minor units and keeps the sheet's metadata", () => {
    const result = check({
      reference: "  PAY-2404-001 ",
      to_account: "acct_vendor_ach",
      amount: "1,250.00",
      currency: "usd",
      delivery: "Same Day ACH",
      payer_memo: "April janitorial services",
      recipient_note: "Invoice ACME-7781",
      attachment: "attachments/invoice-7781.pdf",
      "metadata.cost_center": "CC-410 Facilities",
      "metadata.Invoice": "ACME-7781",
      "Approved by": "J. Rivera",
    });
    expect(result.problems).toEqual([]);
    expect(result.instruction).toEqual({
      rowNumber: ROW,
      rowKey: "PAY-2404-001",
      reference: "PAY-2404-001",
      originatingAccountId: "acct_ops_checking",
      receivingAccountId: "acct_vendor_ach",
      amount: 125000,
      currency: "USD",
      deliveryPreference: "same-day-ach",
      deliveryResolvedFromBlank: false,
      payerMemo: "April janitorial services",
      recipientNote: "Invoice ACME-7781",
      purpose: undefined,
      attachment: { kind: "file", path: path.join(SHEET_DIR, "attachments", "invoice-7781.pdf") },
      metadata: { cost_center: "CC-410 Facilities", Invoice: "ACME-7781" },
    });
    // A faster variant from a bank account must be confirmed by the service's eligibility tool.
    expect(result.needsEligibilityCheck).toBe(true);
    expect(result.attachmentFile).toBe(path.join(SHEET_DIR, "attachments", "invoice-7781.pdf"));
  });

  it("keys a row without reference by its row number, and leaves blank metadata out", () => {
    const result = check({ reference: "", "metadata.cost_center": "   " });
    expect(result.problems).toEqual([]);
    expect(result.instruction).toMatchObject({ rowKey: `#${ROW}`, reference: undefined, metadata: {} });
    expect(result.instruction?.attachment).toBeUndefined();
    expect(result.attachmentFile).toBeUndefined();
  });

  it("takes a numeric amount cell at Excel's 15 significant digits (0.1+0.2 is 0.30)", () => {
    const result = check({ amount: { text: "0.3", kind: "number", number: 0.1 + 0.2, formula: true } });
    expect(result.problems).toEqual([]);
    expect(result.instruction?.amount).toBe(30);
  });

  it("pays FX in the payee's currency with its own exponent (JPY has none)", () => {
    const result = check({
      to_account: "supplier-jpy",
      currency: "JPY",
      amount: "150,000",
      delivery: "",
      purpose: "Purchase of components",
    });
    expect(result.problems).toEqual([]);
    expect(result.instruction).toMatchObject({
      amount: 150000,
      currency: "JPY",
      deliveryPreference: "international-fx",
      purpose: "Purchase of components",
    });
  });

  it("sends an att_ id as is, without a file to check", () => {
    const result = check({ attachment: "att_01HXYZ" });
    expect(result.instruction?.attachment).toEqual({ kind: "id", id: "att_01HXYZ" });
    expect(result.attachmentFile).toBeUndefined();
  });
});

describe("checkRow: blank delivery and blank currency", () => {
  it("resolves a blank delivery to the standard speed of the payee's rail and says so", () => {
    const cases: Array<[string, string, string]> = [
      ["vendor-ach", "USD", "standard-ach"],
      ["vendor-check", "USD", "standard-check"],
      ["vendor-wire", "USD", "domestic-wire"],
      ["vendor-vcard", "USD", "virtual-card"],
      ["supplier-eur", "EUR", "international-fx"],
      ["contractor-gusd", "USD", "international-gusd"],
    ];
    for (const [to, currency, expected] of cases) {
      const result = check({ to_account: to, currency, delivery: "" });
      expect(result.problems, to).toEqual([]);
      expect(result.instruction, to).toMatchObject({
        deliveryPreference: expected,
        deliveryResolvedFromBlank: true,
      });
      expect(result.needsEligibilityCheck, to).toBe(false);
    }
  });

  it("resolves a blank delivery from a card to the card's normal speed, with no eligibility check", () => {
    const ach = check({ from_account: "corporate-card", delivery: "" });
    expect(ach.instruction).toMatchObject({
      deliveryPreference: "same-day-ach",
      deliveryResolvedFromBlank: true,
    });
    expect(ach.needsEligibilityCheck).toBe(false);
    const wire = check({ from_account: "corporate-card", to_account: "vendor-wire", delivery: "" });
    expect(wire.instruction).toMatchObject({ deliveryPreference: "instant-domestic-wire" });
    expect(wire.needsEligibilityCheck).toBe(false);
  });

  it("reads a blank currency as USD", () => {
    const result = check({ currency: "" });
    expect(result.problems).toEqual([]);
    expect(result.instruction?.currency).toBe("USD");
  });

  it("tells the user that a blank currency meant USD when the payee is paid in another currency", () => {
    const result = check({ to_account: "supplier-eur", currency: "", delivery: "" });
    expect(result.problems).toEqual([
      {
        row: ROW,
        column: "CCY",
        code: "CURRENCY_MISMATCH",
        message: expect.stringContaining("(blank means USD); write EUR"),
      },
    ]);
  });
});

describe("checkRow: card-funded payments", () => {
  it("accepts the fast values a card must use, without an eligibility check", () => {
    for (const [to, delivery] of [
      ["vendor-ach", "same-day-ach"],
      ["vendor-wire", "instant-domestic-wire"],
      ["vendor-check", "standard-check"],
    ] as const) {
      const result = check({ from_account: "corporate-card", to_account: to, delivery });
      expect(result.problems, delivery).toEqual([]);
      expect(result.instruction?.deliveryPreference).toBe(delivery);
      expect(result.needsEligibilityCheck, delivery).toBe(false);
    }
  });

  it("still confirms the other faster variants from a card with the eligibility tool (only the two above are exempt)", () => {
    for (const [to, delivery] of [
      ["vendor-ach", "rtp"],
      ["vendor-check", "express-check"],
      ["vendor-check", "overnight-check"],
    ] as const) {
      const result = check({ from_account: "corporate-card", to_account: to, delivery });
      expect(result.instruction?.deliveryPreference).toBe(delivery);
      expect(result.needsEligibilityCheck, delivery).toBe(true);
    }
  });

  it("refuses domestic-wire from a card and names instant-domestic-wire instead (never rewrites it)", () => {
    const result = check({
      from_account: "corporate-card",
      to_account: "vendor-wire",
      delivery: "domestic-wire",
    });
    expect(result.problems).toEqual([
      {
        row: ROW,
        column: "Delivery Preference",
        code: "DELIVERY_SUPERSEDED_FOR_CARD",
        message: expect.stringContaining("use instant-domestic-wire"),
      },
    ]);
    expect(result.instruction).toBeUndefined();
  });
});

describe("checkRow: entity limitations", () => {
  it("refuses international rows with the limitation's reasons and missing fields, and lets domestic rows through", () => {
    const context = restricted("payment.international:write");
    const fx = check({ to_account: "supplier-eur", currency: "EUR", delivery: "international-fx" }, context);
    expect(fx.problems).toHaveLength(1);
    expect(fx.problems[0]).toMatchObject({
      row: ROW,
      column: "Payee Account",
      code: "OPERATION_NOT_ALLOWED",
    });
    expect(fx.problems[0]?.message).toContain("may not make payment.international payments");
    expect(fx.problems[0]?.message).toContain(
      "MissingInformation: Beneficial owner information is incomplete.",
    );
    expect(fx.problems[0]?.message).toContain(
      "missing: beneficialOwners.fx-account-holder, taxInfo.identifier",
    );
    // GUSD counts as international too.
    expect(check({ to_account: "contractor-gusd", delivery: "" }, context).problems[0]?.code).toBe(
      "OPERATION_NOT_ALLOWED",
    );
    expect(check({}, context).problems).toEqual([]);
  });
});

describe("checkRow: cells that cannot be trusted", () => {
  it("reports a formula without a cached value as a cell to recalculate, not as a missing amount", () => {
    const result = check({
      amount: { text: "", kind: "error", error: "FORMULA_NOT_CALCULATED", formula: true },
    });
    expect(result.problems).toEqual([
      {
        row: ROW,
        column: "Amount",
        code: "CELL_ERROR",
        message: expect.stringContaining(`cell D${ROW} holds a formula without a calculated value`),
      },
    ]);
  });

  it("refuses a paying account id that lost its last digits, and does not look it up", () => {
    const result = check({
      from_account: {
        text: "9876543210987650000",
        kind: "number",
        number: Number("9876543210987654321"),
        lossy: true,
      },
    });
    expect(result.problems.map((p) => [p.code, p.column])).toEqual([["ID_PRECISION_LOST", "From"]]);
  });

  it("ignores an error in a column that is not ours (it is carried along, not paid)", () => {
    const result = check({ "Approved by": { text: "#N/A", kind: "error", error: "#N/A" } });
    expect(result.problems).toEqual([]);
    expect(result.instruction).toBeDefined();
  });

  it("points at the merged range when a blank account or amount lies inside merged cells", () => {
    const merged: SheetCell = { text: "", kind: "empty", mergedInto: "C5:C7" };
    const to = check({ to_account: merged });
    expect(to.problems).toEqual([
      {
        row: ROW,
        column: "Payee Account",
        code: "TO_ACCOUNT_MISSING",
        message: expect.stringContaining(
          `cell C${ROW} is part of the merged range C5:C7; unmerge it and fill every row`,
        ),
      },
    ]);
    const amount = check({ amount: { text: "", kind: "empty", mergedInto: "D5:D7" } });
    expect(amount.problems).toEqual([
      {
        row: ROW,
        column: "Amount",
        code: "AMOUNT_MISSING",
        message: expect.stringContaining("merged range D5:D7"),
      },
    ]);
  });
});

describe("checkRow: attachments", () => {
  it.each(["../secret.pdf", "attachments/../../secret.pdf", "/etc/passwd", "."])(
    "refuses %s, which is not a file inside the sheet's folder",
    (attachment) => {
      const result = check({ attachment });
      expect(result.problems.map((p) => [p.code, p.column])).toEqual([["ATTACHMENT_INVALID", "Attachment"]]);
      expect(result.attachmentFile).toBeUndefined();
    },
  );

  it("accepts a path that stays inside the folder even if it mentions ..", () => {
    const result = check({ attachment: "attachments/old/../invoice.pdf" });
    expect(result.problems).toEqual([]);
    expect(result.attachmentFile).toBe(path.join(SHEET_DIR, "attachments", "invoice.pdf"));
    // A name that merely starts with two dots is a file in the folder.
    expect(check({ attachment: "..invoice.pdf" }).attachmentFile).toBe(path.join(SHEET_DIR, "..invoice.pdf"));
  });
});

describe("checkHeader", () => {
  it("accepts the user's titles for every column", () => {
    expect(checkHeader(HEADER)).toEqual([]);
  });

  it("names each required column that is missing and the row the header was found on", () => {
    const header = makeHeader(["Payee", "Amount", "Currency"]);
    const problems = checkHeader(header);
    expect(problems).toEqual([
      {
        row: null,
        column: "from_account",
        code: "COLUMN_MISSING",
        message: expect.stringContaining('no "from_account" column (header found on row 2)'),
      },
    ]);
    expect(problems[0]?.message).toContain("payouts template");
  });

  it("refuses the metadata keys the pipeline writes itself", () => {
    for (const key of RESERVED_METADATA_KEYS) {
      const header = makeHeader([...TITLES, `metadata.${key}`]);
      expect(checkHeader(header)).toEqual([
        {
          row: null,
          column: `metadata.${key}`,
          code: "METADATA_KEY_INVALID",
          message: expect.stringContaining(`"${key}" is reserved`),
        },
      ]);
    }
  });

  it("refuses metadata keys the service would refuse: too long, or with brackets", () => {
    const longest = "k".repeat(METADATA_KEY_MAX);
    expect(checkHeader(makeHeader([...TITLES, `metadata.${longest}`]))).toEqual([]);
    const tooLong = checkHeader(makeHeader([...TITLES, `metadata.${longest}x`]));
    expect(tooLong.map((p) => [p.code, p.column])).toEqual([
      ["METADATA_KEY_INVALID", `metadata.${longest}x`],
    ]);
    expect(tooLong[0]?.message).toContain(`longer than ${METADATA_KEY_MAX} characters; rename the column`);
    const brackets = checkHeader(makeHeader([...TITLES, "Meta: tags[0]"]));
    expect(brackets.map((p) => [p.code, p.column])).toEqual([["METADATA_KEY_INVALID", "Meta: tags[0]"]]);
    expect(brackets[0]?.message).toContain("contains [ or ]");
  });

  it("leaves room for the pipeline's own metadata keys", () => {
    const room = METADATA_MAX_KEYS - RESERVED_METADATA_KEYS.length;
    const base = ["From", "To", "Amount"];
    const columns = (n: number) => Array.from({ length: n }, (_, i) => `metadata.key_${i}`);
    expect(checkHeader(makeHeader([...base, ...columns(room)]))).toEqual([]);
    expect(checkHeader(makeHeader([...base, ...columns(room + 1)]))).toEqual([
      {
        row: null,
        column: null,
        code: "TOO_MANY_METADATA_COLUMNS",
        message: expect.stringContaining(`${room + 1} metadata columns; at most ${room} fit`),
      },
    ]);
  });
});

describe("checkRow: cells right of the header", () => {
  it("refuses a row with a value in a column that has no header, naming the cell", () => {
    const row = makeRow({ amount: "1" });
    row.unheaded = { M: { text: "250.00", kind: "string" } };
    const result = checkRow(row, { live, header: HEADER, sheetDir: SHEET_DIR });
    expect(result.instruction).toBeUndefined();
    expect(result.problems).toEqual([
      { row: ROW, column: "column M", code: "UNHEADED_CELL", message: expect.any(String) },
    ]);
    expect(result.problems[0]?.message).toContain(`M${ROW}`);
  });

  it("ignores blank cells there", () => {
    const row = makeRow();
    row.unheaded = { M: { text: "  ", kind: "string" } };
    expect(checkRow(row, { live, header: HEADER, sheetDir: SHEET_DIR }).instruction).toBeDefined();
  });
});
