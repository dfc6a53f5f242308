/**
 * The compact forms of a finished row's fields (row-fields.ts) read back exactly what was written,
 * whatever the input (fast-check), and the forms earlier versions stored read the same as before.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseHistory } from "../../../src/batches/batch-store.js";
import * as fields from "../../../src/batches/row-fields.js";
import type { Fee } from "../../../src/payouts-api/wire-types.js";

const currency = fc.constantFrom("USD", "EUR", "JPY", "GBP", "usd", "US", "");
const fee = fc.record(
  {
    type: fc.oneof(
      fc.constantFrom("rail", "card-processing", "fx", "wire.fee", "a_b"),
      fc.string(),
      fc.stringMatching(/^[A-Za-z0-9_.:|,[-]{1,12}$/),
    ),
    // Numbers JSON holds (-0, NaN and infinities never came back from the JSON of earlier versions).
    amount: fc.oneof(
      fc.nat(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
      fc.constant(2 ** 53),
    ),
    currency,
    chargeTo: fc.constantFrom("originator", "receiver", "someone"),
  },
  { noNullPrototype: true },
) as fc.Arbitrary<Fee>;
const fees = fc.array(fee, { maxLength: 5 });
/** What the row-changing script does to the stored form: drops `<row currency>|` at the start. */
function asStored(encoded: string, rowCurrency: string): string {
  return encoded.startsWith(`${rowCurrency}|`) ? encoded.slice(rowCurrency.length + 1) : encoded;
}
/** Same values and the same key order, as a JSON answer of the API would show them. */
const sameJson = (a: unknown, b: unknown) => expect(JSON.stringify(a)).toBe(JSON.stringify(b));

describe("fees", () => {
  it("read back exactly, in any row currency, with or without the script dropping the row's currency", () => {
    fc.assert(
      fc.property(fees, fc.constantFrom("USD", "EUR", "JPY"), (list, rowCurrency) => {
        const encoded = fields.encodeFees(list);
        sameJson(fields.decodeFees(encoded, rowCurrency), list);
        sameJson(fields.decodeFees(asStored(encoded, rowCurrency), rowCurrency), list);
        expect(fields.decodeFees(asStored(encoded, rowCurrency), rowCurrency)).toEqual(list);
      }),
      { numRuns: 2000 },
    );
  });

  it("are short for the service's usual fees, and keep a currency that differs from the row's", () => {
    const usual: Fee[] = [
      { type: "rail", amount: 150, currency: "USD", chargeTo: "originator" },
      { type: "card-processing", amount: 14844, currency: "USD", chargeTo: "originator" },
    ];
    expect(asStored(fields.encodeFees(usual), "USD")).toBe("rail:150:o,card-processing:14844:o");
    expect(asStored(fields.encodeFees(usual), "EUR")).toBe("USD|rail:150:o,card-processing:14844:o");
    const mixed: Fee[] = [
      { type: "rail", amount: 0, currency: "EUR", chargeTo: "receiver" },
      { type: "fx", amount: 7, currency: "USD", chargeTo: "originator" },
    ];
    expect(asStored(fields.encodeFees(mixed), "EUR")).toBe("rail:0:r,fx:7:o:USD");
    expect(fields.decodeFees("rail:0:r,fx:7:o:USD", "EUR")).toEqual(mixed);
    expect(fields.encodeFees([])).toBe("[]");
  });

  it("stored as JSON (the form of fees the short form cannot hold) read back", () => {
    const old =
      '[{"type":"rail","amount":150,"currency":"USD","chargeTo":"originator"},{"type":"card-processing","amount":14844,"currency":"USD","chargeTo":"originator"}]';
    sameJson(fields.decodeFees(old, "EUR"), JSON.parse(old));
  });

  it("fall back to JSON for what the short form cannot hold exactly", () => {
    for (const odd of [
      [{ type: "a:b", amount: 1, currency: "USD", chargeTo: "originator" }],
      [{ type: "rail", amount: 1.5, currency: "USD", chargeTo: "originator" }],
      [{ type: "rail", amount: -0, currency: "USD", chargeTo: "originator" }],
      [{ amount: 1, type: "rail", currency: "USD", chargeTo: "originator" }],
      [{ type: "rail", amount: 1, currency: "USD", chargeTo: "originator", extra: 1 }],
    ] as unknown as Fee[][]) {
      expect(fields.encodeFees(odd).startsWith("[")).toBe(true);
    }
  });
});

