// The CDK app (`npx cdk synth`): one Ringstore deployment per stage, checked by cdk-nag on every synth.
//
// Stacks are environment-agnostic: nothing here needs a lookup, so the template is the same with or
// without AWS credentials, and `cdk deploy` places it in the account and region of the credentials.
// The stage defaults to topology's `defaults.stage` ("local"), the one the local cloud and LocalStack
// use; a deployment to AWS names its stage: `npx cdk deploy --all -c stage=dev`.
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { parseConfig, readContext } from './stacks/config';
import { addRingstore } from './stacks/ringstore';

const app = new App();
// The CLI sets CDK_DEFAULT_REGION to the region of the credentials, where these stacks deploy: a DR backup
// region (-c drBackupRegion) must be another one.
const config = parseConfig(
  readContext((key): unknown => app.node.tryGetContext(key)),
  { region: process.env.CDK_DEFAULT_REGION },
);
addRingstore(app, config);

// Any unacknowledged finding fails the synth; `-c nag=false` skips the checks for a quick iteration.
const nag: unknown = app.node.tryGetContext('nag');
if (nag !== false && nag !== 'false') {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
}
