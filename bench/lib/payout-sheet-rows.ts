/**
 * Rows of a synthetic payout sheet for the intake benchmark: every row valid against the default
 * sandbox seed (samples/sandbox-seed.json), with unique references. Pure and deterministic (seeded
 * PRNG), so two runs read the same sheets and figures stay comparable.
 */

/** Header of the generated sheets, in the template's column names. */
export const BENCH_SHEET_COLUMNS = [
  "reference",
  "from_account",
  "to_account",
  "amount",
  "currency",
  "delivery",
  "payer_memo",
  "recipient_note",
  "purpose",
  "metadata.cost_center",
  "metadata.invoice",
] as const;

/** One generated payout. The amount is kept in minor units so CSV text and XLSX numbers agree exactly. */
export interface BenchPayoutRow {
  reference: string;
  fromAccount: string;
  toAccount: string;
  amountMinor: number;
  /** ISO 4217 exponent of the payee's currency (JPY 0, others 2 here). */
  exponent: number;
  /** As written in the sheet: blank means USD. */
  currencyCell: string;
  /** As written in the sheet: blank means the payee rail's standard speed. */
  delivery: string;
  payerMemo: string;
  recipientNote: string;
  purpose: string;
  costCenter: string;
  invoice: string;
}

interface PayoutRoute {
  from: string;
  to: string;
  delivery: string;
  currencyCell: string;
  exponent: number;
  purpose?: string;
}

/**
 * Routes that need no per-row call to the eligibility tool: the standard speed of each rail from the
 * verified bank account (written out or left blank), and card-funded payments, whose fast ACH is their
 * normal speed. Blank delivery and blank currency are mixed in because real sheets leave them empty.
 */
const STANDARD_ROUTES: readonly PayoutRoute[] = [
  { from: "ops-checking", to: "vendor-ach", delivery: "standard-ach", currencyCell: "USD", exponent: 2 },
  { from: "ops-checking", to: "vendor-ach-2", delivery: "", currencyCell: "USD", exponent: 2 },
  { from: "ops-checking", to: "vendor-check", delivery: "standard-check", currencyCell: "", exponent: 2 },
  { from: "ops-checking", to: "vendor-wire", delivery: "domestic-wire", currencyCell: "USD", exponent: 2 },
  { from: "ops-checking", to: "vendor-vcard", delivery: "virtual-card", currencyCell: "USD", exponent: 2 },
  {
    from: "ops-checking",
    to: "supplier-eur",
    delivery: "international-fx",
    currencyCell: "EUR",
    exponent: 2,
    purpose: "Purchase of machine parts",
  },
  {
    from: "ops-checking",
    to: "supplier-gbp",
    delivery: "",
    currencyCell: "GBP",
    exponent: 2,
    purpose: "Consulting services",
  },
  {
    from: "ops-checking",
    to: "supplier-jpy",
    delivery: "international-fx",
    currencyCell: "JPY",
    exponent: 0,
    purpose: "Purchase of precision components",
  },
  {
    from: "ops-checking",
    to: "supplier-usd-intl",
    delivery: "international-fx",
    currencyCell: "USD",
    exponent: 2,
    purpose: "Freight forwarding services",
  },
  {
    from: "ops-checking",
    to: "contractor-gusd",
    delivery: "international-gusd",
    currencyCell: "USD",
    exponent: 2,
    purpose: "Software development services",
  },
  { from: "corporate-card", to: "vendor-ach", delivery: "", currencyCell: "USD", exponent: 2 },
  {
    from: "corporate-card",
    to: "vendor-check",
    delivery: "standard-check",
    currencyCell: "USD",
    exponent: 2,
  },
];

/** Faster variants from the bank account: each such row costs one call to the eligibility tool. */
const FASTER_ROUTES: readonly PayoutRoute[] = [
  { from: "ops-checking", to: "vendor-ach", delivery: "same-day-ach", currencyCell: "USD", exponent: 2 },
  { from: "ops-checking", to: "vendor-ach-2", delivery: "rtp", currencyCell: "USD", exponent: 2 },
  { from: "ops-checking", to: "vendor-check", delivery: "express-check", currencyCell: "USD", exponent: 2 },
  {
    from: "ops-checking",
    to: "vendor-wire",
    delivery: "instant-domestic-wire",
    currencyCell: "USD",
    exponent: 2,
  },
];

