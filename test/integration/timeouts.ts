// Integration tests talk to real engines over HTTP: allow a minute per test.
jest.setTimeout(60_000);
