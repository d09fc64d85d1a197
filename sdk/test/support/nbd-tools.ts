// The NBD clients the NBD server is tested with: Debian's qemu-utils (qemu-io, qemu-img), libnbd-bin (nbdinfo,
// nbdcopy) and e2fsprogs, which .ci/run installs. A machine without them fails with the packages to install.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

const packageOf: Record<string, string> = {
  'qemu-io': 'qemu-utils',
  'qemu-img': 'qemu-utils',
  nbdinfo: 'libnbd-bin',
  nbdcopy: 'libnbd-bin',
  'mkfs.ext4': 'e2fsprogs',
  e2fsck: 'e2fsprogs',
  debugfs: 'e2fsprogs',
  fio: 'fio',
};

/** Runs a tool; a missing one fails naming the Debian package that has it. */
export async function tool(
  name: string,
  args: readonly string[],
  options: { timeoutMs?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(name, [...args], {
      timeout: options.timeoutMs ?? 60_000,
      maxBuffer: 64 * 1024 * 1024,
      // mkfs.ext4 and e2fsck live in /usr/sbin, off a plain user's PATH.
      env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` },
    });
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (failure.code === 'ENOENT') {
      throw new Error(`${name} is not installed: apt-get install ${packageOf[name] ?? name} (.ci/run installs it)`, { cause: error });
    }
    throw new Error(`${name} ${args.join(' ')} failed: ${failure.message}\n${failure.stdout ?? ''}\n${failure.stderr ?? ''}`, {
      cause: error,
    });
  }
}

/** qemu-io's commands run on an NBD URL; its output, which names any failed pattern or request. */
export async function qemuIo(url: string, commands: readonly string[], flags: readonly string[] = []): Promise<string> {
  const { stdout, stderr } = await tool('qemu-io', [...flags, '-f', 'raw', url, ...commands.flatMap((command) => ['-c', command])]);
  return `${stdout}${stderr}`;
}
