// The local cloud's IAM: users with long-term access keys, one file each under `<home>/iam/` (mode 0600),
// which the local gateway verifies SigV4 signatures against. `npm start` makes one; tests add more.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The account every local principal belongs to (as the local engines' fake credentials do). */
export const localAccountId = '000000000000';
/** The user `npm start` creates and maps to the local namespace. */
export const localIamUserName = 'ringstore-local';

export interface LocalIamUser {
  name: string;
  /** `arn:aws:iam::000000000000:user/<name>`: what API Gateway would report as the caller. */
  arn: string;
  accessKeyId: string;
  secretAccessKey: string;
}

const accessKeyIdPattern = /^AKIA[A-Z2-7]{16}$/;
const userNamePattern = /^[\w+=,.@-]{1,64}$/;
const base32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

const directoryOf = (home: string) => join(home, 'iam');

function newAccessKeyId(): string {
  return `AKIA${Array.from(randomBytes(16), (byte) => base32[byte % 32]).join('')}`;
}

/** The user in a file; undefined when it is absent or unreadable (the gateway then knows no such key). */
async function readUser(path: string): Promise<LocalIamUser | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LocalIamUser;
  } catch {
    return undefined;
  }
}

/** The local user `name`, created with a new access key the first time. Safe to call from several processes. */
export async function ensureLocalIamUser(home: string, name: string): Promise<LocalIamUser> {
  if (!userNamePattern.test(name)) throw new Error(`local IAM user name ${JSON.stringify(name)} is not a valid IAM user name`);
  const directory = directoryOf(home);
  await mkdir(directory, { recursive: true });
  for (const file of await readdir(directory)) {
    if (!file.endsWith('.json')) continue;
    const user = await readUser(join(directory, file));
    if (user?.name === name) return user;
  }
  const user: LocalIamUser = {
    name,
    arn: `arn:aws:iam::${localAccountId}:user/${name}`,
    accessKeyId: newAccessKeyId(),
    secretAccessKey: randomBytes(30).toString('base64'),
  };
  // Written whole, then renamed: the gateway never reads half a file.
  const path = join(directory, `${user.accessKeyId}.json`);
  await writeFile(`${path}.tmp`, JSON.stringify(user, null, 2), { mode: 0o600 });
  await chmod(`${path}.tmp`, 0o600);
  await rename(`${path}.tmp`, path);
  return user;
}

/** What the gateway knows: a user by access key id, read from its file (kept once found: keys never change). */
export class LocalIam {
  private readonly known = new Map<string, LocalIamUser>();

  constructor(private readonly home: string) {}

  async find(accessKeyId: string): Promise<LocalIamUser | undefined> {
    if (!accessKeyIdPattern.test(accessKeyId)) return undefined;
    const kept = this.known.get(accessKeyId);
    if (kept) return kept;
    const user = await readUser(join(directoryOf(this.home), `${accessKeyId}.json`));
    if (user?.accessKeyId === accessKeyId) this.known.set(accessKeyId, user);
    return user;
  }
}
