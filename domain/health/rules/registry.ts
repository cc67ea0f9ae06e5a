/**
 * Which built-in rule assesses which kind, keyed by API group and kind (any
 * version). Kinds not listed fall back to the generic rule.
 */
import type { HealthRule } from '../types.ts';
import { apiServiceHealth } from './apiservice.ts';
import { crdHealth } from './crd.ts';
import { daemonSetHealth } from './daemonset.ts';
import { deploymentHealth } from './deployment.ts';
import { apiGroup } from './fields.ts';
import { genericHealth } from './generic.ts';
import { ingressHealth } from './ingress.ts';
import { jobHealth } from './job.ts';
import { podHealth } from './pod.ts';
import { pvcHealth } from './pvc.ts';
import { replicaSetHealth } from './replicaset.ts';
import { serviceHealth } from './service.ts';
import { statefulSetHealth } from './statefulset.ts';

const BUILTIN_RULES: ReadonlyMap<string, HealthRule> = new Map<string, HealthRule>([
  ['apps/Deployment', deploymentHealth],
  ['extensions/Deployment', deploymentHealth],
  ['apps/StatefulSet', statefulSetHealth],
  ['apps/DaemonSet', daemonSetHealth],
  ['extensions/DaemonSet', daemonSetHealth],
  ['apps/ReplicaSet', replicaSetHealth],
  ['extensions/ReplicaSet', replicaSetHealth],
  ['/Pod', podHealth],
  ['batch/Job', jobHealth],
  ['/PersistentVolumeClaim', pvcHealth],
  ['/Service', serviceHealth],
  ['networking.k8s.io/Ingress', ingressHealth],
  ['extensions/Ingress', ingressHealth],
  ['apiextensions.k8s.io/CustomResourceDefinition', crdHealth],
  ['apiregistration.k8s.io/APIService', apiServiceHealth],
]);

/** The built-in rule for a kind; the generic rule when there is none. */
export function builtinRule(apiVersion: string, kind: string): HealthRule {
  return BUILTIN_RULES.get(`${apiGroup(apiVersion)}/${kind}`) ?? genericHealth;
}
