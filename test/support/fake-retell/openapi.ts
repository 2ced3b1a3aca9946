/**
 * The fake Retell's check of request bodies: each operation's schema in Retell's published OpenAPI
 * document (../engines/retell-openapi.json), plus one check Retell's schemas leave out: no
 * top-level field the operation does not define (a misspelt field would otherwise pass).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export const RETELL_OPENAPI_PATH = path.join(import.meta.dirname, '..', 'engines', 'retell-openapi.json');

const OPERATIONS: { method: string; template: string; pattern: RegExp }[] = [
  { method: 'POST', template: '/create-retell-llm', pattern: /^\/create-retell-llm$/ },
  { method: 'PATCH', template: '/update-retell-llm/{llm_id}', pattern: /^\/update-retell-llm\/[^/]+$/ },
  { method: 'POST', template: '/create-agent', pattern: /^\/create-agent$/ },
  { method: 'PATCH', template: '/update-agent/{agent_id}', pattern: /^\/update-agent\/[^/]+$/ },
  { method: 'POST', template: '/publish-agent/{agent_id}', pattern: /^\/publish-agent\/[^/]+$/ },
  { method: 'POST', template: '/v2/create-phone-call', pattern: /^\/v2\/create-phone-call$/ },
  { method: 'POST', template: '/v2/list-calls', pattern: /^\/v2\/list-calls$/ },
  {
    method: 'PATCH',
    template: '/update-phone-number/{phone_number}',
    pattern: /^\/update-phone-number\/[^/]+$/,
  },
];

interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
  components: { schemas: Record<string, unknown> };
}

type BodySchemas = Map<string, { validate: ValidateFunction; fields: Set<string> }>;
/** Compiled once per test file: the document is large. */
let compiledBodySchemas: BodySchemas | undefined;

/** Each operation's body validator, and the top-level fields its schema defines. */
function compileBodySchemas(): BodySchemas {
  if (compiledBodySchemas) return compiledBodySchemas;
  // OpenAPI 3.0's boolean `exclusiveMinimum` (AgentWeight.weight) is JSON Schema's number form.
  const document = JSON.parse(fs.readFileSync(RETELL_OPENAPI_PATH, 'utf8'), function (key, value) {
    if (key === 'exclusiveMinimum' && value === true) return this.minimum;
    return value;
  }) as OpenApiDocument;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;
  addFormats(ajv);
  ajv.addSchema({ components: document.components }, 'retell');
  const fieldsOf = (schema: any): string[] => {
    if (!schema || typeof schema !== 'object') return [];
    if (typeof schema.$ref === 'string')
      return fieldsOf(document.components.schemas[schema.$ref.split('/').pop()]);
    return [...Object.keys(schema.properties ?? {}), ...(schema.allOf ?? []).flatMap(fieldsOf)];
  };
  const compiled: BodySchemas = new Map();
  for (const operation of OPERATIONS) {
    const schema =
      document.paths[operation.template]?.[operation.method.toLowerCase()]?.requestBody?.content[
        'application/json'
      ]?.schema;
    if (!schema) continue;
    const local = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"retell#/components/'));
    compiled.set(operation.template, { validate: ajv.compile(local), fields: new Set(fieldsOf(schema)) });
  }
  compiledBodySchemas = compiled;
  return compiled;
}

/** Why the body of this request fails its operation's schema; undefined when it passes (or has none). */
export function bodyProblems(method: string, urlPath: string, body: unknown): ErrorObject[] | undefined {
  const operation = OPERATIONS.find(
    (candidate) => candidate.method === method && candidate.pattern.test(urlPath),
  );
  const schema = operation && compileBodySchemas().get(operation.template);
  if (!schema) return undefined;
  const unknown = Object.keys((body as object) ?? {}).filter((field) => !schema.fields.has(field));
  if (schema.validate(body) && unknown.length === 0) return undefined;
  return [
    ...(schema.validate.errors ?? []),
    ...unknown.map(
      (field): ErrorObject => ({
        instancePath: `/${field}`,
        schemaPath: '#/properties',
        keyword: 'additionalProperties',
        params: { additionalProperty: field },
        message: 'is not a field of this operation',
      }),
    ),
  ];
}
