// What `npm run deploy:local` (cdklocal) needs from the app, checked without LocalStack (docs/operations.md,
// "Deploy to LocalStack"): no context lookup (nothing AWS-only queried at synth), every function's code a file
// asset in the bootstrap bucket that `cdklocal bootstrap` creates, and only the bootstrap version parameter.
import { synth } from './support';

/** The asset bucket and version parameter of CDK's default synthesizer (the `hnb659fds` bootstrap qualifier). */
const bootstrapQualifier = 'hnb659fds';

describe('the app as cdklocal synthesizes it', () => {
  const app = synth({ stage: 'dev' });
  const assembly = app.app.synth();

  it('asks for no context lookup: nothing AWS-only is queried at synth', () => {
    expect(assembly.manifest.missing ?? []).toEqual([]);
  });

  it.each(['data', 'api'] as const)('gives the %s stack no parameter but the bootstrap version', (stack) => {
    const template = stack === 'data' ? app.dataTemplate : app.apiTemplate;
    expect(Object.keys(template.toJSON().Parameters ?? {})).toEqual(['BootstrapVersion']);
  });

  it('puts every function’s code in the bootstrap asset bucket, as a file asset of the api stack', () => {
    const functions = Object.values(app.apiTemplate.findResources('AWS::Lambda::Function'));
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      expect(JSON.stringify(fn.Properties.Code.S3Bucket)).toContain(`cdk-${bootstrapQualifier}-assets-`);
    }
    const artifact = assembly.getStackByName(app.api.stackName);
    const assetManifest = assembly.artifacts.find((candidate) => candidate.id === `${artifact.id}.assets`);
    expect(assetManifest).toBeDefined();
  });
});
