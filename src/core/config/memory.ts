/**
 * The memory settings a server process should start with (README, "Memory"): src/cluster.ts
 * applies them to its workers, `npm start` passes the heap limit, and the bench uses both.
 */

/** Bytes: allocations from this size up are mmapped and unmapped on free (glibc). */
export const RECOMMENDED_MMAP_THRESHOLD = 1024 * 1024;

/**
 * V8's old-space limit for a server process (MB). Without one, V8 sizes the heap from the
 * machine's memory and lets garbage pile up far beyond the live set (~60 MB): a search-heavy
 * minute measured 345 MB peak RSS by default and 185 MB with this limit (bench/README.md, "Memory").
 */
export const RECOMMENDED_OLD_SPACE_MB = 512;

/** Node flags for a server process: the recommended heap limit added, unless one is already given. */
export function heapLimitArgv(execArgv: string[], nodeOptions = ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((flag) =>
    /^--max[-_]old[-_]space[-_]size(=|$)/.test(flag),
  );
  return given ? execArgv : [...execArgv, `--max-old-space-size=${RECOMMENDED_OLD_SPACE_MB}`];
}
