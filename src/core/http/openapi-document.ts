/**
 * Turns what @fastify/swagger generates from the route schemas into the documents partners' tools
 * read (generated clients, Swagger/Scalar "try it", linters). Fixing it here, once, keeps every
 * route honest without per-route annotations:
 * - unions of literals become one `enum` (tools offer every value, clients get a union type);
 * - a parameter with a default is optional;
 * - every schema with a `title` becomes a named component referenced by `$ref`;
 * - each error response publishes the codes it can carry and an example of its own
 *   (documentedErrorSchema, applied per route);
 * - one full document is split into the partner and the operator documents.
 */
import { codeToStatus, type ErrorCode } from '../errors.js';

// The document is plain JSON built by @fastify/swagger; it has no useful static type.
type Json = any;

const COMPONENT_PREFIX = '#/components/schemas/';

const isObject = (value: unknown): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A branch that admits exactly one value: `{ const }` or a one-value `enum`, with its type. */
function singleValue(branch: Json): { type: string; value: unknown } | undefined {
  if (!isObject(branch) || typeof branch.type !== 'string') return undefined;
  const keys = Object.keys(branch).filter((k) => k !== 'type');
  if (keys.length !== 1) return undefined;
  if (keys[0] === 'const') return { type: branch.type, value: branch.const };
  if (keys[0] === 'enum' && Array.isArray(branch.enum) && branch.enum.length === 1)
    return { type: branch.type, value: branch.enum[0] };
  return undefined;
}

/** `anyOf` of one-value branches of one type (and maybe null) as `{ type, enum }`; else unchanged. */
function literalUnionToEnum(node: Record<string, Json>): Record<string, Json> {
  if (!Array.isArray(node.anyOf) || node.anyOf.length < 2) return node;
  const nullable = node.anyOf.some(
    (b: Json) => isObject(b) && b.type === 'null' && Object.keys(b).length === 1,
  );
  const values = node.anyOf
    .filter((b: Json) => !(isObject(b) && b.type === 'null' && Object.keys(b).length === 1))
    .map(singleValue);
  if (values.length === 0 || values.some((v: Json) => v === undefined)) return node;
  const types = new Set(values.map((v: Json) => v.type));
  if (types.size !== 1) return node;
  const [type] = types;
  const { anyOf: _anyOf, ...rest } = node;
  return {
    ...rest,
    type: nullable ? [type, 'null'] : type,
    enum: [...values.map((v: Json) => v.value), ...(nullable ? [null] : [])],
  };
}

/** Bottom-up rewrite of every schema-like object (children first, then the node itself). */
function rewrite(
  node: Json,
  visit: (node: Record<string, Json>, path: string[]) => Json,
  path: string[] = [],
): Json {
  if (Array.isArray(node)) return node.map((item, i) => rewrite(item, visit, [...path, String(i)]));
  if (!isObject(node)) return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    // Examples are data, not schemas: leave them as written.
    out[key] = key === 'example' || key === 'examples' ? value : rewrite(value, visit, [...path, key]);
  }
  return visit(out, path);
}