const COST_CENTERS = [
  "CC-100 Admin",
  "CC-220 Marketing",
  "CC-300 Operations",
  "CC-410 Facilities",
  "CC-510 IT",
];
const MEMOS = [
  "Monthly services",
  "Office supplies, restock",
  "Equipment lease",
  "Consulting, phase 2",
  "Freight",
];

export interface BenchRowOptions {
  /** Every n-th row (n = this value) uses a faster variant that calls the eligibility tool; 0 for none. */
  fasterEvery: number;
  seed?: number;
  /**
   * Only amounts that settle: the sandbox keeps a payment whose amount ends in 77 (minor units)
   * `scheduled` for ever, which an end-to-end run waiting for every row to be final cannot have.
   */
  onlySettling?: boolean;
  /** Only USD payees (no FX quote per row): one request per row is then all a payment needs. */
  usdOnly?: boolean;
}

/** The routes paid in USD without conversion. */
const USD_ROUTES = STANDARD_ROUTES.filter((r) => r.currencyCell === "USD" || r.currencyCell === "");

/** Yields `count` valid payout rows. */
export function* benchPayoutRows(count: number, options: BenchRowOptions): Generator<BenchPayoutRow> {
  const random = mulberry32(options.seed ?? 0x5eed);
  const width = String(count).length;
  const paid = new Set<number>();
  for (let i = 1; i <= count; i++) {
    const faster = options.fasterEvery > 0 && i % options.fasterEvery === 0;
    const routes = faster ? FASTER_ROUTES : options.usdOnly ? USD_ROUTES : STANDARD_ROUTES;
    const route = routes[Math.floor(random() * routes.length)] ?? STANDARD_ROUTES[0]!;
    // 1.00 .. 9,999.99 in major units (JPY 100 .. 999,999): inside every rail's limits of the sandbox.
    let amountMinor = 100 + Math.floor(random() * 999_900);
    // Each route pays each amount once: the same payment twice in a sheet is a possible duplicate.
    const routeBase = (routes.indexOf(route) + (faster ? 100 : 0)) * 1_000_000;
    for (;;) {
      if (options.onlySettling && amountMinor % 100 === 77) amountMinor++;
      if (!paid.has(routeBase + amountMinor)) break;
      amountMinor = amountMinor >= 999_999 ? 100 : amountMinor + 1;
    }
    paid.add(routeBase + amountMinor);
    const serial = String(i).padStart(width, "0");
    yield {
      reference: `BENCH-${serial}`,
      fromAccount: route.from,
      toAccount: route.to,
      amountMinor,
      exponent: route.exponent,
      currencyCell: route.currencyCell,
      delivery: route.delivery,
      payerMemo: MEMOS[i % MEMOS.length] ?? "",
      recipientNote: `Invoice INV-${serial}`,
      purpose: route.purpose ?? "",
      costCenter: COST_CENTERS[i % COST_CENTERS.length] ?? "",
      invoice: `INV-${serial}`,
    };
  }
}

/** The amount as a person types it in major units: `1234.56`, JPY `5000`. */
export function amountText(row: BenchPayoutRow): string {
  if (row.exponent === 0) return String(row.amountMinor);
  const text = String(row.amountMinor).padStart(row.exponent + 1, "0");
  return `${text.slice(0, -row.exponent)}.${text.slice(-row.exponent)}`;
}

/** The amount as a spreadsheet number cell holds it. */
export function amountNumber(row: BenchPayoutRow): number {
  return row.amountMinor / 10 ** row.exponent;
}

/** The row's cells in BENCH_SHEET_COLUMNS order, with the amount as the caller wants it. */
export function rowCells<A>(row: BenchPayoutRow, amount: A): Array<string | A> {
  return [
    row.reference,
    row.fromAccount,
    row.toAccount,
    amount,
    row.currencyCell,
    row.delivery,
    row.payerMemo,
    row.recipientNote,
    row.purpose,
    row.costCenter,
    row.invoice,
  ];
}

/** Small, fast, seedable PRNG; quality is irrelevant here, reproducibility is the point. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
