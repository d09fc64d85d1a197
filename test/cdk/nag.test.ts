// cdk-nag (AwsSolutions): no unacknowledged finding, and every acknowledgement is specific and live.
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { nagReasonMinLength } from '../../cdk/constructs/nag';
import { synth } from './support';

interface Acknowledgement {
  path: string;
  id: string;
  reason: string;
}

/** Acknowledgements of AwsSolutions rules (aws-cdk-lib records some of its own, for other validators). */
function acknowledgements(root: IConstruct): Acknowledgement[] {
  const all = root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
  return all.filter((ack) => ack.id.startsWith('AwsSolutions-'));
}

const describeViolations = (report: ReturnType<AwsSolutionsChecks['validateScope']>) =>
  report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));

describe('cdk-nag AwsSolutions', () => {
  // Built once: synthesizing both stacks is the slow part.
  const s = synth();
  s.app.synth();

  it('finds no unacknowledged error or warning', () => {
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(s.app);

    expect(describeViolations(report)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('finds no unacknowledged finding with the customer-managed key (kmsKey=customer) and a DR backup region either', () => {
    const encrypted = synth({ stage: 'cmk', kmsKey: 'customer', drBackupRegion: 'eu-west-1' });
    encrypted.app.synth();

    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(encrypted.app);

    expect(describeViolations(report)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('finds no unacknowledged finding with IAM authorization beside API keys (auth=both: a second, AWS_IAM API)', () => {
    const both = synth({ stage: 'iam', auth: 'both' });
    both.app.synth();

    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(both.app);

    expect(describeViolations(report)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('lets the app synthesize with the checks registered as cdk/app.ts does', () => {
    const other = synth({ stage: 'nagged' });
    Validations.of(other.app).addPlugins(new AwsSolutionsChecks(other.app));

    expect(() => other.app.synth()).not.toThrow();
  });

  it('would catch a violation (the checks run at all)', () => {
    const app = new App();
    const stack = new Stack(app, 'Bare');
    new Bucket(stack, 'Unlogged');

    const report = new AwsSolutionsChecks().validateScope(app);

    expect(report.violations.map((v) => v.ruleName)).toEqual(expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']));
  });

  it('acknowledges only reviewed rules, each with a specific reason', () => {
    const acks = acknowledgements(s.app);
    // AEC6: the L2 cache authenticates by RBAC with IAM, not the AUTH token the rule looks for;
    // SQS3: the stream failure queue is itself a dead-letter destination.
    const reviewed = ['AEC6', 'APIG3', 'APIG4', 'COG4', 'IAM4', 'IAM5', 'L1', 'SQS3'].map((rule) => `AwsSolutions-${rule}`);

    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(reviewed).toContain(ack.id.replace(/\[.*\]$/, ''));
      expect(ack.reason.length).toBeGreaterThanOrEqual(nagReasonMinLength);
    }
  });

  it('acknowledges nothing that is not actually found (no stale acknowledgements)', () => {
    // Prepare: the same checks, blind to acknowledgements.
    const blind = new AwsSolutionsChecks(undefined, { verbose: false });
    (blind as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;

    // Act
    const found = blind
      .validateScope(s.app)
      .violations.flatMap((v) => v.violatingResources.map((r) => ({ id: v.ruleName, path: r.constructPath ?? '' })));

    // Assess: each acknowledgement covers at least one finding at or below where it was made.
    for (const ack of acknowledgements(s.app)) {
      const covered = found.some((f) => f.id === ack.id && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)));
      expect({ ack: `${ack.id} at ${ack.path}`, covered }).toEqual({ ack: `${ack.id} at ${ack.path}`, covered: true });
    }
  });
});
