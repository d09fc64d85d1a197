// A value built on first use and kept, as the handlers load their rarely used SDK clients (S3, SQS) on the
// first call that needs one instead of at init.

/**
 * `load`, called on the first call of the returned function and kept; a failed load is forgotten, so the
 * next call tries again (a transient failure must not stick for the instance's lifetime).
 *
 * @example
 * const client = loadOnce(async () => new (await import('@aws-sdk/client-sqs')).SQSClient({}));
 * await (await client()).send(command);
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}
