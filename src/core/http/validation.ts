/**
 * Request validation (docs/design-choices.md): JSON bodies are strictly typed and never coerced, unknown
 * body fields are rejected, every offending field is reported. Query parameters arrive as strings:
 * integer parameters must be whole decimal numbers; unknown query parameters are ignored.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { ApiError, type FieldIssue, validationFailed } from '../errors.js';
import { PHONE_ISSUE, PHONE_PATTERN } from './schemas.js';

function createAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
  });
  // ajv-formats is CommonJS: its function is the default export's default.
  const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (
    ajv: Ajv,
    formats: string[],
  ) => Ajv;
  addFormats(ajv, ['email', 'date-time', 'uri']);
  return ajv;
}

const ajv = createAjv();

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const DECIMAL_INTEGER = /^-?\d{1,20}$/;

/** Turns whole decimal strings into numbers where the schema expects an integer; leaves the rest. */
function parseIntegerParameters(schema: any, query: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...query };
  for (const [name, property] of Object.entries<any>(schema?.properties ?? {})) {
    const value = result[name];
    if (property?.type === 'integer' && typeof value === 'string' && DECIMAL_INTEGER.test(value)) {
      result[name] = Number(value);
    }
  }
  return result;
}

// PostgreSQL stores neither NUL characters nor lone UTF-16 surrogates (text or jsonb).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000).';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode (no unpaired surrogate).';
  return undefined;
}

/**
 * How deep an API request body may nest objects and arrays, the body itself being level 1. No
 * request needs more than a few levels; the cap keeps every later step (validation, the
 * idempotency fingerprint) shallow whatever fits in the body limit.
 */
export const MAX_BODY_DEPTH = 32;

export interface StorabilityCheck {
  /** Strings (values and object keys) PostgreSQL cannot store as sent, in document order. */
  issues: FieldIssue[];
  /** An object or array sits deeper than allowed; the walk stopped there. */
  tooDeep: boolean;
}

/** A field's dotted path, kept as a link to its parent so a step costs O(1), not O(depth). */
interface PathLink {
  key: string;
  parent: PathLink | undefined;
}

function dotted(link: PathLink | undefined): string | undefined {
  const keys: string[] = [];
  for (let at = link; at; at = at.parent) keys.push(at.key);
  return keys.length > 0 ? keys.reverse().join('.') : undefined;
}

/**
 * One walk over parsed JSON for what PostgreSQL cannot store: text and jsonb refuse U+0000 (the
 * request would fail in the database) and an unpaired surrogate would silently become U+FFFD.
 * Object keys count too; a key with a problem is reported instead of its value. Objects and arrays
 * deeper than `maxDepth` (the outermost value being level 1) stop the walk.
 *
 * Iterative with an explicit stack, and linear in the size of the value: any nesting a body limit
 * lets through is answered as bad input, never with a stack overflow.
 */
export function checkStorable(data: unknown, maxDepth: number): StorabilityCheck {
  const issues: FieldIssue[] = [];
  const report = (link: PathLink | undefined, issue: string) => {
    const field = dotted(link);
    issues.push(field === undefined ? { issue } : { field, issue });
  };
  // `key` is set when the entry is an object member whose key is still to be checked.
  const stack: { value: unknown; level: number; link: PathLink | undefined; key?: string }[] = [
    { value: data, level: 1, link: undefined },
  ];
  while (stack.length > 0) {
    const { value, level, link, key } = stack.pop() as (typeof stack)[number];
    if (key !== undefined) {
      const issue = textProblem(key);
      if (issue) {
        report(link, issue);
        continue;
      }
    }
    if (typeof value === 'string') {
      const issue = textProblem(value);
      if (issue) report(link, issue);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (level > maxDepth) return { issues, tooDeep: true };
    // Pushed last to first, so members come off the stack in document order.
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ value: value[i], level: level + 1, link: { key: String(i), parent: link } });
      }
    } else {
      const members = Object.entries(value);
      for (let i = members.length - 1; i >= 0; i--) {
        const [name, member] = members[i];
        stack.push({ value: member, level: level + 1, link: { key: name, parent: link }, key: name });
      }
    }
  }
  return { issues, tooDeep: false };
}

