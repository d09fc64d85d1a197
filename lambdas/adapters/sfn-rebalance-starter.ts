// RebalanceStarter on Step Functions: one execution per run of a rebalance (its start, and each resume),
// named by the run so that a retried start does not run it twice.
import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { RebalanceStarter } from '../ports';
import { translateAwsError } from './aws-errors';

export class SfnRebalanceStarter implements RebalanceStarter {
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: string,
  ) {}

  async start(input: { id: string; run: string }): Promise<boolean> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name: input.run,
          input: JSON.stringify({ rebalance: { id: input.id } }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ExecutionAlreadyExists) return false;
      throw translateAwsError(error, `rebalance ${input.id}`);
    }
  }
}
