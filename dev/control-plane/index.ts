// A real etcd + kube-apiserver on loopback, for integration tests (one per test run,
// started from vitest's globalSetup) and for `convoy dev --embedded`.
// Kept free of vitest imports. The etcd and kube-apiserver flags, and why each is set, are in
// start-control-plane.ts; the KWOK nodes and controllers in simulated-cluster.ts.
export {
  DEFAULT_ETCD_VERSION,
  DEFAULT_K8S_VERSION,
  locateControlPlaneBinaries,
  type ControlPlaneBinaries,
} from './binaries.ts';
export { installCrds } from './crds.ts';
export { ControlPlaneBinariesNotFoundError, ControlPlaneStartError, CrdInstallError } from './errors.ts';
export {
  FUNCTIONS_USER,
  startControlPlane,
  type ControlPlane,
  type ExtraUser,
  type StartControlPlaneOptions,
} from './start-control-plane.ts';
export { BUILD_COMMAND, controlPlaneCacheDir } from './binaries.ts';
export { FAIL_LABEL } from './simulated-cluster.ts';
export { CONTROL_PLANE_DIR_PREFIX } from './start-control-plane.ts';
