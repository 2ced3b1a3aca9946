/** Page-based pagination (docs/api.md "Pagination block", docs/design-choices.md). */
import { Type } from '@sinclair/typebox';

export const MAX_SAFE = 9007199254740991;
/** The largest `limit` a list accepts. */
export const MAX_PAGE_LIMIT = 100;

export const PageQuery = {
  page: Type.Integer({ minimum: 1, maximum: MAX_SAFE, default: 1, description: 'Page number, from 1.' }),
  limit: Type.Integer({
    minimum: 1,
    maximum: MAX_PAGE_LIMIT,
    default: 20,
    description: `Items per page, 1 to ${MAX_PAGE_LIMIT}.`,
  }),
};

export const SortOrder = Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
  default: 'desc',
  description: 'Sort direction: asc (oldest or A first) or desc (newest or Z first).',
});

export const Pagination = Type.Object(
  {
    page: Type.Integer({ minimum: 0, maximum: MAX_SAFE, description: 'This page, from 1.', examples: [1] }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_SAFE, description: 'Items per page.', examples: [20] }),
    total: Type.Integer({
      minimum: 0,
      maximum: MAX_SAFE,
      description: 'Items matching the filters, on every page.',
      examples: [42],
    }),
    pages: Type.Integer({ minimum: 0, maximum: MAX_SAFE, description: 'Number of pages.', examples: [3] }),
    has_more: Type.Boolean({ description: 'A later page holds items.' }),
  },
  { additionalProperties: false, title: 'Pagination' },
);

export interface PageRequest {
  page: number;
  limit: number;
}

export function offsetOf({ page, limit }: PageRequest): number {
  return (page - 1) * limit;
}

export function paginationBlock({ page, limit }: PageRequest, total: number) {
  const pages = Math.ceil(total / limit);
  return { page, limit, total, pages, has_more: page < pages };
}

/**
 * Runs a list query that returns its rows with `total` (count(*) over ()), falling back to a
 * separate count only when the page is past the end and so holds no row to carry the total.
 */
export async function listPage<Row, Item>(
  pageRequest: PageRequest,
  fetchPage: (limit: number, offset: number) => Promise<(Row & { total: number })[]>,
  count: () => Promise<number>,
  toItem: (row: Row) => Item,
) {
  const offset = offsetOf(pageRequest);
  const rows = offset <= Number.MAX_SAFE_INTEGER ? await fetchPage(pageRequest.limit, offset) : [];
  const total = rows.length > 0 ? rows[0].total : await count();
  return { data: rows.map(toItem), pagination: paginationBlock(pageRequest, total) };
}

/**
 * The same for lists that grow long (calls, events): the page is read alone and the total counted
 * apart, only when the page does not tell it (a page neither empty nor full ends the list). A
 * window count reads every matching row in full; a count of its own can use an index alone.
 */
export async function listPageCountedApart<Row, Item>(
  pageRequest: PageRequest,
  fetchPage: (limit: number, offset: number) => Promise<Row[]>,
  count: () => Promise<number>,
  toItem: (row: Row) => Item,
) {
  const offset = offsetOf(pageRequest);
  const rows = offset <= Number.MAX_SAFE_INTEGER ? await fetchPage(pageRequest.limit, offset) : [];
  const total = rows.length > 0 && rows.length < pageRequest.limit ? offset + rows.length : await count();
  return { data: rows.map(toItem), pagination: paginationBlock(pageRequest, total) };
}

/**
 * listPageCountedApart for a page whose items come as JSON text built by the database: the whole
 * answer as JSON text, sent as it is (no response serialisation: the statement names every field).
 */
export async function listJsonPageCountedApart(
  pageRequest: PageRequest,
  fetchPage: (limit: number, offset: number) => Promise<{ items: string; count: number }>,
  count: () => Promise<number>,
): Promise<string> {
  const offset = offsetOf(pageRequest);
  const page =
    offset <= Number.MAX_SAFE_INTEGER
      ? await fetchPage(pageRequest.limit, offset)
      : { items: '[]', count: 0 };
  const total = page.count > 0 && page.count < pageRequest.limit ? offset + page.count : await count();
  return `{"data":${page.items},"pagination":${JSON.stringify(paginationBlock(pageRequest, total))}}`;
}