/** Only the parameters the schema declares (unknown query parameters are ignored, NUL or not). */
function declaredOnly(schema: any, data: unknown): unknown {
  if (!isPlainObject(data) || schema?.additionalProperties === false) return data;
  const declared = Object.keys(schema?.properties ?? {});
  return Object.fromEntries(Object.entries(data).filter(([key]) => declared.includes(key)));
}

function check(validate: ValidateFunction, data: unknown, part: string, schema?: unknown) {
  // Depth and text first: Ajv then only ever sees shallow data.
  const text = checkStorable(part === 'body' ? data : declaredOnly(schema, data), MAX_BODY_DEPTH);
  if (text.tooDeep) {
    return {
      error: new ApiError(
        'invalid_request',
        `The ${partName(part)} is nested too deeply: at most ${MAX_BODY_DEPTH} levels of objects and arrays.`,
      ),
    };
  }
  const valid = validate(data);
  if (valid && text.issues.length === 0) return { value: data };
  const issues = [...(valid ? [] : toFieldIssues(validate.errors ?? [])), ...text.issues];
  return { error: validationError(issues, part) };
}

export const validatorCompiler: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => {
  const validate: ValidateFunction = ajv.compile(schema as object);
  if (httpPart === 'body') {
    return (data: unknown) => {
      if (!isPlainObject(data)) {
        return { error: new ApiError('invalid_request', 'The request body must be a JSON object.') };
      }
      return check(validate, data, 'body');
    };
  }
  if (httpPart === 'querystring') {
    return (data: unknown) =>
      check(validate, parseIntegerParameters(schema, isPlainObject(data) ? data : {}), 'querystring', schema);
  }
  return (data: unknown) => check(validate, data, httpPart ?? 'params', schema);
};

function fieldOf(error: ErrorObject): string | undefined {
  const segments = error.instancePath.split('/').filter(Boolean);
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
  return segments.length > 0 ? segments.join('.') : undefined;
}

function issueOf(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required.';
    case 'additionalProperties':
      return 'is not a recognised field.';
    case 'type':
      return `must be ${error.params.type === 'integer' ? 'a whole number' : `of type ${error.params.type}`}.`;
    case 'enum':
      return `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}.`;
    case 'const':
      return `must be ${JSON.stringify(error.params.allowedValue)}.`;
    case 'format':
      return error.params.format === 'email'
        ? 'must be a valid email address.'
        : `must be a valid ${error.params.format}.`;
    case 'pattern':
      return error.params.pattern === PHONE_PATTERN ? PHONE_ISSUE : 'has an invalid format.';
    case 'minLength':
      return `must be at least ${error.params.limit} characters long.`;
    case 'maxLength':
      return `must be at most ${error.params.limit} characters long.`;
    case 'minimum':
      return `must be at least ${error.params.limit}.`;
    case 'maximum':
      return `must be at most ${error.params.limit}.`;
    case 'minItems':
      return `must have at least ${error.params.limit} items.`;
    case 'uniqueItems':
      return 'must not contain duplicates.';
    default:
      return `${error.message ?? 'is invalid'}.`;
  }
}

