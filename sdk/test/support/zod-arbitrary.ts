// fast-check arbitraries that follow a zod schema, for the kinds of schema the server's responses
// use: samples come from schemas/api.ts as it is today, so a change there reaches the SDK's tests
// without anyone writing a new sample.

import fc from 'fast-check';
import { z } from 'zod';

/**
 * Values of `schema`'s input; pass them through `schema.parse` to get what the server sends.
 * Throws on a kind of schema it does not know, so a new one is noticed rather than skipped.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(arbitraryOf(WriteAck).map((raw) => WriteAck.parse(raw)), (ack) => ...));
 * ```
 */
export function arbitraryOf(schema: z.core.$ZodType): fc.Arbitrary<unknown> {
  if (schema instanceof z.ZodObject) {
    // zod types a generic object's shape as `any`: name what it is.
    const shape: Record<string, z.core.$ZodType> = schema.shape;
    const fields = Object.entries(shape);
    const model: Record<string, fc.Arbitrary<unknown>> = Object.fromEntries(fields.map(([name, field]) => [name, arbitraryOf(field)]));
    const requiredKeys = fields.filter(([, field]) => !(field instanceof z.ZodOptional)).map(([name]) => name);
    return fc.record(model, { requiredKeys });
  }
  // Whether the key is there at all is the enclosing object's choice (requiredKeys above).
  if (schema instanceof z.ZodOptional) return arbitraryOf(schema.unwrap());
  if (schema instanceof z.ZodArray) return fc.array(arbitraryOf(schema.element), { maxLength: 4 });
  if (schema instanceof z.ZodRecord) {
    if (!(schema.keyType instanceof z.ZodString)) throw new Error('arbitraryOf: only string-keyed records');
    return fc.dictionary(fc.string(), arbitraryOf(schema.valueType), { maxKeys: 4 });
  }
  if (schema instanceof z.ZodString) return fc.string();
  if (schema instanceof z.ZodNumber) {
    // Within the schema's bounds (a share from 0 to 1, a count from 0); unbounded, zod says ±Infinity.
    const bounds = {
      ...(Number.isFinite(schema.minValue) ? { min: schema.minValue! } : {}),
      ...(Number.isFinite(schema.maxValue) ? { max: schema.maxValue! } : {}),
    };
    // z.number().int() is the `safeint` format (int32 and uint32 are integers too).
    return schema.format?.endsWith('int') || schema.format?.endsWith('int32')
      ? fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER, ...bounds })
      : fc.double({ noNaN: true, noDefaultInfinity: true, ...bounds });
  }
  if (schema instanceof z.ZodBoolean) return fc.boolean();
  if (schema instanceof z.ZodEnum) return fc.constantFrom(...schema.options);
  if (schema instanceof z.ZodLiteral) return fc.constantFrom(...schema.values);
  if (schema instanceof z.ZodUnknown) return fc.jsonValue();
  if (schema instanceof z.ZodUnion) return fc.oneof(...schema.options.map((option: z.core.$ZodType) => arbitraryOf(option)));
  throw new Error(`arbitraryOf: no arbitrary for a zod ${schema._zod.def.type}`);
}

/**
 * Samples of what the server sends for a response schema: arbitrary values, parsed by the schema.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(serverSamples(RingResponse), (ring) => ring.tokenBits === 32));
 * ```
 */
export function serverSamples<Schema extends z.ZodType>(schema: Schema): fc.Arbitrary<z.output<Schema>> {
  return arbitraryOf(schema).map((raw) => schema.parse(raw));
}
