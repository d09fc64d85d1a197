// Query parameter rules shared by the API's schema modules (schemas/api.ts, schemas/watch.ts).
import * as z from 'zod';

/**
 * An integer query parameter in [min, max]. One rule, one message, whatever is wrong with the value
 * (`-1`, `0`, `1.5`, `abc` or too large): a client fixes it from the message alone.
 */
export const integerParam = (description: string, min: number, max: number) => {
  const rule = `must be an integer from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d{1,15}$/, rule)
    .transform(Number)
    .meta({ description, type: 'integer' })
    .pipe(z.number().min(min, rule).max(max, rule));
};
