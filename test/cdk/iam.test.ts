// Least privilege: each handler's role reaches exactly the data its HandlerSpec declares.
import {
  defaults,
  handlers,
  namesFor,
  rateBucketPartitionPrefix,
  apiKeyPartition,
  apiKeyUseAttribute,
  stateMachines,
  txnSchema,
  type HandlerSpec,
  type RegionHandlerName,
} from '../../schemas/topology';
import { handlerNames } from '../../cdk/stacks/api-stack';
import { shardCountMax } from '../../cdk/stacks/config';
import {
  dynamoWriteActions,
  s3WriteActions,
  streamListAction,
  streamReadActions,
  failoverStartActions,
  rateBucketActions,
  rebalanceStartActions,
  startsFailovers,
  transactionStartActions,
} from '../../cdk/constructs/access';
import {
  asArray,
  defaultSamples,
  logicalIdOf,
  policiesOfRole,
  render,
  shardStreamOutputs,
  statementsOfRole,
  streamArnSamples,
  synth,
  txnStreamOutput,
  type Statement,
  type Synthesized,
} from './support';

const account = '123456789012';
const names = namesFor(defaults.stage, account);
const shardArn = new RegExp(`:table/${names.prefix}-shard-\\d+(/index/[A-Za-z]+)?$`);
const controlArn = new RegExp(`:table/${names.controlTable}$`);
const hintsArn = new RegExp(`:table/${names.hintsTable}$`);
const txnArn = new RegExp(`:table/${names.txnTable}(/index/[A-Za-z]+)?$`);
const feedArn = new RegExp(`:table/${names.feedTable}$`);
const txnIndexArn = new RegExp(`:table/${names.txnTable}/index/${txnSchema.deadlineIndex.name}$`);
const streamArn = new RegExp(`:table/(${names.prefix}-shard-\\d+|${names.txnTable})/stream/[^/*]+$`);
const streamActions: string[] = [...streamReadActions, streamListAction];
const bucketArn = new RegExp(`^arn:aws:s3:::${names.blobBucket}(/.*)?$`);

interface Grant {
  actions: string[];
  resources: string[];
  conditions?: Record<string, Record<string, unknown>>;
}

