/** The fake Vapi's checks, each from Vapi's published OpenAPI document (../engines/vapi-openapi.json). */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';

interface OpenApiExcerpt {
  paths: Record<string, Record<string, { parameters?: { name: string; schema: Record<string, number> }[] }>>;
}

/** Vapi's published OpenAPI document, the part the adapter uses (see its `x-vendored` note). */
export const VAPI_OPENAPI_EXCERPT = JSON.parse(
  readFileSync(new URL('../engines/vapi-openapi.json', import.meta.url), 'utf8'),
) as OpenApiExcerpt & Record<string, unknown>;

const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

let ajv: Ajv | undefined;
function documentAjv(): Ajv {
  if (ajv) return ajv;
  ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema(VAPI_OPENAPI_EXCERPT, 'vapi');
  return ajv;
}

/** A validator of one component schema: Ajv's messages when a value fails it, else []. */
export function schemaValidator(name: string): (value: unknown) => string[] {
  const validate = documentAjv().getSchema(`vapi#/components/schemas/${name}`);
  if (!validate) throw new Error(`${name} missing from the vendored Vapi OpenAPI excerpt`);
  const describe = (error: ErrorObject) =>
    `${error.instancePath || '(body)'} ${error.message ?? 'is invalid'}${
      error.keyword === 'additionalProperties' ? `: ${String(error.params.additionalProperty)}` : ''
    }`;
  return (value: unknown): string[] => (validate(value) ? [] : (validate.errors ?? []).map(describe));
}

export const PHONE_NUMBER_LIMIT = VAPI_OPENAPI_EXCERPT.paths['/phone-number'].get.parameters!.find(
  (parameter) => parameter.name === 'limit',
)!.schema;

/**
 * The query parameters of `GET /call` as the published operation declares them, each checked
 * against its schema (a number from its text, a date-time's format), as Vapi's validation does.
 */
export function callListQueryValidator() {
  const local = new Ajv({ allErrors: true, strict: false });
  addFormats(local);
  const parameters = VAPI_OPENAPI_EXCERPT.paths['/call'].get.parameters ?? [];
  const byName = new Map(parameters.map((parameter) => [parameter.name, local.compile(parameter.schema)]));
  return (query: URLSearchParams): string[] => {
    const problems: string[] = [];
    for (const [name, text] of query) {
      const validate = byName.get(name);
      if (!validate) {
        problems.push(`property ${name} should not exist`);
        continue;
      }
      const value =
        validate.schema && (validate.schema as { type?: string }).type === 'number' ? Number(text) : text;
      if (!validate(value)) problems.push(`${name} ${validate.errors?.[0]?.message ?? 'is invalid'}`);
    }
    return problems;
  };
}

/** The filters of `GET /call`: a Call passes when every parameter given holds for it. */
export function passesCallFilters(call: Record<string, any>, query: URLSearchParams): boolean {
  for (const [name, text] of query) {
    if (name === 'limit') continue;
    const bound = /^(createdAt|updatedAt)(Gt|Lt|Ge|Le)$/.exec(name);
    if (bound) {
      const value = new Date(call[bound[1]]).getTime();
      const limit = new Date(text).getTime();
      const holds = { Gt: value > limit, Lt: value < limit, Ge: value >= limit, Le: value <= limit }[
        bound[2]
      ];
      if (!holds) return false;
    } else if (call[name] !== text) {
      return false;
    }
  }
  return true;
}
