// The L2 cache's authentication as the configuration reads it: a password, an IAM token, or none, never two.
import { loadConfig } from '../../../lambdas/config';
import { envVars } from '../../../schemas/topology';

const url = { [envVars.redisUrl]: 'rediss://cache.example:6379', AWS_REGION: 'eu-west-1' };

describe('loadConfig, the L2 cache authentication', () => {
  it('reads a user with a password (the local cloud) and a user with an IAM cache (AWS)', () => {
    // Act
    const password = loadConfig({ ...url, [envVars.redisUser]: 'ringstore-local-l2', [envVars.redisPassword]: 'p' });
    const iam = loadConfig({ ...url, [envVars.redisUser]: 'ringstore-dev-l2', [envVars.redisIamCache]: 'rs-dev-l2-abc' });
    const none = loadConfig(url);

    // Assess
    expect(password.redisAuth).toEqual({ mode: 'password', username: 'ringstore-local-l2', password: 'p' });
    expect(iam.redisAuth).toEqual({ mode: 'iam', username: 'ringstore-dev-l2', cacheName: 'rs-dev-l2-abc' });
    expect(none.redisAuth).toBeUndefined();
  });

  it('refuses half a setting or two of them, naming the variables', () => {
    // Act / Assess
    expect(() => loadConfig({ ...url, [envVars.redisUser]: 'u' })).toThrow(
      `${envVars.redisUser} needs ${envVars.redisPassword} or ${envVars.redisIamCache}`,
    );
    expect(() => loadConfig({ ...url, [envVars.redisPassword]: 'p' })).toThrow(
      `${envVars.redisUser} is required with ${envVars.redisPassword}`,
    );
    expect(() => loadConfig({ ...url, [envVars.redisIamCache]: 'c' })).toThrow(
      `${envVars.redisUser} is required with ${envVars.redisIamCache}`,
    );
    expect(() => loadConfig({ ...url, [envVars.redisUser]: 'u', [envVars.redisPassword]: 'p', [envVars.redisIamCache]: 'c' })).toThrow(
      'two ways to authenticate',
    );
  });
});
