// Fault suites start their own local cloud and run seeded workloads through crashes: allow three minutes per test.
jest.setTimeout(180_000);
