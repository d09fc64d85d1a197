// Every function is bundled as a production build (topology's productionBuildDefine), so a deployed bundle
// refuses fault injection. Bundling itself is skipped in tests; what NodejsFunction is given is recorded.
import { execSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { transformSync } from 'esbuild';
import type { NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { apiPageScriptFile, envVars, handlers, productionBuildDefine } from '../../schemas/topology';
import { repoRoot } from '../../cdk/constructs/handler-function';
import { handlerNames } from '../../cdk/stacks/api-stack';
import { synth } from './support';

const mockBundled: { path: string; props: NodejsFunctionProps }[] = [];

jest.mock('aws-cdk-lib/aws-lambda-nodejs', () => {
  const actual = jest.requireActual('aws-cdk-lib/aws-lambda-nodejs');
  class RecordingNodejsFunction extends actual.NodejsFunction {
    constructor(scope: unknown, id: string, props: NodejsFunctionProps) {
      super(scope, id, props);
      mockBundled.push({ path: (this as unknown as { node: { path: string } }).node.path, props });
    }
  }
  return { ...actual, NodejsFunction: RecordingNodejsFunction };
});

describe('production bundles', () => {
  beforeAll(() => {
    synth();
  });

  it('records every handler function (the recording sees what the app builds)', () => {
    expect(mockBundled).toHaveLength(handlerNames.length);
    for (const name of handlerNames) expect(mockBundled.some((b) => b.path.includes(`/Handler-${name}/`))).toBe(true);
  });

  it('defines RINGSTORE_PRODUCTION_BUILD in every bundle', () => {
    for (const { path, props } of mockBundled) {
      expect({ path, define: props.bundling?.define }).toEqual({ path, define: productionBuildDefine });
    }
  });

  it('never arms fault injection through the environment', () => {
    for (const { props } of mockBundled) expect(Object.keys(props.environment ?? {})).not.toContain(envVars.faultInjection);
  });

  it('gives esbuild a define it applies: the bundle reads "true", not the environment', () => {
    const define = mockBundled[0]?.props.bundling?.define ?? {};

    const { code } = transformSync('export const production = process.env.RINGSTORE_PRODUCTION_BUILD === "true";', { define });

    expect(code).not.toContain('process.env');
    expect(code).toMatch(/"true" === "true"|= true/);
  });

  it("copies a spec's bundledFiles next to the bundle: the docs function gets Redoc's script, no other function a hook", () => {
    // Prepare
    const docs = mockBundled.find((b) => b.path.includes('/Handler-docs/'));
    const outputDir = mkdtempSync(path.join(tmpdir(), 'ringstore-bundle-'));

    // Act: the commands CDK runs after esbuild, in a scratch output directory.
    try {
      for (const command of docs?.props.bundling?.commandHooks?.afterBundling(repoRoot, outputDir) ?? []) execSync(command);
      const copied = path.join(outputDir, path.basename(apiPageScriptFile));

      // Assess
      expect(handlers.docs.bundledFiles).toEqual([apiPageScriptFile]);
      expect(existsSync(copied)).toBe(true);
      expect(readFileSync(copied, 'utf8')).toContain('Redoc');
    } finally {
      rmSync(outputDir, { recursive: true, force: true });
    }
    const hooked = mockBundled.filter((b) => b.props.bundling?.commandHooks).map((b) => b.path);
    expect(hooked).toEqual([docs?.path]);
  });
});
