// How SDK failures become Ringstore errors (lambdas/adapters/aws-errors.ts): an unreachable engine is a
// retryable outage, never a 500, however the SDK wrapped the socket error.
import { translateAwsError } from '../../../lambdas/adapters/aws-errors';

describe('translateAwsError', () => {
  it('calls a refused or reset connection an outage, by its code or, once wrapped, by its message', () => {
    // Prepare
    const coded = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566'), { code: 'ECONNREFUSED' });
    const wrapped = new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED 127.0.0.1:4566');
    const reset = new Error('AWS SDK error wrapper for Error: read ECONNRESET');
    // Act
    const translated = [coded, wrapped, reset].map((error) => translateAwsError(error, 'ring read'));
    // Assess
    for (const error of translated) expect(error).toMatchObject({ code: 'shard.unavailable', retryable: true });
  });

  it('keeps the unexpected internal', () => {
    expect(translateAwsError(new TypeError('x is not a function'), 'ring read')).toMatchObject({ code: 'internal', retryable: false });
  });

  it('calls throttling throttling', () => {
    expect(translateAwsError(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }), 'write')).toMatchObject({
      code: 'throttled',
      retryable: true,
    });
  });
});