describe("the payment's updatedAt", () => {
  it("reads back as the very text written, for any time or text", () => {
    const isoTimes = fc
      .date({ min: new Date(0), max: new Date("2199-12-31T23:59:59.999Z"), noInvalidDate: true })
      .map((d) => d.toISOString());
    fc.assert(
      fc.property(
        fc.oneof(isoTimes, fc.string(), fc.constantFrom("=x", "", "2026-11-24T03:50:21Z")),
        (text) => {
          expect(fields.isoOfStamp(fields.encodePaymentTime(text))).toBe(text);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("is 8 characters for a time of these decades, and a time kept as text passes through", () => {
    expect(fields.encodePaymentTime("2026-11-24T03:50:21.825Z")).toHaveLength(8);
    expect(fields.isoOfStamp("2026-11-24T03:50:21.825Z")).toBe("2026-11-24T03:50:21.825Z");
  });
});

describe("history notes", () => {
  it("read back exactly, whatever the note and payment id", () => {
    fc.assert(
      fc.property(
        fc.option(
          fc.oneof(
            fc.string({ unit: "binary" }),
            // Notes that begin as the coded ones do, and may go on with anything (or name the payment).
            fc
              .tuple(
                fc.constantFrom(
                  "recorded",
                  "payment created: ",
                  "reconciled: payment ",
                  "fx quote stored",
                  "~r",
                ),
                fc.oneof(fc.string({ unit: "binary" }), fc.constantFrom("", "completed", "pay_1", '"\\')),
              )
              .map(([start, rest]) => start + rest),
          ),
          { nil: undefined },
        ),
        fc.option(fc.oneof(fc.string({ unit: "binary" }), fc.stringMatching(/^pay_[0-9a-f]{24}$/)), {
          nil: undefined,
        }),
        (note, paymentId) => {
          const stored = fields.encodeNote(note, paymentId);
          expect(fields.decodeNote(stored, paymentId || undefined)).toBe(note ?? null);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("store the payment id a change records as one mark, and read as before in a whole history", () => {
    const id = "pay_690aaed1eedd2c6362ddc687";
    const stored = fields.encodeNote(`payment created: ${id}`, id);
    expect(stored).toBe(`~c${fields.PAYMENT_ID_MARK}`);
    expect(fields.encodeNote("reconciled: payment completed", id)).toBe("~pcompleted");
    const text = `mwu5p8sa - queued 1 ${fields.RECORDED_NOTE_CODE}\nmwu5phik queued submitted 1 ${stored}\nmwu5ptyi submitted completed 1 ~pcompleted\n`;
    expect(parseHistory(text, id).map((e) => e.note)).toEqual([
      "recorded",
      `payment created: ${id}`,
      "reconciled: payment completed",
    ]);
    // The scripts write the old payment id over the mark before the row's id changes (batches/lua/row-history.lua).
    expect(parseHistory(`mwu5phik queued submitted 1 ~cpay_old\n`, "pay_new")[0]!.note).toBe(
      "payment created: pay_old",
    );
    // A note that is not JSON and has no known code is an error, not a silent wrong note.
    expect(() => fields.decodeNote("~Z", id)).toThrow(/note code/);
    // Notes without a code or mark: the JSON text as written.
    const plain = `mwu5p8sa - queued 1 "recorded"\nmwu5phik queued submitted 1 "payment created: ${id}"\n`;
    expect(parseHistory(plain, id).map((e) => e.note)).toEqual(["recorded", `payment created: ${id}`]);
  });
});
