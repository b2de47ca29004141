// Whether a process with this pid exists: signal 0 checks without sending anything, and EPERM means
// it exists as another user's. Used to tell what a dead process left behind (temporary files,
// staging directories) from what a live one is still writing. A leaf module.
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
