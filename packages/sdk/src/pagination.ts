/**
 * A list call is both a promise of its page and an async iterable over every item of every page
 * from there on (`for await (const user of vp.users.list())`). Pages are numbered: a row inserted
 * while you iterate may shift the items after it by one position (you may see one twice); sort
 * ascending by creation to read a growing collection without missing any.
 */
import type { components } from './openapi.js';

export type Pagination = components['schemas']['Pagination'];

export interface Page<T> {
  data: T[];
  pagination: Pagination;
  /** The next page, or undefined after the last. */
  nextPage(): Promise<Page<T> | undefined>;
}

/** Awaited: the first page (fetched on first use). Iterated: every item from that page on. */
export interface PageRequest<T> extends PromiseLike<Page<T>>, AsyncIterable<T> {
  catch<R = never>(onRejected?: ((reason: any) => R | PromiseLike<R>) | null): Promise<Page<T> | R>;
  finally(onFinally?: (() => void) | null): Promise<Page<T>>;
}

type FetchPage<T> = (page: number) => Promise<{ data: T[]; pagination: Pagination }>;

export function pageRequest<T>(firstPage: number, fetchPage: FetchPage<T>): PageRequest<T> {
  const load = async (number: number): Promise<Page<T>> => {
    const { data, pagination } = await fetchPage(number);
    return {
      data,
      pagination,
      nextPage: async () => (pagination.has_more ? load(pagination.page + 1) : undefined),
    };
  };
  let first: Promise<Page<T>> | undefined;
  const firstLoad = () => {
    first ??= load(firstPage);
    return first;
  };
  return {
    // biome-ignore lint/suspicious/noThenProperty: a list call is awaited for its first page
    then: (onFulfilled, onRejected) => firstLoad().then(onFulfilled, onRejected),
    catch: (onRejected) => firstLoad().catch(onRejected),
    finally: (onFinally) => firstLoad().finally(onFinally),
    async *[Symbol.asyncIterator]() {
      for (let page: Page<T> | undefined = await firstLoad(); page; page = await page.nextPage()) {
        yield* page.data;
      }
    },
  };
}
