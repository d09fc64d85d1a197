// The local cloud's resource stack (cdk/local/resource-stack.ts): reverse order, every disposer run once,
// errors collected, and a failed start's own error the one its caller sees.
import fc from 'fast-check';
import { ResourceStack, startWithStack } from '../../../cdk/local/resource-stack';

describe('ResourceStack order', () => {
  it('disposes what was pushed last first, awaiting each disposer before the next', async () => {
    // Prepare
    const stack = new ResourceStack();
    const events: string[] = [];
    const slow = (name: string) => async () => {
      events.push(`${name} begins`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      events.push(`${name} ends`);
    };
    const engines = stack.use({ name: 'engines' }, (resource) => slow(resource.name)());
    stack.defer(slow('settle'));
    stack.use('gateway', (name) => slow(name)());

    // Act
    await stack.disposeAll();

    // Assess
    expect(engines).toEqual({ name: 'engines' });
    expect(events).toEqual(['gateway begins', 'gateway ends', 'settle begins', 'settle ends', 'engines begins', 'engines ends']);
  });
});

describe('ResourceStack errors', () => {
  it('runs every disposer when one fails, and rejects with that error', async () => {
    // Prepare
    const stack = new ResourceStack();
    const disposed: string[] = [];
    const failure = new Error('the poller would not stop');
    stack.defer(() => void disposed.push('engines'));
    stack.defer(() => Promise.reject(failure));
    stack.defer(() => void disposed.push('gateway'));

    // Act
    const outcome = stack.disposeAll();

    // Assess
    await expect(outcome).rejects.toBe(failure);
    expect(disposed).toEqual(['gateway', 'engines']);
  });

  it('rejects with an AggregateError of every failure, in the order they happened', async () => {
    // Prepare
    const stack = new ResourceStack();
    const first = new Error('first pushed');
    const second = new Error('second pushed');
    stack.defer(() => {
      throw first;
    });
    stack.defer(() => Promise.reject(second));

    // Act
    const outcome = await stack.disposeAll().then(
      () => undefined,
      (error: unknown) => error,
    );

    // Assess
    expect(outcome).toBeInstanceOf(AggregateError);
    expect((outcome as AggregateError).errors).toEqual([second, first]);
  });
});

describe('ResourceStack disposal', () => {
  it('disposes once: a second disposeAll answers the first one and runs nothing again', async () => {
    // Prepare
    const stack = new ResourceStack();
    let runs = 0;
    stack.defer(() => {
      runs += 1;
    });

    // Act
    const first = stack.disposeAll();
    const second = stack.disposeAll();
    await first;
    await stack.disposeAll();

    // Assess
    expect(second).toBe(first);
    expect(runs).toBe(1);
  });

  it('refuses a disposer pushed once disposal began', async () => {
    // Prepare
    const stack = new ResourceStack();
    const disposal = stack.disposeAll();

    // Act
    const push = () => stack.defer(() => undefined);

    // Assess
    expect(push).toThrow('a disposer was added after disposal began');
    await disposal;
  });

  it('runs each of any number of disposers exactly once, in reverse order, whichever of them fail', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { maxLength: 12 }), async (failing) => {
        // Prepare
        const stack = new ResourceStack();
        const ran: number[] = [];
        failing.forEach((fails, index) =>
          stack.defer(() => {
            ran.push(index);
            if (fails) throw new Error(`disposer ${index}`);
          }),
        );

        // Act
        const error = await stack.disposeAll().then(
          () => undefined,
          (reason: unknown) => reason,
        );

        // Assess
        expect(ran).toEqual(failing.map((_, index) => index).reverse());
        const failed = failing.flatMap((fails, index) => (fails ? [`disposer ${index}`] : [])).reverse();
        const messages =
          error instanceof AggregateError ? error.errors.map((each: Error) => each.message) : error ? [(error as Error).message] : [];
        expect(messages).toEqual(failed);
      }),
    );
  });
});

describe('startWithStack', () => {
  it('answers what the start returns and leaves its resources running', async () => {
    // Prepare
    let stopped = false;

    // Act
    const running = await startWithStack(
      () => undefined,
      async (stack) => {
        stack.defer(() => {
          stopped = true;
        });
        return { stop: () => stack.disposeAll() };
      },
    );

    // Assess
    expect(stopped).toBe(false);
    await running.stop();
    expect(stopped).toBe(true);
  });

  it('disposes what a failed start had started and rethrows the start error, logging the disposal errors', async () => {
    // Prepare
    const lines: string[] = [];
    const disposed: string[] = [];
    const cause = new Error('port 4510 is taken');

    // Act
    const outcome = startWithStack(
      (line) => lines.push(line),
      async (stack) => {
        stack.defer(() => void disposed.push('engines'));
        stack.defer(() => Promise.reject(new Error('the poller would not stop')));
        stack.defer(() => void disposed.push('schedule'));
        throw cause;
      },
    );

    // Assess
    await expect(outcome).rejects.toBe(cause);
    expect(disposed).toEqual(['schedule', 'engines']);
    expect(lines).toEqual(['while stopping what had started: the poller would not stop']);
  });

  it('rethrows the start error when several disposers fail too, logging each of them', async () => {
    // Prepare
    const lines: string[] = [];
    const cause = new Error('provisioning failed');

    // Act
    const outcome = startWithStack(
      (line) => lines.push(line),
      async (stack) => {
        stack.defer(() => Promise.reject(new Error('engines')));
        stack.defer(() => Promise.reject(new Error('wiring')));
        throw cause;
      },
    );

    // Assess
    await expect(outcome).rejects.toBe(cause);
    expect(lines).toEqual(['while stopping what had started: wiring', 'while stopping what had started: engines']);
  });
});
