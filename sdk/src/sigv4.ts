// Signing requests with AWS credentials (SigV4, service execute-api) for a Ringstore API that uses IAM
// authorization instead of API keys (docs/security.md, "IAM authentication").

import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * AWS credentials, as the AWS SDK's credential providers resolve them.
 *
 * @example
 * ```ts
 * const credentials: AwsCredentials = { accessKeyId: 'AKIA…', secretAccessKey: '…' };
 * ```
 */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Present for temporary credentials (an assumed role, SSO, a Lambda's role). */
  sessionToken?: string;
  /** When temporary credentials stop working; a provider is asked again before then. */
  expiration?: Date;
}

/**
 * A source of credentials asked before every request (it may cache and refresh them), e.g.
 * `fromNodeProviderChain()` of `@aws-sdk/credential-providers`.
 *
 * @example
 * ```ts
 * import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
 * const credentials: AwsCredentialProvider = fromNodeProviderChain();
 * ```
 */
export type AwsCredentialProvider = () => Promise<AwsCredentials>;

/**
 * What a request looks like to a signer: its method, full URL, headers and body.
 *
 * @example
 * ```ts
 * const unsigned: UnsignedRequest = { method: 'GET', url: 'http://127.0.0.1:4510/v1/ring', headers: {} };
 * ```
 */
export interface UnsignedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
}

/**
 * Authenticates a request by adding headers to it; the client's transport asks it before every attempt.
 *
 * @example
 * ```ts
 * const headers = await signer.sign({ method: 'GET', url: 'http://127.0.0.1:4510/v1/ring', headers: {} });
 * ```
 */
export interface RequestSigner {
  sign(request: UnsignedRequest): Promise<Record<string, string>>;
}

/**
 * The region of an API Gateway endpoint (`https://<id>.execute-api.<region>.amazonaws.com/<stage>`), if it is one.
 *
 * @example
 * ```ts
 * regionOfEndpoint('https://abc123.execute-api.eu-west-1.amazonaws.com/prod'); // 'eu-west-1'
 * ```
 */
export function regionOfEndpoint(endpoint: string): string | undefined {
  return /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(new URL(endpoint).hostname)?.[1];
}

/**
 * Signs requests with SigV4 for service `execute-api` in `region`, as API Gateway's `AWS_IAM`
 * authorization (and the local gateway of `npm start`) verify them: the method, path, query, the
 * headers sent and the body's sha256.
 *
 * @example
 * ```ts
 * const signer = new SigV4Signer({ credentials: { accessKeyId: 'AKIA…', secretAccessKey: '…' }, region: 'eu-west-1' });
 * const headers = await signer.sign({ method: 'PUT', url: 'https://…/prod/v1/kv/a', headers: {}, body: 'hello' });
 * ```
 */
export class SigV4Signer implements RequestSigner {
  private readonly signer: SignatureV4;
  private readonly now: () => number;

  constructor(options: { credentials: AwsCredentials | AwsCredentialProvider; region: string; now?: () => number }) {
    this.now = options.now ?? Date.now;
    this.signer = new SignatureV4({
      service: 'execute-api',
      region: options.region,
      credentials: options.credentials,
      sha256: Hash.bind(null, 'sha256'),
    });
  }

  async sign(request: UnsignedRequest): Promise<Record<string, string>> {
    const target = new URL(request.url);
    const query: Record<string, string | string[]> = {};
    for (const name of new Set(target.searchParams.keys())) {
      const values = target.searchParams.getAll(name);
      query[name] = values.length === 1 ? (values[0] ?? '') : values;
    }
    const headers: Record<string, string> = { host: target.host };
    for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
    const signed = await this.signer.sign(
      {
        method: request.method,
        protocol: target.protocol,
        hostname: target.hostname,
        ...(target.port === '' ? {} : { port: Number(target.port) }),
        path: target.pathname,
        query,
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      },
      { signingDate: new Date(this.now()) },
    );
    // fetch sets Host itself, from the URL: the same value that was signed.
    const { host: _host, ...sent } = signed.headers;
    return sent;
  }
}
