// No secret in the audit trail or a log line (docs/security.md, "Audit"): the core's redaction of API keys,
// the audit middleware that records a rotation asked with a whole key, and the handlers' logger.
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import fc from 'fast-check';
import { proxyEvent } from '../../../cdk/local/lambda-events';
import { RingstoreError } from '../../../lambdas/core/errors';
import { redactedCopy, redactedSecret, redactSecrets } from '../../../lambdas/core/redaction';
import { auditTrail } from '../../../lambdas/http/audit';
import { httpErrors } from '../../../lambdas/http/errors';
import type { AuditEntry, AuditLog } from '../../../lambdas/ports';
import { redactingLogger } from '../../../lambdas/wiring/wiring';
import { ManualClock } from '../../support/memory-ports';

const keyId = '0123456789ab';
const secret = 'U2VjcmV0LW9mLXRoZS1rZXktdW5kZXItdGVzdC0xMjM0NTY3OA';
const apiKey = `rs_${keyId}_${secret}`;

const secretChars = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'.split(''));
const secretOf = (minLength: number) => fc.array(secretChars, { minLength, maxLength: 128 }).map((chars) => chars.join(''));
const keyIdOf = fc.array(fc.constantFrom(...'0123456789abcdef'.split('')), { minLength: 12, maxLength: 12 }).map((chars) => chars.join(''));

describe('redactSecrets', () => {
  it('keeps the key id and cuts the secret, wherever the key is in the text', () => {
    expect(redactSecrets(apiKey)).toBe(`rs_${keyId}_${redactedSecret}`);
    expect(redactSecrets(`POST /v1/admin/keys/${apiKey}/rotate`)).toBe(`POST /v1/admin/keys/rs_${keyId}_${redactedSecret}/rotate`);
    expect(redactSecrets(`{"a":"${apiKey}","b":"${apiKey}"}`)).toBe(
      `{"a":"rs_${keyId}_${redactedSecret}","b":"rs_${keyId}_${redactedSecret}"}`,
    );
    // A key cut short when it was pasted is still a secret, or most of one.
    expect(redactSecrets(`rs_${keyId}_${secret.slice(0, 6)}`)).toBe(`rs_${keyId}_${redactedSecret}`);
  });

  it('leaves a key id, and text with no key in it, as they are', () => {
    expect(redactSecrets(keyId)).toBe(keyId);
    expect(redactSecrets('users_0123 rs_ rs_0123_abc namespace-a')).toBe('users_0123 rs_ rs_0123_abc namespace-a');
  });

  it('never lets a secret through, whatever text surrounds the key', () => {
    fc.assert(
      fc.property(fc.string(), keyIdOf, secretOf(16), fc.string(), (before, id, keySecret, after) => {
        fc.pre(!`${before}${after}`.includes(keySecret));
        const redacted = redactSecrets(`${before}rs_${id}_${keySecret}${after}`);
        expect(redacted).not.toContain(keySecret);
        expect(redacted).toContain(`rs_${id}_${redactedSecret}`);
      }),
    );
  });
});

describe('redactedCopy', () => {
  it('redacts every string of a record, nested ones and names too, and keeps everything else', () => {
    const record = { at: 'now', status: 400, ok: false, target: { keyId: apiKey }, list: [apiKey, 3], [apiKey]: null };

    expect(redactedCopy(record)).toEqual({
      at: 'now',
      status: 400,
      ok: false,
      target: { keyId: `rs_${keyId}_${redactedSecret}` },
      list: [`rs_${keyId}_${redactedSecret}`, 3],
      [`rs_${keyId}_${redactedSecret}`]: null,
    });
    expect(JSON.stringify(redactedCopy(record))).not.toContain(secret);
  });
});

/** The audit middleware around a handler, with the trail and the log lines it writes kept here. */
function audited(handler: () => Promise<APIGatewayProxyResult>) {
  const entries: AuditEntry[] = [];
  const lines: unknown[] = [];
  const log: AuditLog = {
    record: async (entry) => {
      entries.push(entry);
    },
    list: async () => ({ entries }),
  };
  const logger = { info: (message: string, details: object) => lines.push({ message, ...details }), error: () => undefined };
  const run = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .use(auditTrail({ log, clock: new ManualClock(0), logger }))
    .handler(handler);
  return { run: (event: APIGatewayProxyEvent) => run(event, {} as Context), entries, lines };
}

const rotation = (pathKey: string, body: string) =>
  proxyEvent({
    resource: '/v1/admin/keys/{keyId}/rotate',
    path: `/v1/admin/keys/${pathKey}/rotate`,
    method: 'POST',
    stage: 'local',
    headers: { 'content-type': 'application/json' },
    pathParameters: { keyId: pathKey },
    body: Buffer.from(body),
    authorizer: { keyId: 'aaaaaaaaaaaa', namespace: 'admin', role: 'admin' },
  });

describe('the audit trail of a rotation asked with a whole key', () => {
  it('records the key id as the target, and no secret in the trail or the log line, when the rotation succeeds', async () => {
    const audit = audited(async () => ({ statusCode: 200, body: '{}' }));

    await audit.run(rotation(apiKey, `{"note":"was ${apiKey}"}`));

    expect(audit.entries).toHaveLength(1);
    expect(audit.entries[0]).toMatchObject({ operation: 'rotateApiKey', target: { keyId }, outcome: 'succeeded' });
    expect(JSON.stringify(audit.entries)).not.toContain(secret);
    expect(JSON.stringify(audit.lines)).not.toContain(secret);
  });

  it('redacts a malformed key too, when the request is refused', async () => {
    const audit = audited(async () => {
      throw new RingstoreError('request.invalid', 'path keyId: must be a key id');
    });
    const mangled = `rs_${keyId}_${secret}!`;

    await audit.run(rotation(mangled, ''));

    expect(audit.entries[0]).toMatchObject({ outcome: 'failed', status: 400, errorCode: 'request.invalid' });
    expect(JSON.stringify(audit.entries)).not.toContain(secret);
    expect(JSON.stringify(audit.lines)).not.toContain(secret);
  });
});

describe('redactingLogger', () => {
  it('prints no secret: not in the message, the details, or an error message and stack', () => {
    const printed: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    const writeError = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      const logger = redactingLogger({ logLevel: 'INFO' });
      logger.info(`rotating ${apiKey}`, { request: { keyId: apiKey } });
      logger.error('request failed', { error: new Error(`no key ${apiKey}`) });
    } finally {
      write.mockRestore();
      writeError.mockRestore();
    }

    const output = printed.join('');
    expect(output).toContain(`rs_${keyId}_${redactedSecret}`);
    expect(output).toContain('request failed');
    expect(output).not.toContain(secret);
  });
});
