/**
 * Response serializers compiled once per distinct schema per process. Fastify compiles a
 * fast-json-stringify function for every response schema of every route and status when an app
 * starts: about a thousand, most of an app's start-up CPU, though many are the same schema (every
 * error status answers the same envelope). Keyed by the schema's JSON and the shared schemas
 * (`addSchema`), the only inputs of the compiled function, each distinct schema is compiled once,
 * also across the apps one process builds (a test worker builds one per test file).
 */
import fastJsonStringify, { type Options, type Schema } from 'fast-json-stringify';

type Serializer = (data: unknown) => string;

const compiled = new Map<string, Serializer>();

/** Fastify's `schemaController.compilersFactory.buildSerializer`, sharing compiled functions. */
export function buildSharedSerializer(
  sharedSchemas?: unknown,
  serializerOptions?: Options,
): (route: { schema?: unknown }) => Serializer {
  const externalSchemas = (sharedSchemas ?? {}) as Record<string, Schema>;
  const context = JSON.stringify([externalSchemas, serializerOptions ?? {}]);
  return (route) => {
    const schema = route.schema as Schema;
    const key = `${context}\n${JSON.stringify(schema)}`;
    let serializer = compiled.get(key);
    if (!serializer) {
      // As Fastify's own compiler: a schema is not also its own external reference.
      const schemas = { ...externalSchemas };
      const id = (schema as { $id?: string }).$id;
      if (id) delete schemas[id];
      serializer = fastJsonStringify(schema, { ...serializerOptions, schema: schemas }) as Serializer;
      compiled.set(key, serializer);
    }
    return serializer;
  };
}
