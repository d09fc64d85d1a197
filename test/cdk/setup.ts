// The cdk project's setup, run in each test file before its tests.
// CloudFormation's template validation (aws-cdk-lib runs @aws/cloudformation-validate, a WASM engine, on every
// synthesis; cdk.json turns its findings into errors) costs about 4 s of CPU for a file's first template and
// about half a second for each further one. validation.test.ts runs it on every configuration the project
// synthesizes; the other files test what the templates contain, with it off. `cdk synth` and `cdk deploy`
// keep it on: this variable is set only in test processes.
process.env['CDK_VALIDATION'] ??= 'false';
