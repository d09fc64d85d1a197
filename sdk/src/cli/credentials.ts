// Where `--iam` finds AWS credentials: the environment's keys first, else the AWS SDK's default chain
// (profiles, SSO, roles) when @aws-sdk/credential-provider-node is installed beside the CLI.

import type { AwsCredentialProvider, AwsCredentials } from '../sigv4';
import type { CliEnv } from './connection';

/**
 * The AWS SDK's environment variables the CLI reads for `--iam`.
 *
 * @example
 * ```ts
 * process.env[AWS_ENV.accessKeyId]; // AWS_ACCESS_KEY_ID
 * ```
 */
export const AWS_ENV = {
  accessKeyId: 'AWS_ACCESS_KEY_ID',
  secretAccessKey: 'AWS_SECRET_ACCESS_KEY',
  sessionToken: 'AWS_SESSION_TOKEN',
  region: 'AWS_REGION',
} as const;

/**
 * The credentials to sign with: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`)
 * when set, else the default provider chain of `@aws-sdk/credential-provider-node` if it can be loaded;
 * undefined when neither is there.
 *
 * @example
 * ```ts
 * const credentials = await iamCredentials(process.env);
 * ```
 */
export async function iamCredentials(env: CliEnv): Promise<AwsCredentials | AwsCredentialProvider | undefined> {
  const accessKeyId = env[AWS_ENV.accessKeyId];
  const secretAccessKey = env[AWS_ENV.secretAccessKey];
  const sessionToken = env[AWS_ENV.sessionToken];
  if (accessKeyId && secretAccessKey) return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  try {
    const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
    return defaultProvider();
  } catch {
    return undefined;
  }
}
