// PromotionStarter on AWS Step Functions: one execution of a DR backup's Standard promotion state machine,
// named by the promotion's id, so that asking twice for the same promotion runs it once.
import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { PromotionRequest, PromotionStarter } from '../ports';
import { translateAwsError } from './aws-errors';

export class SfnPromotionStarter implements PromotionStarter {
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: string,
  ) {}

  async start(request: PromotionRequest): Promise<boolean> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name: request.id,
          // schemas/dr-promotion-state-machine.asl.json hands `$.promotion` to every step.
          input: JSON.stringify({ promotion: request }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ExecutionAlreadyExists) return false;
      throw translateAwsError(error, `promotion ${request.id}`);
    }
  }
}
