/**
 * Serialization of list parameters into the query string the spec describes: `limit`,
 * `startingAfter`, `endingBefore`, `externalId`, `created[gte]`, `created[lte]`, `metadata[k]=v`
 * (one pair per key, all must match) plus endpoint filters (`status`, `ownershipType`, ...). Keys
 * and values are percent-encoded; the brackets of `created[...]`/`metadata[...]` stay literal, as the
 * spec writes them (metadata keys cannot contain brackets).
 */
import type { PageParams } from "./wire-types.js";

export type QueryValue = string | number | boolean | undefined;

/** List parameters: the shared page/filter fields plus any endpoint-specific scalar filters. */
export type ListQuery = PageParams & Record<string, QueryValue | Record<string, string>>;

const enc = encodeURIComponent;

/** Returns `?a=1&b=2`, or "" when there is nothing to send. Undefined values are left out. */
export function toQueryString(params: ListQuery | undefined): string {
  if (!params) return "";
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    switch (key) {
      case "createdGte":
        pairs.push(`created[gte]=${enc(String(value))}`);
        break;
      case "createdLte":
        pairs.push(`created[lte]=${enc(String(value))}`);
        break;
      case "metadata":
        for (const [mk, mv] of Object.entries(value as Record<string, string>)) {
          pairs.push(`metadata[${enc(mk)}]=${enc(mv)}`);
        }
        break;
      default:
        if (typeof value === "object") {
          throw new TypeError(`list parameter ${key} must be a string, number or boolean`);
        }
        pairs.push(`${enc(key)}=${enc(String(value))}`);
    }
  }
  return pairs.length === 0 ? "" : `?${pairs.join("&")}`;
}
