// FailoverStarter on AWS Step Functions: one execution of the Standard failover state machine, named by
// the failover's id, so that starting the same failover twice runs it once (execution names are unique).
import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { FailoverRequest, FailoverStarter } from '../ports';
import { translateAwsError } from './aws-errors';

export class SfnFailoverStarter implements FailoverStarter {
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: string,
  ) {}

  async start(request: FailoverRequest): Promise<boolean> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name: request.id,
          input: JSON.stringify({ failover: request }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ExecutionAlreadyExists) return false;
      throw translateAwsError(error, `failover ${request.id}`);
    }
  }
}
