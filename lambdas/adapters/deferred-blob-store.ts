// A BlobStore whose implementation is loaded on its first call. Only values over the inline limit and the
// presigned-URL flow reach the blob store, so a handler that bundles the S3 SDK (about 200 KB minified, a
// third of a KV handler's cold start when evaluated at init) evaluates it only once a request needs it.
import { loadOnce } from '../core/load-once';
import type { BlobStore } from '../ports';

export class DeferredBlobStore implements BlobStore {
  private readonly store: () => Promise<BlobStore>;

  /** @param load builds the real store; called once, and again only after a failed load. */
  constructor(load: () => Promise<BlobStore>) {
    this.store = loadOnce(load);
  }

  async put(...args: Parameters<BlobStore['put']>) {
    return (await this.store()).put(...args);
  }

  async get(...args: Parameters<BlobStore['get']>) {
    return (await this.store()).get(...args);
  }

  async size(...args: Parameters<BlobStore['size']>) {
    return (await this.store()).size(...args);
  }

  async sha256(...args: Parameters<BlobStore['sha256']>) {
    return (await this.store()).sha256(...args);
  }

  async copy(...args: Parameters<BlobStore['copy']>) {
    return (await this.store()).copy(...args);
  }

  async delete(...args: Parameters<BlobStore['delete']>) {
    return (await this.store()).delete(...args);
  }

  async presignPut(...args: Parameters<BlobStore['presignPut']>) {
    return (await this.store()).presignPut(...args);
  }

  async presignGet(...args: Parameters<BlobStore['presignGet']>) {
    return (await this.store()).presignGet(...args);
  }
}
