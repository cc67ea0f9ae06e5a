// Starts a control plane (with controllers and simulated nodes), prints
// {"etcd":pid,"apiserver":pid,"controllerManager":pid,"scheduler":pid,"kwok":pid,"reaper":pid,"dir":...} as one
// JSON line on stdout, then waits forever. Used by the orphan test, which SIGKILLs this process.
import { startControlPlane } from '../../dev/control-plane.ts';

const cp = await startControlPlane();
process.stdout.write(`${JSON.stringify({ ...cp.pids, dir: cp.dir, startupMs: cp.startupMs })}\n`);
setInterval(() => {}, 1 << 30);
