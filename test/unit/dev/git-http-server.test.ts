// The Git server's request records: a client that has its whole answer finds the request listed
// with the status it was sent, even while the CGI backend has not exited yet. A fresh-clone CI run
// beside another found an ls-refs listed with status 0 (tenancy-git-cache): the status was set only
// when the backend process closed, after the client had read the answer and gone on.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../../../dev/git-http-server.ts';

describe('the Git server records a response status as its headers go out', () => {
  let dir: string;
  let server: GitHttpServer;
  /** Statuses of the requests whose backend has exited (onRequest). */
  const finished: number[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-git-http-status-'));
    // A backend that answers in full, closes its stdout, then lingers before it exits.
    const backend = join(dir, 'lingering-backend');
    await writeFile(
      backend,
      "#!/bin/sh\nprintf 'Status: 203 Lingering\\r\\nContent-Type: text/plain\\r\\n\\r\\nanswered\\n'\nexec 1>&-\nsleep 3\n",
    );
    await chmod(backend, 0o755);
    server = await startGitHttpServer({
      projectRoot: dir,
      backend,
      onRequest: (record) => finished.push(record.status),
    });
  });

  afterAll(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('the status is listed once the client has the body, before the backend exits', async () => {
    const response = await fetch(`${server.url}/repo.git/info/refs?service=git-upload-pack`);
    expect(await response.text()).toBe('answered\n');
    expect(response.status).toBe(203);
    const record = server.requests.at(-1);
    expect(record).toMatchObject({
      method: 'GET',
      path: '/repo.git/info/refs',
      command: 'advertise',
      status: 203,
    });
    // The backend is still sleeping (onRequest comes when it exits): the record did not wait for it.
    expect(finished).toEqual([]);
    await expect.poll(() => finished, { timeout: 10_000 }).toEqual([203]);
  });
});