/** The issue of a union (anyOf) that matched no branch: one sentence instead of one per branch. */
function unionIssues(group: ErrorObject, branchErrors: ErrorObject[]): FieldIssue[] {
  const field = fieldOf(group);
  const consts = branchErrors.filter((e) => e.keyword === 'const' || e.keyword === 'enum');
  // A union of literals (TypeBox gives each literal a type too): name the allowed values.
  if (
    consts.length > 0 &&
    branchErrors.every((e) => e.keyword === 'const' || e.keyword === 'enum' || e.keyword === 'type')
  ) {
    const allowed = consts.flatMap((e) =>
      e.keyword === 'const' ? [e.params.allowedValue] : (e.params.allowedValues as unknown[]),
    );
    const issue = `must be one of: ${allowed.map((v) => (v === null ? 'null' : String(v))).join(', ')}.`;
    return [field === undefined ? { issue } : { field, issue }];
  }
  // A branch whose type matched explains the problem better than the branches whose type did not.
  const matched = branchErrors.filter((e) => e.keyword !== 'type');
  if (matched.length > 0) return plainIssues(matched);
  const types = [...new Set(branchErrors.map((e) => String(e.params.type)))].map((type) =>
    type === 'integer' ? 'a whole number' : type === 'null' ? 'null' : `of type ${type}`,
  );
  const issue = `must be ${types.join(' or ')}.`;
  return [field === undefined ? { issue } : { field, issue }];
}

function plainIssues(errors: ErrorObject[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const typeErrorFields = new Set(errors.filter((e) => e.keyword === 'type').map((e) => fieldOf(e)));
  for (const error of errors) {
    const field = fieldOf(error);
    if (error.keyword !== 'type' && typeErrorFields.has(field)) continue;
    const issue = issueOf(error);
    issues.push(field === undefined ? { issue } : { field, issue });
  }
  return issues;
}

/**
 * One { field, issue } per offending field and problem; a type error hides that field's other
 * issues, and a union that matched no branch gives one issue (`must be one of: a, b.`).
 */
export function toFieldIssues(errors: ErrorObject[]): FieldIssue[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  // Errors inside a union belong to its outermost failing union.
  const unionOf = (error: ErrorObject) =>
    unions
      .filter(
        (u) =>
          u !== error &&
          error.schemaPath.startsWith(`${u.schemaPath}/`) &&
          error.instancePath.startsWith(u.instancePath),
      )
      .sort((x, y) => x.schemaPath.length - y.schemaPath.length)[0];
  const outermost = unions.filter((u) => unionOf(u) === undefined);
  const branchErrors = new Map<ErrorObject, ErrorObject[]>(outermost.map((u) => [u, []]));
  const plain: ErrorObject[] = [];
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    const union = unionOf(error);
    if (union) {
      const top =
        outermost.find((u) => u === union || union.schemaPath.startsWith(`${u.schemaPath}/`)) ?? union;
      branchErrors.get(top)?.push(error);
    } else if (error.keyword !== 'anyOf' && error.keyword !== 'oneOf') {
      plain.push(error);
    }
  }
  const all = [...plainIssues(plain), ...outermost.flatMap((u) => unionIssues(u, branchErrors.get(u) ?? []))];
  const seen = new Set<string>();
  return all.filter((issue) => {
    const signature = `${issue.field}\u0000${issue.issue}`;
    if (seen.has(signature)) return false;
    seen.add(signature);
    return true;
  });
}

function partName(part: string): string {
  return part === 'querystring' ? 'query parameters' : part === 'body' ? 'request body' : part;
}

function validationError(issues: FieldIssue[], part: string): ApiError {
  return new ApiError('validation_failed', `The ${partName(part)} failed validation.`, issues);
}

/** Validates data against a schema outside a route (e.g. nested settings); returns issues. */
export function checkAgainst(schema: object, data: unknown): FieldIssue[] {
  const validate = ajv.compile(schema);
  return validate(data) ? [] : toFieldIssues(validate.errors ?? []);
}

/**
 * Validates `data` as the API's validator does: what PostgreSQL cannot store (NUL characters,
 * unpaired surrogates, nesting too deep), then the API's schema; throws 422 validation_failed with
 * field issues.
 */
export function validated<S extends TSchema>(schema: S, data: unknown): Static<S> {
  const storable = checkStorable(data, MAX_BODY_DEPTH);
  if (storable.tooDeep) throw validationFailed([{ issue: 'is nested too deeply.' }]);
  const issues = [...checkAgainst(schema, data), ...storable.issues];
  if (issues.length > 0) throw validationFailed(issues);
  return data as Static<S>;
}
