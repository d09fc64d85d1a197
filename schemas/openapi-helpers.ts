// The pieces the OpenAPI operations are written with (schemas/openapi.ts and the modules it gathers operations from).
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import { ErrorResponse } from './api';
import { limits } from './topology';

/** An operation as its route's entry in the document, less the method and path the topology gives. */
export type Operation = Omit<RouteConfig, 'method' | 'path'>;

/**
 * A JSON request body with the example its curl sample sends: the example is parsed with the schema
 * here, so an example that drifts from the API fails the build of the document (and its unit test).
 */
export function jsonBody<Schema extends z.ZodType>(schema: Schema, example: z.input<Schema>) {
  schema.parse(example);
  return { content: { 'application/json': { schema, example } } };
}
export const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
export const error = (description: string) => json(ErrorResponse, description);
export const keyParam = z.object({
  key: z
    .string()
    .min(1)
    .meta({ description: `The key, URL-encoded; 1 to ${limits.keyBytesMax} bytes of UTF-8` }),
});
