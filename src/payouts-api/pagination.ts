import type { ListEnvelope, PageParams } from "./wire-types.js";

/**
 * Every item of a list, newest first, page after page: follows `startingAfter` with the last id of
 * each page until `hasMore` is false. Pages are fetched lazily, one at a time, as the caller iterates.
 */
export async function* paginate<T extends { id: string }, P extends PageParams>(
  fetchPage: (params: P) => Promise<ListEnvelope<T>>,
  params: P,
): AsyncGenerator<T, void, undefined> {
  for await (const page of pages(fetchPage, params)) yield* page;
}

/**
 * The same walk a page at a time: each page's items as one array (for callers that handle a page
 * together, e.g. one Redis round trip per page). A payment created while the walk goes on is newer
 * than the cursor, so it never shifts the older pages still to come.
 */
export async function* pages<T extends { id: string }, P extends PageParams>(
  fetchPage: (params: P) => Promise<ListEnvelope<T>>,
  params: P,
): AsyncGenerator<T[], void, undefined> {
  if (params.endingBefore !== undefined) {
    // Walking backwards would need `endingBefore` with the first id; nobody needs it, so refuse
    // rather than silently mixing directions.
    throw new TypeError("listAll walks older pages with startingAfter; endingBefore is not supported");
  }
  let cursor = params.startingAfter;
  for (;;) {
    const page = await fetchPage(cursor === undefined ? params : { ...params, startingAfter: cursor });
    // Every page read is yielded, an empty one too: callers count what the walk cost.
    yield page.data;
    const last = page.data.at(-1);
    // An empty page with hasMore=true would loop forever on the same cursor: stop instead.
    if (!page.hasMore || last === undefined) return;
    cursor = last.id;
  }
}