/** The rate buckets' grant: updates of the control table's `rate#*` partitions only (docs/security.md, "Quotas"). */
const isRateBucketGrant = (grant: Grant) =>
  JSON.stringify(grant.conditions) ===
  JSON.stringify({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${rateBucketPartitionPrefix}*`] } });

/** The authorizer's grant: the last-use attribute of API key items, nothing else (docs/security.md, "Key rotation and expiry"). */
const keyUseConditions = {
  'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [apiKeyPartition], 'dynamodb:Attributes': ['pk', 'sk', apiKeyUseAttribute] },
  StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
};
const isKeyUseGrant = (grant: Grant) => JSON.stringify(grant.conditions) === JSON.stringify(keyUseConditions);
/** Writes of a few partitions or attributes that a handler otherwise reading the control table may make. */
const isNarrowControlGrant = (grant: Grant) => isRateBucketGrant(grant) || isKeyUseGrant(grant);

function grantsOf(s: Synthesized, handler: RegionHandlerName): Grant[] {
  return grantsOfRole(s, logicalIdOf(s.api, s.api.functions[handler].role));
}

function grantsOfRole(s: Synthesized, roleId: string): Grant[] {
  return statementsOfRole(s.apiTemplate, roleId)
    .filter((statement: Statement) => statement.Effect === 'Allow')
    .map((statement) => ({
      actions: asArray(statement.Action),
      resources: asArray(statement.Resource).map((resource) => render(resource, defaultSamples, streamArnSamples(s))),
      ...(statement.Condition ? { conditions: statement.Condition } : {}),
    }));
}

const touches = (grants: Grant[], pattern: RegExp) => grants.filter((g) => g.resources.some((r) => pattern.test(r)));
const actionsOn = (grants: Grant[], pattern: RegExp) => touches(grants, pattern).flatMap((g) => g.actions);
const isWrite = (action: string) => (dynamoWriteActions as readonly string[]).includes(action);
/** How the transaction state machine appears in a rendered policy: its Ref, which is its ARN. */
const stateMachineRef = (s: Synthesized) => `<${logicalIdOf(s.api, s.api.transactions.stateMachine)}>`;
/** The same for the failover state machine. */
const failoverMachineRef = (s: Synthesized) => `<${logicalIdOf(s.api, s.api.failovers.stateMachine)}>`;
const rebalanceMachineRef = (s: Synthesized) => `<${logicalIdOf(s.api, s.api.rebalances.stateMachine)}>`;

describe('IAM least privilege', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth();
  });

  describe.each(handlerNames.map((name) => [name, handlers[name]] as [RegionHandlerName, HandlerSpec]))('%s', (name, spec) => {
    it(`reaches the shard tables only as "${spec.shardTables}"`, () => {
      const grants = grantsOf(s, name);
      const actions = actionsOn(grants, shardArn);

      if (spec.shardTables === 'none') {
        expect(touches(grants, shardArn)).toEqual([]);
        return;
      }
      const tables = new Set(
        touches(grants, shardArn)
          .flatMap((g) => g.resources)
          .filter((r) => shardArn.test(r)),
      );
      for (let shardId = 0; shardId < defaults.shardCount; shardId++) {
        expect([...tables].some((r) => r.endsWith(`:table/${names.shardTable(shardId)}`))).toBe(true);
      }
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
      if (spec.shardTables === 'read') {
        for (const write of dynamoWriteActions) expect(actions).not.toContain(write);
      } else {
        expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']));
      }
    });

    it(`reaches the control table only as "${spec.controlTable}"`, () => {
      const grants = grantsOf(s, name);
      const actions = actionsOn(grants, controlArn);

      if (spec.controlTable === 'none') {
        expect(touches(grants, controlArn)).toEqual([]);
      } else if (spec.controlTable === 'read') {
        expect(actions).toContain('dynamodb:GetItem');
        // Beyond reads, a rate-limited handler updates its namespaces' rate buckets, and nothing else.
        const writes = actionsOn(
          grantsOf(s, name).filter((grant) => !isNarrowControlGrant(grant)),
          controlArn,
        );
        for (const write of dynamoWriteActions) expect(writes).not.toContain(write);
      } else {
        expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem']));
      }
    });

    it(`reaches the blob bucket only as "${spec.blobBucket}"`, () => {
      const grants = grantsOf(s, name);
      const actions = actionsOn(grants, bucketArn);

      if (spec.blobBucket === 'none') {
        expect(touches(grants, bucketArn)).toEqual([]);
      } else if (spec.blobBucket === 'read') {
        expect(actions).toContain('s3:GetObject');
        for (const write of s3WriteActions) expect(actions).not.toContain(write);
      } else {
        expect(actions).toEqual(expect.arrayContaining(['s3:GetObject', 's3:PutObject']));
      }
    });

    it(`reaches the hints table only as "${spec.hintsTable}"`, () => {
      const grants = grantsOf(s, name);
      const actions = actionsOn(grants, hintsArn);

      if (spec.hintsTable === 'none') {
        expect(touches(grants, hintsArn)).toEqual([]);
      } else if (spec.hintsTable === 'read') {
        expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
        for (const write of dynamoWriteActions) expect(actions).not.toContain(write);
      } else {
        expect(actions).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:DeleteItem']));
      }
    });

    it(`reaches the transaction table only as "${spec.txnTable ?? 'none'}"`, () => {
      const grants = grantsOf(s, name);
      const actions = actionsOn(grants, txnArn);

      if ((spec.txnTable ?? 'none') === 'none') {
        expect(touches(grants, txnArn)).toEqual([]);
        return;
      }
      // The sweeper's walk is a Query on the deadline index, granted on that index's ARN, Query only.
      const onIndex = touches(grants, txnIndexArn);
      expect(onIndex.flatMap((g) => g.actions)).toEqual(['dynamodb:Query']);
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
      if (spec.txnTable === 'read') {
        expect(actions.filter(isWrite)).toEqual([]);
      } else {
        expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem']));
      }
    });

    it(`reaches the feed table only as "${spec.feedTable ?? 'none'}"`, () => {
      const grants = grantsOf(s, name);
      const actions = actionsOn(grants, feedArn);

      if ((spec.feedTable ?? 'none') === 'none') {
        expect(touches(grants, feedArn)).toEqual([]);
      } else if (spec.feedTable === 'read') {
        expect(actions).toEqual(expect.arrayContaining(['dynamodb:Query']));
        expect(actions.filter(isWrite)).toEqual([]);
      } else {
        expect(actions).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:BatchWriteItem']));
      }
    });

    // Automatic failover is on by default: the handlers that mark shards down may start a failover too.
    const failovers = startsFailovers(spec, { autoFailover: true });
    const starts = [
      ...(spec.startsTransactions ? ['synchronous executions of the transaction state machine'] : []),
      ...(failovers ? ['executions of the failover state machine'] : []),
      ...(spec.startsRebalances ? ['executions of the rebalance state machine'] : []),
    ];
    it(`starts ${starts.length > 0 ? `${starts.join(' and ')} only` : 'no state machine'}`, () => {
      // As action-resource pairs: CDK merges statements of one action into one with several resources.
      const pairs = (grants: Array<{ actions: readonly string[]; resources: readonly string[] }>) =>
        grants.flatMap((g) => g.actions.flatMap((action) => g.resources.map((resource) => `${action} ${resource}`))).sort();
      const stateGrants = grantsOf(s, name).filter((g) => g.actions.some((a) => a.startsWith('states:')));

      expect(pairs(stateGrants)).toEqual(
        pairs([
          ...(spec.startsTransactions ? [{ actions: [...transactionStartActions], resources: [stateMachineRef(s)] }] : []),
          ...(failovers ? [{ actions: [...failoverStartActions], resources: [failoverMachineRef(s)] }] : []),
          ...(spec.startsRebalances ? [{ actions: [...rebalanceStartActions], resources: [rebalanceMachineRef(s)] }] : []),
        ]),
      );
    });

    const readsStreams = spec.shardStreams === true || spec.txnStream === true;
    const streamsRead = `${spec.shardStreams ? 'every shard stream' : ''}${spec.txnStream ? 'the transaction table stream' : ''}`;
    it(`reads ${readsStreams ? `${streamsRead}, and nothing else` : 'no stream at all'}`, () => {
      const grants = grantsOf(s, name);
      const withStreamActions = grants.filter((g) => g.actions.some((a) => streamActions.includes(a)));

      if (!readsStreams) {
        expect(withStreamActions).toEqual([]);
        return;
      }
      // Reading: exactly its streams, each by its full ARN.
      const readGrants = grants.filter((g) => g.actions.some((a) => (streamReadActions as readonly string[]).includes(a)));
      const readResources = new Set(readGrants.flatMap((g) => g.resources));
      const expected = [...(spec.shardStreams ? shardStreamOutputs(s) : []), ...(spec.txnStream ? [txnStreamOutput(s)] : [])];
      expect([...readResources].sort()).toEqual(expected.map((o) => o.arn).sort());
      for (const grant of readGrants) expect(grant.actions.sort()).toEqual([...streamReadActions].sort());
      // Listing: on "*" only (ListStreams has no resource-level permission; CDK may merge it with the
      // other "*" actions into one statement).
      const listGrants = grants.filter((g) => g.actions.includes(streamListAction));
      expect(listGrants.length).toBeGreaterThan(0);
      for (const grant of listGrants) expect(grant.resources).toEqual(['*']);
    });

    it(`sends to a stream failure queue ${readsStreams ? 'of its own only' : 'never'}`, () => {
      const sqsGrants = grantsOf(s, name).filter((g) => g.actions.some((a) => a.startsWith('sqs:')));

      if (!readsStreams) {
        expect(sqsGrants).toEqual([]);
        return;
      }
      const queueId = logicalIdOf(s.api, s.api.shardStreams[name]!.failures);
      expect(sqsGrants.flatMap((g) => g.actions)).toContain('sqs:SendMessage');
      for (const grant of sqsGrants) expect(grant.resources).toEqual([`<${queueId}.Arn>`]);
    });

    it('reaches no other data and uses no action wildcards', () => {
      const grants = grantsOf(s, name);

      for (const grant of grants) {
        for (const action of grant.actions) expect(action).not.toContain('*');
        const dataActions = grant.actions.filter((a) => (a.startsWith('dynamodb:') && a !== streamListAction) || a.startsWith('s3:'));
        if (dataActions.length === 0) continue;
        for (const resource of grant.resources) {
          expect([shardArn, controlArn, hintsArn, txnArn, feedArn, streamArn, bucketArn].some((pattern) => pattern.test(resource))).toBe(
            true,
          );
        }
      }
      // "*" only where AWS offers no resource-level permission: Lambda's VPC ENIs, X-Ray, and (stream
      // readers only) listing streams.
      const star = grants.filter((g) => g.resources.includes('*')).flatMap((g) => g.actions);
      const allowed = readsStreams
        ? /^(ec2:(Create|Describe|Delete|Assign|Unassign)[A-Za-z]+|xray:Put[A-Za-z]+|dynamodb:ListStreams)$/
        : /^(ec2:(Create|Describe|Delete|Assign|Unassign)[A-Za-z]+|xray:Put[A-Za-z]+)$/;
      for (const action of star) expect(action).toMatch(allowed);
    });
  });

  it('gives the docs handler no DynamoDB or S3 action at all', () => {
    const actions = grantsOf(s, 'docs').flatMap((g) => g.actions);

    expect(actions.filter((a) => a.startsWith('dynamodb:') || a.startsWith('s3:'))).toEqual([]);
  });

  it('grants read-only handlers nothing that writes, anywhere', () => {
    const readOnly = handlerNames.filter((name) =>
      [
        handlers[name].shardTables,
        handlers[name].controlTable,
        handlers[name].hintsTable,
        handlers[name].blobBucket,
        handlers[name].txnTable ?? 'none',
        handlers[name].feedTable ?? 'none',
      ].every((a) => a !== 'readWrite'),
    );
    expect(readOnly.length).toBeGreaterThan(0);

    for (const name of readOnly) {
      const actions = grantsOf(s, name)
        .filter((grant) => !isNarrowControlGrant(grant))
        .flatMap((g) => g.actions);
      expect(actions.filter((a) => (dynamoWriteActions as readonly string[]).includes(a))).toEqual([]);
      expect(actions.filter((a) => (s3WriteActions as readonly string[]).includes(a))).toEqual([]);
    }
  });

  it('lets the rate-limited handlers without control-table writes update the rate buckets, with that one action, under that condition', () => {
    const bucketGrants = handlerNames.flatMap((name) =>
      grantsOf(s, name)
        .filter(isRateBucketGrant)
        .map((grant) => ({ name, grant })),
    );

    expect(bucketGrants.map(({ name }) => name).sort()).toEqual(
      handlerNames.filter((name) => handlers[name].rateLimited && handlers[name].controlTable !== 'readWrite').sort(),
    );
    expect(bucketGrants.map(({ name }) => name)).toEqual(expect.arrayContaining(['kvRead', 'ring']));
    for (const { grant } of bucketGrants) {
      expect(grant.actions).toEqual([...rateBucketActions]);
      expect(grant.resources.every((resource) => controlArn.test(resource))).toBe(true);
    }
  });

  it('lets only the authorizer write API key items, and only their last use', () => {
    const useGrants = handlerNames.flatMap((name) =>
      grantsOf(s, name)
        .filter(isKeyUseGrant)
        .map((grant) => ({ name, grant })),
    );

    expect(useGrants.map(({ name }) => name)).toEqual(['authorizer']);
    expect(useGrants[0]!.grant.actions).toEqual(['dynamodb:UpdateItem']);
    expect(useGrants[0]!.grant.resources.every((resource) => controlArn.test(resource))).toBe(true);
  });

  describe('transactions', () => {
    it('lets only the transaction steps, the sweeper, the KV handlers, the one-shard path of the txn handler and the admin’s DR restore (which resolve the intents they meet), the failover (which settles a failed owner’s transactions), the rebalance (which settles those of a range it cuts over) and the volumes (whose writes across two shards run two-phase commit in the handler) write the transaction table', () => {
      const writers = handlerNames.filter((name) => actionsOn(grantsOf(s, name), txnArn).some(isWrite));

      expect(writers.sort()).toEqual([
        'admin',
        'failoverStep',
        'kvRead',
        'kvWrite',
        'rebalanceStep',
        'txn',
        'txnStep',
        'txnSweeper',
        'volumes',
      ]);
    });

    it('lets the admin handler and, with automatic failover on, the handlers that find shards down start a failover', () => {
      const starters = handlerNames.filter((name) => grantsOf(s, name).some((g) => g.resources.includes(failoverMachineRef(s))));

      expect(starters).toEqual(handlerNames.filter((name) => handlers[name].startsFailovers || handlers[name].startsAutomaticFailovers));
      expect(starters).toEqual(expect.arrayContaining(['admin', 'kvWrite', 'maintenance', 'replicator']));
      expect(starters).not.toContain('authorizer');
    });

    it('lets only the admin handler start a failover with automatic failover off, and tells every handler it is off', () => {
      const off = synth({ autoFailover: false });
      const starters = handlerNames.filter((name) => grantsOf(off, name).some((g) => g.resources.includes(failoverMachineRef(off))));

      expect(starters).toEqual(['admin']);
      const flags = Object.values(off.apiTemplate.findResources('AWS::Lambda::Function'))
        .map((fn) => (fn as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties.Environment?.Variables)
        .filter((variables) => variables?.RINGSTORE_STAGE !== undefined)
        .map((variables) => variables?.RINGSTORE_AUTO_FAILOVER);
      expect(flags).toHaveLength(handlerNames.length);
      expect(new Set(flags)).toEqual(new Set(['0']));
    });

    it('lets only the handlers whose spec says startsTransactions start the state machine, the txn handler among them', () => {
      const starters = handlerNames.filter((name) => grantsOf(s, name).some((g) => g.resources.includes(stateMachineRef(s))));

      expect(starters).toEqual(handlerNames.filter((name) => handlers[name].startsTransactions));
      expect(starters).toContain('txn');
    });

    it.each(['transaction', 'failover'] as const)('lets the %s state machine invoke its task function and nothing else', (machine) => {
      const { taskHandler } = stateMachines[machine];
      const taskFn = logicalIdOf(s.api, s.api.functions[taskHandler].function);
      const roleId = logicalIdOf(s.api, (machine === 'transaction' ? s.api.transactions : s.api.failovers).stateMachine.role);

      const grants = grantsOfRole(s, roleId);

      const invokes = grants.filter((g) => g.actions.some((a) => a.startsWith('lambda:')));
      expect(invokes).toEqual([{ actions: ['lambda:InvokeFunction'], resources: [`<${taskFn}.Arn>`] }]);
      // Everything else is log delivery and tracing, which IAM grants on "*" only; no data at all.
      const logDeliveryOrTracing =
        /^(logs:[A-Za-z]+Log(Delivery|Deliveries|Groups)|logs:(Put|Describe)ResourcePolic(y|ies)|xray:[A-Za-z]+)$/;
      for (const grant of grants.filter((g) => !invokes.includes(g))) {
        expect(grant.resources).toEqual(['*']);
        for (const action of grant.actions) expect(action).toMatch(logDeliveryOrTracing);
      }
    });

    it('gives the task function no route: only Step Functions invokes it', () => {
      const tasks = handlerNames.filter((name) => handlers[name].stateMachineTask);
      const permissions = Object.values(s.apiTemplate.findResources('AWS::Lambda::Permission'));

      for (const name of tasks) {
        const fnId = logicalIdOf(s.api, s.api.functions[name].function);
        const onIt = permissions.filter((p) => JSON.stringify(p.Properties.FunctionName).includes(fnId));
        expect(onIt).toEqual([]);
      }
    });
  });

  it(`keeps every role within IAM's policy size limits at shardCount=${shardCountMax}`, () => {
    // Prepare: the longest names a deployment can have.
    const big = synth({ stage: 'a-twenty-char-stage1', shardCount: shardCountMax, replicationFactor: 3 });
    const samples = { 'AWS::Partition': 'aws-us-gov', 'AWS::Region': 'us-gov-west-1', 'AWS::AccountId': account };
    const streams = streamArnSamples(big, samples);

    for (const name of handlerNames) {
      // Act: each document as IAM stores it, tokens resolved, without whitespace.
      const roleId = logicalIdOf(big.api, big.api.functions[name].role);
      const documents = policiesOfRole(big.apiTemplate, roleId).map(({ kind, statements }) => ({
        kind,
        size: JSON.stringify({
          Version: '2012-10-17',
          Statement: statements.map((st) => ({ ...st, Resource: asArray(st.Resource).map((r) => render(r, samples, streams)) })),
        }).length,
      }));

      // Assess: inline policies share 10,240 characters per role; each managed policy has 6,144,
      // and a role holds at most 10 managed policies (default quota).
      const inline = documents.filter((d) => d.kind === 'inline').reduce((sum, d) => sum + d.size, 0);
      const managed = documents.filter((d) => d.kind === 'managed');
      expect(inline).toBeLessThan(10_240);
      for (const document of managed) expect(document.size).toBeLessThan(6_144);
      expect(managed.length).toBeLessThanOrEqual(10);
    }
    // The shard grants did not silently go missing on the way.
    const kvWrite = statementsOfRole(big.apiTemplate, logicalIdOf(big.api, big.api.functions.kvWrite.role));
    const resources = new Set(kvWrite.flatMap((st) => asArray(st.Resource).map((r) => render(r))));
    const bigShardArn = /:table\/ringstore-a-twenty-char-stage1-shard-\d+(\/index\/[A-Za-z]+)?$/;
    expect([...resources].filter((r) => bigShardArn.test(r))).toHaveLength(shardCountMax * 3);
    // Nor the stream grants of the stream readers.
    for (const name of handlerNames.filter((n) => handlers[n].shardStreams)) {
      const statements = statementsOfRole(big.apiTemplate, logicalIdOf(big.api, big.api.functions[name].role));
      const streamResources = new Set(
        statements
          .filter((st) => asArray(st.Action).includes('dynamodb:GetRecords'))
          .flatMap((st) => asArray(st.Resource).map((r) => render(r, samples, streams))),
      );
      const shardStreams = Object.values(streams).filter((arn) => !arn.includes('-txn/stream/'));
      expect([...streamResources].sort()).toEqual(shardStreams.sort());
      expect(streamResources.size).toBe(shardCountMax);
    }
  });
});
