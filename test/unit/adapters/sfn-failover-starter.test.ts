// The failover starter on Step Functions: one execution per failover id, a second start is a no-op.
import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { SfnFailoverStarter } from '../../../lambdas/adapters/sfn-failover-starter';
import { isRingstoreError } from '../../../lambdas/core/errors';

const arn = 'arn:aws:states:us-east-1:000000000000:stateMachine:ringstore-local-failover';
const request = { id: 'shard-1-epoch-3', shard: 1, reason: 'test', requestedAtMs: 5 };

/** A client whose send answers as Step Functions would: each execution name once. */
function fakeClient(failure?: Error) {
  const names = new Set<string>();
  const sent: StartExecutionCommand[] = [];
  const client = {
    send: async (command: StartExecutionCommand) => {
      sent.push(command);
      if (failure) throw failure;
      if (names.has(command.input.name!)) throw new ExecutionAlreadyExists({ message: 'exists', $metadata: {} });
      names.add(command.input.name!);
      return { executionArn: `${arn}:${command.input.name}` };
    },
  };
  return { client: client as unknown as SFNClient, sent };
}

describe('SfnFailoverStarter', () => {
  it('starts one execution named by the failover id, with the request as its input; a second start is a no-op', async () => {
    const { client, sent } = fakeClient();
    const starter = new SfnFailoverStarter(client, arn);
    expect(await starter.start(request)).toBe(true);
    expect(await starter.start(request)).toBe(false);
    expect(sent[0]).toBeInstanceOf(StartExecutionCommand);
    expect(sent[0]!.input).toEqual({ stateMachineArn: arn, name: request.id, input: JSON.stringify({ failover: request }) });
  });

  it('answers any other Step Functions error as a Ringstore error', async () => {
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    const { client } = fakeClient(throttled);
    const error = await new SfnFailoverStarter(client, arn).start(request).catch((caught: unknown) => caught);
    expect(isRingstoreError(error)).toBe(true);
  });
});
