/** BoundedMap: the one bound of every per-process cache. */
import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../src/core/bounded-map.js';

describe('BoundedMap', () => {
  it('holds at most maxEntries, dropping the least recently stored first', () => {
    const evicted: string[] = [];
    const map = new BoundedMap<string, number>({ maxEntries: 3, onEvict: (_, key) => evicted.push(key) });
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.get('a')).toBe(1); // a read does not count as use by default
    map.set('b', 20); // storing again makes b the newest, and is no eviction
    map.set('d', 4);
    expect(evicted).toEqual(['a']);
    expect([...map.values()]).toEqual([3, 20, 4]);
    map.set('e', 5);
    expect(evicted).toEqual(['a', 'c']);
    expect(map.size).toBe(3);
  });

  it("with order 'use', drops the least recently read or stored first", () => {
    const map = new BoundedMap<string, number>({ maxEntries: 2, order: 'use' });
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(map.has('a')).toBe(true);
    expect(map.has('b')).toBe(false);
  });

  it('bounds the total size too, and refuses a value larger than the bound alone', () => {
    const map = new BoundedMap<string, string>({ maxEntries: 100, maxSize: 10, sizeOf: (v) => v.length });
    expect(map.set('a', 'aaaa')).toBe(true);
    expect(map.set('b', 'bbbb')).toBe(true);
    expect(map.set('c', 'cccc')).toBe(true); // 12 > 10: a goes
    expect([...map.values()]).toEqual(['bbbb', 'cccc']);
    expect(map.set('big', 'x'.repeat(11))).toBe(false);
    expect([...map.values()]).toEqual(['bbbb', 'cccc']);
    map.delete('b');
    expect(map.set('d', 'dddddd')).toBe(true); // 4 + 6 fits once b's size is given back
    expect([...map.values()]).toEqual(['cccc', 'dddddd']);
    map.clear();
    expect(map.set('e', 'x'.repeat(10))).toBe(true);
  });
});
