// k6 provides `console` (its log goes to k6's stderr) but @types/k6 does not declare it, and the DOM lib
// would bring a browser's globals that k6 does not have.
declare const console: {
  log(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
};
