// The promotion starter on Step Functions: one execution per promotion id, with the input the promotion
// state machine reads; a second start is a no-op; other errors are Ringstore errors.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { SfnPromotionStarter } from '../../../lambdas/adapters/sfn-promotion-starter';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { stateMachines } from '../../../schemas/topology';

const arn = 'arn:aws:states:eu-west-1:000000000000:stateMachine:ringstore-local-drPromotion';
const request = { id: 'promotion-epoch-0', reason: 'us-east-1 is down' };

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

describe('SfnPromotionStarter', () => {
  it('starts one execution named by the promotion id, with the request as its input; a second start is a no-op', async () => {
    // Prepare
    const { client, sent } = fakeClient();
    const starter = new SfnPromotionStarter(client, arn);

    // Act
    const first = await starter.start(request);
    const second = await starter.start(request);

    // Assess
    expect([first, second]).toEqual([true, false]);
    expect(sent[0]).toBeInstanceOf(StartExecutionCommand);
    expect(sent[0]!.input).toEqual({ stateMachineArn: arn, name: request.id, input: JSON.stringify({ promotion: request }) });
  });

  it("starts the workflow with what each of its steps reads: the input's `promotion`", async () => {
    const { client, sent } = fakeClient();
    await new SfnPromotionStarter(client, arn).start(request);
    const definition = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', stateMachines.drPromotion.definitionFile), 'utf8')) as {
      States: Record<string, { Type: string; Parameters?: Record<string, string> }>;
    };
    const input = JSON.parse(sent[0]!.input.input!) as Record<string, unknown>;

    const tasks = Object.values(definition.States).filter((state) => state.Type === 'Task');
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) expect(task.Parameters?.['promotion.$']).toBe('$.promotion');
    expect(input.promotion).toEqual(request);
  });

  it('answers any other Step Functions error as a Ringstore error', async () => {
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    const { client } = fakeClient(throttled);

    const error = await new SfnPromotionStarter(client, arn).start(request).catch((caught: unknown) => caught);

    expect(isRingstoreError(error)).toBe(true);
  });
});
