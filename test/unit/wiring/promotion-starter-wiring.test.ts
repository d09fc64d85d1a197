// Which promotion starter a DR backup's handlers get: the host's (local cloud), else Step Functions when the
// configuration names the promotion state machine (AWS), else none; only for handlers that may start one.
import { type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { loadConfig } from '../../../lambdas/config';
import { promotionStarter } from '../../../lambdas/wiring/dr';
import { Wiring } from '../../../lambdas/wiring/wiring';
import { envVars } from '../../../schemas/topology';

const promotionArn = 'arn:aws:states:eu-west-1:000000000000:stateMachine:ringstore-local-drPromotion';
/** A backup region's Lambda environment pointing at a closed port: building must not need an engine. */
const backupEnv = {
  [envVars.dynamodbEndpoint]: 'http://127.0.0.1:9',
  [envVars.drRole]: 'backup',
  AWS_REGION: 'eu-west-1',
};
const request = { id: 'promotion-epoch-0', reason: 'the primary region is down' };

describe('promotionStarter', () => {
  it('starts the named promotion state machine on Step Functions in AWS', async () => {
    // Prepare: the process's Step Functions client is a recording stand-in.
    const sent: StartExecutionCommand[] = [];
    const client = { send: async (command: StartExecutionCommand) => (sent.push(command), {}) } as unknown as SFNClient;
    const host = Wiring.create({ config: loadConfig({ ...backupEnv, [envVars.drPromotionStateMachineArn]: promotionArn }) });
    host.shared('sfn', () => client);

    // Act
    const started = await promotionStarter(host.forHandler('admin'))?.start(request);

    // Assess
    expect(started).toBe(true);
    expect(sent.map((command) => command.input)).toEqual([
      { stateMachineArn: promotionArn, name: request.id, input: JSON.stringify({ promotion: request }) },
    ]);
  });

  it('has none without the state machine, and in a region that is no DR backup', () => {
    expect(promotionStarter(Wiring.create({ config: loadConfig(backupEnv) }).forHandler('admin'))).toBeUndefined();
    const primaryEnv = {
      ...backupEnv,
      [envVars.drRole]: 'primary',
      [envVars.drKeyQueueUrl]: 'https://sqs.eu-west-1.amazonaws.com/000000000000/ringstore-local-dr-keys.fifo',
      [envVars.drBucket]: 'ringstore-local-dr-eu-west-1-000000000000',
      [envVars.drPromotionStateMachineArn]: promotionArn,
    };
    expect(promotionStarter(Wiring.create({ config: loadConfig(primaryEnv) }).forHandler('admin'))).toBeUndefined();
  });

  it("prefers the host's starter (the local cloud runs the same definition in process)", () => {
    const passed = { start: jest.fn() };
    const host = Wiring.create({ config: loadConfig({ ...backupEnv, [envVars.drPromotionStateMachineArn]: promotionArn }) }).with({
      promotions: passed,
    });

    expect(promotionStarter(host.forHandler('admin'))).toBe(passed);
  });

  it('refuses a handler whose spec does not start promotions', () => {
    const host = Wiring.create({ config: loadConfig({ ...backupEnv, [envVars.drPromotionStateMachineArn]: promotionArn }) });

    expect(() => promotionStarter(host.forHandler('kvWrite'))).toThrow(/kvWrite may not start promotions/);
  });
});
