// Every state machine's ASL definition, as the local cloud runs it, passes aws-local-stepfunctions' validation
// (asl-validator): the local cloud builds its machines without it (cdk/local/state-machine.ts says why).
import { join } from 'node:path';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { localDefinitionOf } from '../../../cdk/local/state-machine';
import { stateMachines, type StateMachineName } from '../../../schemas/topology';

const root = join(__dirname, '..', '..', '..');
const validated = (definition: StateMachineDefinition) => () => new StateMachine(definition, { validationOptions: { checkArn: false } });

describe('state machine definitions', () => {
  test.each(Object.keys(stateMachines) as StateMachineName[])('%s passes the ASL validation', (name) => {
    expect(validated(localDefinitionOf(name, root))).not.toThrow();
  });

  test('a definition with a state that goes nowhere fails it (the validation is on)', () => {
    const definition = localDefinitionOf('transaction', root);
    const broken = { ...definition, StartAt: 'NoSuchState' };
    expect(validated(broken)).toThrow();
  });
});
