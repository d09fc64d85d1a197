// The local Step Functions: runs the same ASL file CDK deploys (schemas/) with aws-local-stepfunctions,
// every Task state mapped to the in-process handler that Lambda runs in AWS.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import * as z from 'zod';
import { outcomeUnknown } from '../../lambdas/adapters/sfn-orchestrator';
import type {
  FailoverRequest,
  FailoverStarter,
  Orchestrator,
  PromotionRequest,
  PromotionStarter,
  RebalanceStarter,
  TxnExecution,
  TxnOutcome,
} from '../../lambdas/ports';
import { stateMachines, type StateMachineName } from '../../schemas/topology';
import { lambdaContext } from './lambda-events';

// aws-local-stepfunctions 3 uses Promise.withResolvers (Node 22); Node 20 lacks it.
const promiseStatics = Promise as unknown as { withResolvers?: () => unknown };
promiseStatics.withResolvers ??= function withResolvers<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

type TaskHandler = (event: never, context: Context) => Promise<unknown>;

/** Retries wait this long locally (the definition's 1 s minimum is for AWS). */
const localRetryIntervalMs = 20;

/** The part of an ASL definition that names its states, Map iterators and Parallel branches included. */
interface StateTree {
  States: Record<string, { Type: string; Iterator?: StateTree; Branches?: StateTree[] }>;
}

const StateTree: z.ZodType<StateTree> = z.lazy(() =>
  z.object({
    States: z.record(z.string(), z.object({ Type: z.string(), Iterator: StateTree.optional(), Branches: z.array(StateTree).optional() })),
  }),
);

export function taskStateNames(definition: StateTree): string[] {
  return Object.entries(definition.States).flatMap(([name, state]) => [
    ...(state.Type === 'Task' ? [name] : []),
    ...(state.Iterator ? taskStateNames(state.Iterator) : []),
    ...(state.Branches ?? []).flatMap(taskStateNames),
  ]);
}

/** A state machine's ASL definition as the local cloud runs it: its Task resource named as a local Lambda. */
export function localDefinitionOf(machineName: StateMachineName, root: string): StateMachineDefinition {
  const { definitionFile, taskHandler, taskArnSubstitution } = stateMachines[machineName];
  // The file names its Lambda as a CDK definition substitution; locally every Task runs in process.
  const text = readFileSync(join(root, definitionFile), 'utf8').replaceAll(
    `\${${taskArnSubstitution}}`,
    `arn:aws:lambda:us-east-1:000000000000:function:ringstore-local-${taskHandler}`,
  );
  return JSON.parse(text) as StateMachineDefinition;
}

/** A state machine of schemas/ with every Task mapped to one in-process handler (as Lambda runs it in AWS). */
function localMachine(machineName: StateMachineName, handler: TaskHandler, root: string) {
  const { taskHandler } = stateMachines[machineName];
  const definition = localDefinitionOf(machineName, root);
  const names = taskStateNames(StateTree.parse(definition));
  // Not validated here: the library's validation (asl-validator, a JSON schema compiled by ajv) costs about
  // a second of CPU per machine and cloud start. test/unit/local/state-machines.test.ts validates every definition
  // as it is run here, and CloudFormation validates them at deploy.
  const machine = new StateMachine(definition, { validationOptions: { noValidate: true } });
  const invoke = (input: unknown) => handler(input as never, lambdaContext(taskHandler)) as Promise<never>;
  const taskResourceLocalHandlers = Object.fromEntries(names.map((name) => [name, invoke]));
  const retryIntervalOverrides = Object.fromEntries(names.map((name) => [name, localRetryIntervalMs]));
  return (input: unknown) => machine.run(input as never, { overrides: { taskResourceLocalHandlers, retryIntervalOverrides } });
}

/**
 * Runs of a workflow in the background, at most one per id (as a Step Functions execution name is
 * unique): starting one that exists is a no-op. `settled()` waits for every run started so far.
 */
function backgroundRuns<Request extends { id: string }>(
  machineName: StateMachineName,
  handler: TaskHandler,
  root: string,
  inputOf: (request: Request) => unknown,
): { start(request: Request): Promise<boolean>; settled(): Promise<void> } {
  const run = localMachine(machineName, handler, root);
  const started = new Map<string, Promise<void>>();
  return {
    async start(request: Request): Promise<boolean> {
      if (started.has(request.id)) return false;
      // A failed run has recorded itself (its Abort state); the rejection is only the machine's Fail state.
      started.set(
        request.id,
        run(inputOf(request)).result.then(
          () => undefined,
          () => undefined,
        ),
      );
      return true;
    },
    async settled(): Promise<void> {
      await Promise.all(started.values());
    },
  };
}

export function localFailoverStarter(handler: TaskHandler, root: string): FailoverStarter & { settled(): Promise<void> } {
  return backgroundRuns<FailoverRequest>('failover', handler, root, (failover) => ({ failover }));
}

/** Rebalances (docs/rebalancing.md), run in the background like failovers: one run per start or resume. */
export function localRebalanceStarter(handler: TaskHandler, root: string): RebalanceStarter & { settled(): Promise<void> } {
  const runs = backgroundRuns<{ id: string; rebalance: string }>('rebalance', handler, root, ({ rebalance }) => ({
    rebalance: { id: rebalance },
  }));
  return { start: async ({ id, run }) => runs.start({ id: run, rebalance: id }), settled: () => runs.settled() };
}

/** A backup region's promotions (docs/dr.md), run in the background like failovers. */
export function localPromotionStarter(handler: TaskHandler, root: string): PromotionStarter & { settled(): Promise<void> } {
  return backgroundRuns<PromotionRequest>('drPromotion', handler, root, (promotion) => ({ promotion }));
}

export function localTransactionOrchestrator(handler: TaskHandler, root: string): Orchestrator {
  const run = localMachine('transaction', handler, root);
  return {
    async run(execution: TxnExecution): Promise<TxnOutcome> {
      const running = run({ execution });
      try {
        return (await running.result) as TxnOutcome;
      } catch (error) {
        // The execution failed (a crashed task, an unknown decision): as in AWS, the outcome is unknown.
        throw outcomeUnknown(execution, error instanceof Error ? error.message : String(error));
      }
    },
  };
}
