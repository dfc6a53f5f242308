import type { ListEnvelope, PageParams } from "./wire-types.js";

/**
 * Every item of a list, newest first, page after page: follows `startingAfter` with the last id of
 * each page until `hasMore` is false. Pages are fetched lazily, one at a time, as the caller iterates.
 */
export async function* paginate<T extends { id: string }, P extends PageParams>(
  fetchPage: (params: P) => Promise<ListEnvelope<T>>,
  params: P,
): AsyncGenerator<T, void, undefined> {
  if (params.endingBefore !== undefined) {
    // Walking backwards would need `endingBefore` with the first id; nobody needs it, so refuse
    // rather than silently mixing directions.
    throw new TypeError("listAll walks older pages with startingAfter; endingBefore is not supported");
  }
  let cursor = params.startingAfter;
  for (;;) {
    const page = await fetchPage(cursor === undefined ? params : { ...params, startingAfter: cursor });
    yield* page.data;
    const last = page.data.at(-1);
    // An empty page with hasMore=true would loop forever on the same cursor: stop instead.
    if (!page.hasMore || last === undefined) return;
    cursor = last.id;
  }
}
