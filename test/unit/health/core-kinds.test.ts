import { describe, expect, it } from 'vitest';
import { assess, object } from './fixtures.ts';

const pvc = (phase?: string) =>
  object('v1', 'PersistentVolumeClaim', { spec: {}, status: phase === undefined ? {} : { phase } });
const service = (type: string | undefined, ingress?: unknown[]) =>
  object('v1', 'Service', {
    spec: type === undefined ? {} : { type },
    status: { loadBalancer: ingress === undefined ? {} : { ingress } },
  });
const ingress = (entries?: unknown[]) =>
  object('networking.k8s.io/v1', 'Ingress', {
    spec: {},
    status: { loadBalancer: entries === undefined ? {} : { ingress: entries } },
  });

describe('PersistentVolumeClaim rule', () => {
  it('PVC Bound is Healthy', () => {
    expect(assess(pvc('Bound')).state).toBe('Healthy');
  });

  it('PVC Pending is Progressing', () => {
    expect(assess(pvc('Pending')).state).toBe('Progressing');
  });

  it('PVC Lost is Degraded', () => {
    expect(assess(pvc('Lost')).state).toBe('Degraded');
  });

  it('PVC without a phase is Progressing', () => {
    expect(assess(pvc()).state).toBe('Progressing');
  });
});

describe('Service rule', () => {
  it('Service of type LoadBalancer with an ingress address is Healthy', () => {
    expect(assess(service('LoadBalancer', [{ ip: '203.0.113.7' }]))).toEqual({
      state: 'Healthy',
      message: 'Load balancer provisioned: 203.0.113.7',
    });
  });

  it('Service of type LoadBalancer without an ingress address is Progressing', () => {
    expect(assess(service('LoadBalancer')).state).toBe('Progressing');
    expect(assess(service('LoadBalancer', [])).state).toBe('Progressing');
  });

  it('Service of type ClusterIP is Healthy', () => {
    expect(assess(service('ClusterIP')).state).toBe('Healthy');
  });

  it('Service of type NodePort is Healthy', () => {
    expect(assess(service('NodePort')).state).toBe('Healthy');
  });

  it('Service without spec.type (ClusterIP) is Healthy', () => {
    expect(assess(service(undefined)).state).toBe('Healthy');
  });
});

describe('Ingress rule', () => {
  it('Ingress with a loadBalancer ingress address is Healthy', () => {
    expect(assess(ingress([{ hostname: 'lb.example.com' }]))).toEqual({
      state: 'Healthy',
      message: 'Ingress address assigned: lb.example.com',
    });
  });

  it('Ingress without a loadBalancer ingress address is Progressing', () => {
    expect(assess(ingress()).state).toBe('Progressing');
  });
});

describe('Secret', () => {
  it('Secret is always Healthy and its data never appears in the message', () => {
    const secret = object('v1', 'Secret', {
      type: 'Opaque',
      data: { password: 'aHVudGVyMg==' },
      stringData: { token: 'hunter2' },
    });
    const health = assess(secret);
    expect(health.state).toBe('Healthy');
    expect(health.message).not.toContain('aHVudGVyMg==');
    expect(health.message).not.toContain('hunter2');
  });

  it('Secret is Healthy even when it has a failing Ready condition', () => {
    const secret = object('v1', 'Secret', {
      data: {},
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'x' }] },
    });
    expect(assess(secret).state).toBe('Healthy');
  });
});

describe('Every kind', () => {
  it('An object that does not exist (undefined) is Missing', () => {
    expect(assess(undefined).state).toBe('Missing');
  });

  it('An object with metadata.deletionTimestamp is Progressing', () => {
    const live = object('v1', 'ConfigMap', { data: {} }, { deletionTimestamp: '2025-01-01T00:00:00Z' });
    expect(assess(live)).toEqual({ state: 'Progressing', message: 'The object is being deleted' });
  });

  it('A live object without apiVersion or kind is Unknown', () => {
    expect(assess({ metadata: { name: 'x' } }).state).toBe('Unknown');
  });
});
