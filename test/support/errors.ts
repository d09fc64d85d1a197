// What a call under test was refused with, as a code: the shape most core tests assert on.
import { isRingstoreError } from '../../lambdas/core/errors';

/** The RingstoreError code `action` was rejected with; undefined when it succeeded; `unexpected …` for any other error. */
export async function codeOf(action: Promise<unknown>): Promise<string | undefined> {
  return action.then(
    () => undefined,
    (error: unknown) => (isRingstoreError(error) ? error.code : `unexpected ${String(error)}`),
  );
}