const stableJson = (value: Json): string =>
  Array.isArray(value)
    ? `[${value.map(stableJson).join(',')}]`
    : isObject(value)
      ? `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`)
          .join(',')}}`
      : JSON.stringify(value);

/**
 * Replaces every titled schema outside `parameters` by a `$ref` to a component of that name.
 * Query parameters stay inline so "try it" forms show their values directly.
 */
function hoistTitledSchemas(doc: Json): Json {
  const components: Record<string, Json> = { ...(doc.components?.schemas ?? {}) };
  const seen = new Map<string, string>();
  const hoist = (node: Record<string, Json>, path: string[]) => {
    if (typeof node.title !== 'string' || path.includes('parameters') || path.includes('headers'))
      return node;
    const name = node.title.replace(/[^A-Za-z0-9_.-]/g, '');
    const key = stableJson(node);
    const earlier = seen.get(name);
    if (earlier !== undefined && earlier !== key)
      throw new Error(`OpenAPI: two different schemas are titled "${node.title}"`);
    seen.set(name, key);
    components[name] = node;
    return { $ref: `${COMPONENT_PREFIX}${name}` };
  };
  const paths = rewrite(doc.paths, hoist, ['paths']);
  // Components may hold titled schemas too (ErrorEnvelope's code): hoist inside them, not them.
  const hoistedComponents: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(components)) {
    hoistedComponents[name] = isObject(schema)
      ? Object.fromEntries(
          Object.entries(schema).map(([k, v]) => [
            k,
            k === 'example' || k === 'examples' ? v : rewrite(v, hoist, ['components', name, k]),
          ]),
        )
      : schema;
  }
  // Hoisting inside components may have found more titled schemas.
  for (const [name, schema] of Object.entries(components))
    if (!(name in hoistedComponents)) hoistedComponents[name] = schema;
  return { ...doc, paths, components: { ...doc.components, schemas: sortKeys(hoistedComponents) } };
}

const sortKeys = (record: Record<string, Json>) =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

/** A parameter with a default need not be sent; @fastify/swagger marks it required. */
function defaultedParametersOptional(doc: Json): Json {
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      for (const parameter of operation?.parameters ?? []) {
        if (parameter.in !== 'path' && parameter.schema?.default !== undefined) parameter.required = false;
      }
    }
  }
  return doc;
}

/** The codes each status answers unless the route narrows them (docs/design-choices.md, §7). */
export const ERROR_CODES_BY_STATUS: Record<number, ErrorCode[]> = {
  400: ['invalid_request'],
  401: ['authentication_failed'],
  402: ['insufficient_credits', 'tenant_balance_exhausted'],
  403: ['permission_denied'],
  404: ['not_found'],
  409: ['conflict', 'idempotency_key_reuse'],
  413: ['invalid_request'],
  415: ['invalid_request'],
  422: ['validation_failed', 'unprocessable_entity'],
  429: ['rate_limited'],
  500: ['internal_error'],
  503: ['service_unavailable'],
};

export const ERROR_CODES = Object.keys(codeToStatus) as ErrorCode[];

const EXAMPLE_MESSAGES: Record<number, Partial<Record<ErrorCode, { message: string; details?: Json }>>> = {
  400: { invalid_request: { message: 'The request body is not valid JSON.' } },
  401: { authentication_failed: { message: 'The API key is missing, malformed, revoked or unknown.' } },
  402: {
    insufficient_credits: { message: 'The agent’s owner has no credits left; no call was placed.' },
    tenant_balance_exhausted: { message: 'The agency’s wholesale minutes are used up; no call was placed.' },
  },
  403: {
    permission_denied: {
      message: 'This API key lacks the scope this operation requires.',
      details: { required_scopes: ['users:write'] },
    },
  },
  404: { not_found: { message: 'User not found.' } },
  409: {
    conflict: { message: 'A user with this email already exists.' },
    agent_not_published: { message: 'The agent has no published version yet; publish it to place calls.' },
  },
  413: { invalid_request: { message: 'The request body is larger than 1048576 bytes.' } },
  415: { invalid_request: { message: 'The request body must be sent as Content-Type: application/json.' } },
  422: {
    validation_failed: {
      message: 'The request has invalid fields.',
      details: [{ field: 'email', issue: 'must be a valid email address.' }],
    },
    unprocessable_entity: { message: 'The plan is not active.' },
  },
  429: {
    rate_limited: { message: 'Rate limit exceeded; retry after the number of seconds in Retry-After.' },
  },
  500: { internal_error: { message: 'An unexpected error occurred; quote the request id to support.' } },
  503: {
    service_unavailable: {
      message: 'The payment processor did not answer; retry with the same Idempotency-Key.',
    },
  },
};

function errorExample(status: number, code: ErrorCode): Json {
  const known = EXAMPLE_MESSAGES[status]?.[code];
  return {
    error: {
      code,
      message: known?.message ?? `Example of ${code}.`,
      ...(known?.details ? { details: known.details } : {}),
    },
    request_id: 'req_8fJ2kLmN0pQrStUv',
  };
}

/**
 * An error response's schema for the document: the envelope narrowed to the codes the operation
 * can answer with that status (a route narrows further with `x-error-codes`), and an example of
 * its own. The runtime keeps serializing with the plain envelope.
 */
export function documentedErrorSchema(status: number, codes?: ErrorCode[]): Json {
  const published = codes ?? ERROR_CODES_BY_STATUS[status] ?? ERROR_CODES;
  return {
    allOf: [
      { $ref: 'ErrorEnvelope' },
      {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code'],
            // message and details are named so validators that close objects accept them.
            properties: { code: { type: 'string', enum: published }, message: {}, details: {} },
          },
          request_id: {},
        },
      },
    ],
    examples: [errorExample(status, published[0])],
  };
}

/** All the refinements, in the order they depend on each other. */
export function refineDocument(doc: Json): Json {
  const enums = rewrite(doc, (node) => literalUnionToEnum(node));
  return defaultedParametersOptional(hoistTitledSchemas(enums));
}

function collectRefs(node: Json, into: Set<string>): void {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, into);
  else if (isObject(node)) {
    if (typeof node.$ref === 'string' && node.$ref.startsWith(COMPONENT_PREFIX))
      into.add(node.$ref.slice(COMPONENT_PREFIX.length));
    for (const value of Object.values(node)) collectRefs(value, into);
  }
}

export interface DocumentSelection {
  include: (path: string) => boolean;
  info: Json;
  tags: { name: string; description: string }[];
  securitySchemes: string[];
}

/** One surface's document from the full one: its paths, its tags, and the components they use. */
export function selectDocument(full: Json, selection: DocumentSelection): Json {
  const paths = Object.fromEntries(
    Object.entries<Json>(full.paths).filter(([path]) => selection.include(path)),
  );
  const used = new Set<string>();
  collectRefs(paths, used);
  // Components refer to components: follow until nothing new is found.
  for (let size = -1; size !== used.size; ) {
    size = used.size;
    for (const name of [...used]) collectRefs(full.components.schemas[name], used);
  }
  const schemas = Object.fromEntries(
    Object.entries<Json>(full.components.schemas).filter(([name]) => used.has(name)),
  );
  return structuredClone({
    ...full,
    info: selection.info,
    tags: selection.tags,
    paths,
    components: {
      ...full.components,
      schemas,
      securitySchemes: Object.fromEntries(
        selection.securitySchemes.map((name) => [name, full.components.securitySchemes[name]]),
      ),
    },
  });
}
