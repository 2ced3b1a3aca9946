/** Response serializers shared per distinct schema: equal schemas share one, others never do. */
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { buildSharedSerializer } from '../../src/core/http/serialization.js';

const route = (schema: unknown) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });
const Plan = () => Type.Object({ id: Type.String(), minutes: Type.Integer() });

describe('shared response serializers', () => {
  it('compiles equal schemas once, across separately built apps, and writes only their fields', () => {
    const first = buildSharedSerializer({}, {})(route(Plan()));
    const second = buildSharedSerializer({}, {})(route(Plan()));
    expect(second).toBe(first);
    expect(JSON.parse(first({ id: 'plan_1', minutes: 30, secret: 'not in the schema' }))).toEqual({
      id: 'plan_1',
      minutes: 30,
    });
  });

  it('keeps schemas that differ in any keyword apart', () => {
    const compile = buildSharedSerializer({}, {});
    const withName = compile(route(Type.Object({ id: Type.String(), name: Type.String() })));
    const withMinutes = compile(route(Plan()));
    expect(withName).not.toBe(withMinutes);
    expect(JSON.parse(withName({ id: 'a', name: 'Ada', minutes: 3 }))).toEqual({ id: 'a', name: 'Ada' });
  });

  it('resolves references against the shared schemas it was built with', () => {
    const envelope = (field: string) => ({
      Envelope: { $id: 'Envelope', type: 'object', properties: { [field]: { type: 'string' } } },
    });
    const schema = { $ref: 'Envelope#' };
    const code = buildSharedSerializer(envelope('code'), {})(route(schema));
    const message = buildSharedSerializer(envelope('message'), {})(route(schema));
    expect(JSON.parse(code({ code: 'x', message: 'y' }))).toEqual({ code: 'x' });
    expect(JSON.parse(message({ code: 'x', message: 'y' }))).toEqual({ message: 'y' });
  });
});
