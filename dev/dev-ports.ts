// `convoy dev` checks its fixed ports before it starts anything, so a busy port costs one line
// and exit code 2 instead of a half-started runtime.
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  override name = 'PortInUseError';
  readonly port: number;
  readonly flag: string;
  constructor(port: number, flag: string) {
    super(
      `port ${port} (${flag}) is already in use; stop what holds it, or pick another port with ${flag} <port>`,
    );
    this.port = port;
    this.flag = flag;
  }
}

export interface NamedPort {
  readonly port: number;
  /** The command-line flag that sets it, e.g. --api-port. */
  readonly flag: string;
}

/** Throws PortInUseError for the first port (other than 0) that cannot be bound on 127.0.0.1. */
export async function assertPortsFree(ports: readonly NamedPort[]): Promise<void> {
  for (const p of ports) {
    if (p.port === 0) continue;
    if (!(await canListen(p.port))) throw new PortInUseError(p.port, p.flag);
  }
}

/** True when `err` (or its cause) is an EADDRINUSE error. */
export function isAddressInUse(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE' || /EADDRINUSE/.test(e.message)) return true;
  }
  return false;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    });
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}
