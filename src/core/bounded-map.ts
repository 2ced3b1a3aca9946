/**
 * A Map with a bound, for the per-process caches (API keys, tenant limits, webhook targets, plan
 * pages, list totals, mail transports): whatever the traffic, a cache holds at most `maxEntries`
 * entries and, with `sizeOf`, at most `maxSize` in total. Making room drops the oldest entry first:
 * the least recently stored, or with `order: 'use'` the least recently read or stored.
 */
export interface BoundedMapOptions<K, V> {
  maxEntries: number;
  /** A bound on the sum of `sizeOf` over the entries; a value larger than it alone is not stored. */
  maxSize?: number;
  sizeOf?: (value: V) => number;
  /** 'stored' (default): a `get` leaves the order alone; 'use': a `get` makes the entry the newest. */
  order?: 'stored' | 'use';
  /** Called for an entry dropped to make room (not for `delete`, `clear` or a replaced value). */
  onEvict?: (value: V, key: K) => void;
}

export class BoundedMap<K, V> {
  // A Map iterates in insertion order: the first key is the oldest entry.
  readonly #entries = new Map<K, V>();
  readonly #options: BoundedMapOptions<K, V>;
  #size = 0;

  constructor(options: BoundedMapOptions<K, V>) {
    this.#options = options;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined && this.#options.order === 'use') {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Stores `value` as the newest entry, dropping the oldest ones to make room; false when it is too large to store. */
  set(key: K, value: V): boolean {
    this.delete(key);
    const { maxEntries, maxSize = Number.POSITIVE_INFINITY, sizeOf } = this.#options;
    const size = sizeOf ? sizeOf(value) : 0;
    if (size > maxSize) return false;
    while (this.#entries.size > 0 && (this.#entries.size >= maxEntries || this.#size + size > maxSize)) {
      const [oldestKey, oldest] = this.#entries.entries().next().value as [K, V];
      this.delete(oldestKey);
      this.#options.onEvict?.(oldest, oldestKey);
    }
    this.#entries.set(key, value);
    this.#size += size;
    return true;
  }

  delete(key: K): boolean {
    if (!this.#entries.has(key)) return false;
    const value = this.#entries.get(key) as V;
    this.#entries.delete(key);
    if (this.#options.sizeOf) this.#size -= this.#options.sizeOf(value);
    return true;
  }

  clear(): void {
    this.#entries.clear();
    this.#size = 0;
  }

  values(): IterableIterator<V> {
    return this.#entries.values();
  }
}
