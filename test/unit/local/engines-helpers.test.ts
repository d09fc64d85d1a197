// Pure helpers of the local engines: config generation, the S3 settings the rest of the code shares, and the readiness wait.
import { elasticMqConfig } from '../../../cdk/local/engines/elasticmq';
import { encodeEventKey, s3ClientOptions } from '../../../cdk/local/engines/s3';
import { fetchPom } from '../../../cdk/local/engines/vendor';
import { DYNAMODB_LOCAL } from '../../../cdk/local/engines/dynamodb-local';
import { redisServerArgs } from '../../../cdk/local/engines/redis';
import { cacheAccessString } from '../../../schemas/topology';
import { waitReady } from '../../../cdk/local/engines/ready';
import type { ManagedChild } from '../../../cdk/local/engines/child';

describe('local engine helpers', () => {
  it('ElasticMQ binds and advertises 127.0.0.1 on the given port, in us-east-1, persisted under the data dir', () => {
    // Act
    const config = elasticMqConfig(49152, '/data/sqs');

    // Assess
    expect(config).toContain('include classpath("application.conf")');
    expect(config).toMatch(/node-address \{[^}]*host = "127\.0\.0\.1"[^}]*port = 49152/);
    expect(config).toMatch(/rest-sqs \{[^}]*bind-port = 49152[^}]*bind-hostname = "127\.0\.0\.1"/);
    expect(config).toMatch(/region = "us-east-1"/);
    expect(config).toContain('uri = "jdbc:h2:/data/sqs/messages"');
  });

  it('S3 client options turn off default checksums and use path-style local endpoints', () => {
    // Act
    const local = s3ClientOptions('http://127.0.0.1:4568');
    const aws = s3ClientOptions();

    // Assess
    expect(local).toMatchObject({
      endpoint: 'http://127.0.0.1:4568',
      region: 'us-east-1',
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    expect(aws).toEqual({ requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  });

  it('S3 event keys are form-encoded per path segment, as S3 notifications send them', () => {
    // Act + Assess
    expect(encodeEventKey('blobs/a b/c+d%e')).toBe('blobs/a+b/c%2Bd%25e');
  });

  it('the fetch pom names exactly the artifact', () => {
    // Act
    const pom = fetchPom(DYNAMODB_LOCAL);

    // Assess
    expect(pom).toContain('<groupId>com.amazonaws</groupId>');
    expect(pom).toContain('<artifactId>DynamoDBLocal</artifactId>');
    expect(pom).toContain('<version>2.6.1</version>');
  });

  it('redis runs without persistence and with a bounded LRU memory', () => {
    // Act
    const args = redisServerArgs(6390, { username: 'ringstore-local-l2', password: 'secret' });
    const value = (flag: string) => args[args.indexOf(flag) + 1];

    // Assess
    expect(value('--save')).toBe('');
    expect(value('--appendonly')).toBe('no');
    expect(value('--maxmemory')).toBe('256mb');
    expect(value('--maxmemory-policy')).toBe('allkeys-lru');
    expect([value('--bind'), value('--port')]).toEqual(['127.0.0.1', '6390']);
  });

  it('redis lets in only the ACL user, with its password and the cache rules', () => {
    // Act
    const args = redisServerArgs(6390, { username: 'ringstore-local-l2', password: 'secret' }).join(' ');

    // Assess
    expect(args).toContain('--user default off --user');
    expect(args).toContain(`--user ringstore-local-l2 ${cacheAccessString} >secret`);
  });
});

describe('waitReady and a port taken between its pick and the bind', () => {
  /** A child that never exits, with the given output. */
  const runningChild = (output: string): ManagedChild => ({
    name: 'ElasticMQ',
    pid: 1,
    exited: new Promise<never>(() => undefined),
    exitInfo: () => undefined,
    outputTail: (lines = 25) => output.split('\n').slice(-lines).join('\n'),
    stop: async () => undefined,
  });
  const bindFailure = [
    'ERROR o.a.p.io.TcpListener - Bind failed for TCP channel on endpoint [/127.0.0.1:9324]',
    'java.net.BindException: Address already in use',
    ...Array.from({ length: 60 }, (_, n) => `\tat frame${n}(Source.java:${n})`),
  ].join('\n');

  test('an engine that logged a failed bind is a port race at once, whether or not something answers on the port', async () => {
    const neverAnswers = waitReady({
      name: 'ElasticMQ',
      child: runningChild(bindFailure),
      probe: () => Promise.reject(new Error('refused')),
      timeoutMs: 30_000,
    });
    await expect(neverAnswers).rejects.toMatchObject({ exitedEarly: true, message: expect.stringMatching(/could not bind its port/) });
    const anotherAnswers = waitReady({ name: 'ElasticMQ', child: runningChild(bindFailure), probe: () => Promise.resolve('someone else') });
    await expect(anotherAnswers).rejects.toMatchObject({ exitedEarly: true });
  });

  test('an engine that bound its port is ready when it answers', async () => {
    await expect(
      waitReady({ name: 'ElasticMQ', child: runningChild('started on 9324'), probe: () => Promise.resolve('ok') }),
    ).resolves.toBeUndefined();
  });
});
