/**
 * How rows become payment jobs: consecutive rows of one batch share a job up to ROWS_PER_JOB; a job
 * of one row is named by its Idempotency-Key; a job of more by all of theirs, so the same rows make
 * the same job (added twice, it is one job) and other rows another (never mistaken for it).
 */
import { describe, expect, it } from "vitest";
import { jobsFor, type RowJobRequest } from "../../../src/batches/index.js";
import { paymentJobsFor, ROWS_PER_JOB, rowsOfJob } from "../../../src/pipeline/index.js";

const batch = { id: "b20261127T120000-0a1b2c3d", entityId: "me" };
const other = { id: "b20261127T120000-9f8e7d6c", entityId: "me" };

/** Rows as the feed hands them: with their places in the order list. */
function placed(from: number, to: number) {
  return jobsFor(
    batch,
    Array.from({ length: to - from }, (_, i) => ({ rowKey: `R${from + i}`, attempt: 1, position: from + i })),
  );
}

function rows(n: number, of = batch, from = 0) {
  return jobsFor(
    of,
    Array.from({ length: n }, (_, i) => ({ rowKey: `R${from + i}`, attempt: 1 })),
  );
}

describe("payment jobs for rows", () => {
  it("puts consecutive rows of a batch together, at most ROWS_PER_JOB a job, every row once in order", () => {
    const n = 2 * ROWS_PER_JOB + 3;
    const jobs = paymentJobsFor(rows(n));
    expect(jobs.map((j) => rowsOfJob(j.data).length)).toEqual([ROWS_PER_JOB, ROWS_PER_JOB, 3]);
    expect(jobs.flatMap((j) => rowsOfJob(j.data).map((r) => r.rowKey))).toEqual(
      Array.from({ length: n }, (_, i) => `R${i}`),
    );
  });

  it("never mixes batches in one job, and keeps each row's attempt", () => {
    const mixed = [...rows(2), ...rows(2, other), ...jobsFor(batch, [{ rowKey: "R9", attempt: 3 }])];
    const jobs = paymentJobsFor(mixed);
    expect(jobs.map((j) => [j.data.batchId, rowsOfJob(j.data).length])).toEqual([
      [batch.id, 2],
      [other.id, 2],
      [batch.id, 1],
    ]);
    expect(rowsOfJob(jobs[2]!.data)).toEqual([{ batchId: batch.id, rowKey: "R9", attempt: 3 }]);
  });

  it("names a job of one row by the row's Idempotency-Key, as a job of one row always was", () => {
    const [single] = rows(1);
    const [job] = paymentJobsFor([single!]);
    expect(job!.jobId).toBe(single!.jobId);
    expect(job!.data).toEqual({ batchId: batch.id, rowKey: "R0", attempt: 1 });
  });

  it("names the same rows the same job, and other rows another (one row less, a later attempt)", () => {
    const id = (r: ReturnType<typeof rows>) => paymentJobsFor(r)[0]!.jobId;
    expect(id(rows(5))).toBe(id(rows(5)));
    expect(id(rows(4))).not.toBe(id(rows(5)));
    const [first, , ...rest] = rows(5);
    expect(id([first!, ...rest])).not.toBe(id(rows(5)));
    const retried = jobsFor(batch, [
      { rowKey: "R0", attempt: 2 },
      { rowKey: "R1", attempt: 1 },
    ]);
    expect(id(retried)).not.toBe(id(rows(2)));
  });

  it("gives ids BullMQ accepts: never digits only, never a colon", () => {
    for (const n of [1, 2, ROWS_PER_JOB]) {
      for (const { jobId } of paymentJobsFor(rows(n))) {
        expect(jobId).not.toMatch(/^\d+$/);
        expect(jobId).not.toContain(":");
      }
    }
  });

  it("puts placed rows in jobs by their places, so rows handed over again make the same jobs", () => {
    const sizes = (rows: RowJobRequest[]) => paymentJobsFor(rows).map((j) => rowsOfJob(j.data).length);
    // A top-up that starts and ends inside a run of places: jobs end where the runs end.
    expect(sizes(placed(10, 40))).toEqual([ROWS_PER_JOB - 10, ROWS_PER_JOB, 40 - 2 * ROWS_PER_JOB]);
    // A restarted feed hands rows 0-47 in one page; the first time they came in pages 0-9, 10-47.
    const first = [...paymentJobsFor(placed(0, 10)), ...paymentJobsFor(placed(10, 48))];
    const again = paymentJobsFor(placed(0, 48));
    const idsOf = (jobs: { jobId: string }[]) => jobs.map((j) => j.jobId);
    // Only the run the first pages split (0-15) makes another job; the others are the same jobs.
    expect(idsOf(again).slice(1)).toEqual(idsOf(first).slice(2));
    expect(idsOf(first)).not.toContain(idsOf(again)[0]);
  });
});
