// KeyQueueProbe on the backup region's SQS FIFO key queue: the promotion drains it before opening the region.
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { KeyQueueProbe } from '../ports';
import { awsCall } from './aws-errors';

export class SqsKeyQueueProbe implements KeyQueueProbe {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async depth(): Promise<{ waiting: number; inFlight: number }> {
    const { Attributes = {} } = await awsCall('key queue depth', () =>
      this.client.send(
        new GetQueueAttributesCommand({
          QueueUrl: this.queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      ),
    );
    const count = (name: string) => Number(Attributes[name as keyof typeof Attributes] ?? 0);
    return {
      waiting: count('ApproximateNumberOfMessages') + count('ApproximateNumberOfMessagesDelayed'),
      inFlight: count('ApproximateNumberOfMessagesNotVisible'),
    };
  }
}
