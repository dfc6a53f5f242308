import { describe, expect, it } from "vitest";
import {
  archivedSheetName,
  classifyFileName,
  errorNoteName,
  isPlainName,
  validationReportName,
} from "../../../src/watch/index.js";

describe("which files in a watched folder are sheets", () => {
  it("takes CSV and XLSX sheets, whatever the case of the extension", () => {
    for (const name of ["payouts.csv", "April run.XLSX", "a.b.Csv"]) {
      expect(classifyFileName(name), name).toEqual({ kind: "sheet" });
    }
  });

  it("ignores Excel lock files, partial downloads, temp files and dotfiles (someone is still working on them)", () => {
    for (const name of [
      "~$payouts.xlsx",
      "payouts.csv.tmp",
      "payouts.xlsx.part",
      "payouts.csv.crdownload",
      "payouts.TMP",
      ".payouts.csv",
      ".DS_Store",
    ]) {
      expect(classifyFileName(name).kind, name).toBe("ignore");
    }
  });

  it("refuses other extensions with a message naming what is supported", () => {
    const verdict = classifyFileName("payouts.xls");
    expect(verdict.kind).toBe("refuse");
    expect(verdict.kind === "refuse" && verdict.reason).toMatch(/\.xls.*\.csv or \.xlsx/);
    expect(classifyFileName("README").kind).toBe("refuse");
  });

  it("refuses names that are not a plain name inside the folder", () => {
    for (const name of ["../escape.csv", "sub/dir.csv", "a\\b.csv", "line\nbreak.csv", ".."]) {
      expect(isPlainName(name), JSON.stringify(name)).toBe(false);
    }
    expect(classifyFileName("line\nbreak.csv").kind).toBe("refuse");
    expect(isPlainName("Payouts April (final).csv")).toBe(true);
  });

  it("names the files written beside a sheet", () => {
    expect(validationReportName("pay.csv")).toBe("pay.validation.csv");
    expect(validationReportName("pay.XLSX")).toBe("pay.validation.xlsx");
    expect(errorNoteName("notes.txt")).toBe("notes.txt.error.txt");
    expect(archivedSheetName("b20261122T030000-0a1b2c3d", "pay.csv")).toBe(
      "b20261122T030000-0a1b2c3d--pay.csv",
    );
  });
});
