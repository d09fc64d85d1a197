// Credentials, region and client settings every SDK client uses against the local engines.

/**
 * Dummy credentials the local engines accept (s3rver is taught this key pair in s3.ts).
 * Not frozen: SDK clients tag the credentials object they are given (`$source`).
 */
export const localCredentials: { readonly accessKeyId: string; readonly secretAccessKey: string } = {
  accessKeyId: 'local',
  secretAccessKey: 'local',
};

/** The region of the local cloud; ElasticMQ puts it in queue ARNs. */
export const localRegion = 'us-east-1';

/** Timeouts for readiness probes: an engine that is not up yet must fail fast so we poll again. */
export const PROBE_CONNECT_TIMEOUT_MS = 1_000;
export const PROBE_REQUEST_TIMEOUT_MS = 3_000;

/**
 * Client config for a readiness probe against a local endpoint: one attempt, short timeouts.
 *
 * @example
 * const ddb = new DynamoDBClient(probeClientConfig('http://127.0.0.1:8000'));
 */
export function probeClientConfig(endpoint: string) {
  return {
    endpoint,
    region: localRegion,
    credentials: { ...localCredentials },
    maxAttempts: 1,
    // Without throwOnRequestTimeout, smithy only logs a warning when requestTimeout passes.
    requestHandler: { connectionTimeout: PROBE_CONNECT_TIMEOUT_MS, requestTimeout: PROBE_REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
  };
}
