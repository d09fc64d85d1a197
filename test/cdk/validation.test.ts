// CloudFormation's template validation on every configuration the cdk project synthesizes (test/cdk/setup.ts
// turns it off in the other files). cdk.json's `@aws-cdk/core:validateAgainstDefaultRules` makes a finding fail
// the synthesis, as it does in `cdk synth`.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CfnResource, Stack } from 'aws-cdk-lib';
import { shardCountMax, type RingstoreConfigInput } from '../../cdk/stacks/config';
import { newApp, synth } from './support';

process.env['CDK_VALIDATION'] = 'true';

interface ValidationReport {
  pluginReports: { summary?: { status?: string }; violations?: unknown[] }[];
}

/** Synthesizes the app and returns its validation report: written only when validation ran. */
function validationReportOf(app: ReturnType<typeof newApp>): ValidationReport {
  const assembly = app.synth();
  const reportFile = join(assembly.directory, 'validation-report.json');
  expect(existsSync(reportFile)).toBe(true);
  return JSON.parse(readFileSync(reportFile, 'utf8')) as ValidationReport;
}

// One configuration per set of resources: the validation's rules go by resource type, so configurations that
// only change property values (a stage name, a node type, rate limits) add nothing it would check differently.
const configurations: [string, Partial<RingstoreConfigInput>][] = [
  ['the defaults', {}],
  ['IAM and API-key auth with API rate limits', { auth: 'both', apiRateLimitPerSecond: '50', apiBurstLimit: '80' }],
  ['a customer-managed key with a DR backup region', { stage: 'cmk', kmsKey: 'customer', drBackupRegion: 'eu-west-1' }],
  [
    'the largest ring and longest stage name, automatic failover off',
    { stage: 'a-twenty-char-stage1', shardCount: shardCountMax, replicationFactor: 3, autoFailover: false },
  ],
];

describe('CloudFormation template validation', () => {
  test.each(configurations)('%s: every stack passes', (_name, input) => {
    const report = validationReportOf(synth(input).app);
    const violations = report.pluginReports.flatMap((plugin) => plugin.violations ?? []);
    expect(violations).toEqual([]);
  });

  test('a template CloudFormation would refuse fails the synthesis (the validation is on)', () => {
    const app = newApp();
    const stack = new Stack(app, 'broken');
    new CfnResource(stack, 'Table', { type: 'AWS::DynamoDB::Table', properties: { BillingMode: 'NOT_A_MODE' } });
    expect(() => app.synth()).toThrow(/'KeySchema' is a required property \(CloudFormation Validate\)/);
  });
});
