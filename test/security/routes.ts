/**
 * Route discovery for the security and fuzz suites, so routes added later are covered without
 * touching these tests:
 * - `listRoutes(app)`: every registered route (method + path), parsed from Fastify's route tree;
 * - `partnerOperations(t)`: the partner operations of the OpenAPI document with their scope,
 *   parameters and body schema;
 * - `exampleBody(schema)`: a body that satisfies a JSON schema, for requests that must get past
 *   validation.
 */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/core/db/database.js';
import { createRateLimits, type RateLimits } from '../../src/rate-limits/service.js';
import type { TestApp } from '../support/app.js';

export interface RouteInfo {
  method: string;
  /** Fastify syntax: `/api/v1/users/:id`. */
  path: string;
}

const TREE_LINE = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/;

/** Every route of the app except HEAD twins and the documentation UI's static files. */
export function listRoutes(app: FastifyInstance): RouteInfo[] {
  const tree = app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const routes: RouteInfo[] = [];
  for (const line of tree.split('\n')) {
    const match = TREE_LINE.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    const full = (stack[depth - 1] ?? '') + match[2];
    stack[depth] = full;
    stack.length = depth + 1;
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim())) {
      if (!method || method === 'HEAD' || method === 'OPTIONS') continue;
      if (full.startsWith('/docs')) continue;
      routes.push({ method, path: full });
    }
  }
  return routes;
}

export interface PartnerOperation {
  method: string;
  /** OpenAPI syntax: `/api/v1/users/{id}`. */
  path: string;
  operationId: string;
  scope: string;
  pathParams: string[];
  query: Record<string, any>;
  /** Query parameters the operation requires (e.g. GET /usage's user_id). */
  requiredQuery: string[];
  headers: Record<string, any>;
  body?: any;
}

/** A titled body schema is a `$ref` to its component: the component itself, to build bodies from. */

/** The partner operations (every operation with a bearer scope) of GET /api/v1/openapi.json. */
export async function partnerOperations(t: TestApp): Promise<PartnerOperation[]> {
  const response = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  if (response.status !== 200) throw new Error(`openapi.json: ${response.status}`);
  const doc = response.body;
  const operations: PartnerOperation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const scopes: string[] = (op.security ?? []).flatMap((s: Record<string, string[]>) =>
        Object.values(s).flat(),
      );
      if (!path.startsWith('/api/v1/')) continue;
      if (scopes.length !== 1)
        throw new Error(`${method} ${path}: expected exactly one scope, got ${JSON.stringify(scopes)}`);
      const parameters: any[] = op.parameters ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        scope: scopes[0],
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(
          parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.schema ?? {}]),
        ),
        requiredQuery: parameters.filter((p) => p.in === 'query' && p.required).map((p) => p.name),
        headers: Object.fromEntries(
          parameters.filter((p) => p.in === 'header').map((p) => [p.name, p.schema ?? {}]),
        ),
        body: inlineRefs(
          op.requestBody?.content?.['application/json']?.schema,
          doc.components?.schemas ?? {},
        ),
      });
    }
  }
  return operations;
}

/** A schema with every `#/components/schemas/…` reference replaced by the schema it names. */
function inlineRefs(schema: any, components: Record<string, any>, seen: string[] = []): any {
  if (Array.isArray(schema)) return schema.map((item) => inlineRefs(item, components, seen));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref: unknown = schema.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    const name = ref.slice('#/components/schemas/'.length);
    if (seen.includes(name)) throw new Error(`recursive schema ${name}`);
    return inlineRefs(components[name], components, [...seen, name]);
  }
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, inlineRefs(value, components, seen)]),
  );
}

/** `/api/v1/users/{id}` or `/api/v1/users/:id` with the parameters filled in (URL-encoded). */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{(\w+)\}|:(\w+)/g, (_m, a, b) => {
    const name = a ?? b;
    if (params[name] === undefined) throw new Error(`no value for path parameter ${name} of ${path}`);
    return encodeURIComponent(params[name]);
  });
}

/** Converts a Fastify path to the OpenAPI template. */
export function toOpenApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/** The resource kind a path parameter names: the segment before it (`users`, `plans`, ...). */
export function resourceOf(path: string, param: string): string | undefined {
  const segments = toOpenApiPath(path).split('/');
  const index = segments.indexOf(`{${param}}`);
  return index > 0 ? segments[index - 1] : undefined;
}

let sequence = 0;

/**
 * A value satisfying `schema`; `refs` supplies values for id-like properties (`user_id`, ...).
 * Strings with `format: email` are unique per call, so repeated creations do not conflict.
 */
export function exampleValue(schema: any, name = '', refs: Record<string, string> = {}): unknown {
  if (!schema || typeof schema !== 'object') return null;
  if (refs[name] !== undefined) return refs[name];
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf']) {
    if (Array.isArray(schema[key])) {
      const choice = schema[key].find((s: any) => s.type !== 'null') ?? schema[key][0];
      return exampleValue(choice, name, refs);
    }
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const result: Record<string, unknown> = {};
      for (const property of schema.required ?? []) {
        result[property] = exampleValue(schema.properties?.[property], property, refs);
      }
      return result;
    }
    case 'array': {
      const item = exampleValue(schema.items, name, refs);
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item).slice(
        0,
        schema.uniqueItems ? 1 : undefined,
      );
    }
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 0, Math.min(schema.maximum ?? 1, 1));
    case 'boolean':
      return true;
    case 'string': {
      sequence++;
      if (schema.format === 'email') return `probe${sequence}.${Date.now()}@example.com`;
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      if (schema.pattern === '^\\+[1-9][0-9]{6,14}$') return '+14155550123';
      if (schema.pattern === '^[a-z]{3}$') return 'usd';
      if (Array.isArray(schema.examples) && typeof schema.examples[0] === 'string') return schema.examples[0];
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 8)).slice(0, schema.maxLength ?? 255);
    }
    default:
      return null;
  }
}

/**
 * Lifts the rate limits (src/rate-limits) for suites that send hundreds of requests, bad
 * credentials included: those limits have their own tests, and a 429 here would hide what these
 * suites look for. Pass as startTestApp's `adapters`.
 */
export function withoutRateLimits({ database }: { database: Database }): { rateLimits: RateLimits } {
  const unlimited = { perSecond: 1_000_000, burst: 1_000_000 };
  const rateLimits = createRateLimits({
    db: database.db,
    policies: {
      partner: unlimited,
      unauthenticated: unlimited,
      webhook: unlimited,
      signInAccount: unlimited,
      signInIp: unlimited,
    },
    tenantCacheTtlMs: 0,
  });
  return { rateLimits };
}
