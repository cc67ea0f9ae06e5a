import { describe, expect, it } from 'vitest';
import { assess, condition, withConditions } from './fixtures.ts';

const crd = (...conditions: Record<string, unknown>[]) =>
  withConditions('apiextensions.k8s.io/v1', 'CustomResourceDefinition', conditions);
const apiService = (...conditions: Record<string, unknown>[]) =>
  withConditions('apiregistration.k8s.io/v1', 'APIService', conditions);

describe('CustomResourceDefinition rule', () => {
  it('CRD with Established True is Healthy', () => {
    expect(assess(crd(condition('NamesAccepted', 'True'), condition('Established', 'True'))).state).toBe(
      'Healthy',
    );
  });

  it('CRD with NamesAccepted False is Degraded', () => {
    const health = assess(
      crd(
        condition('NamesAccepted', 'False', 'MultipleNamesNotAllowed', '"widgets" is already in use'),
        condition('Established', 'False', 'NotAccepted'),
      ),
    );
    expect(health.state).toBe('Degraded');
    expect(health.message).toContain('already in use');
  });

  it('CRD without conditions is Progressing', () => {
    expect(assess(crd()).state).toBe('Progressing');
  });

  it('CRD with Established False reason Installing is Progressing', () => {
    expect(
      assess(crd(condition('NamesAccepted', 'True'), condition('Established', 'False', 'Installing'))).state,
    ).toBe('Progressing');
  });

  it('CRD with NamesAccepted True and no Established condition yet is Progressing', () => {
    expect(assess(crd(condition('NamesAccepted', 'True'))).state).toBe('Progressing');
  });

  it('CRD with Established False for another reason is Degraded', () => {
    expect(
      assess(crd(condition('NamesAccepted', 'True'), condition('Established', 'False', 'NotAccepted'))).state,
    ).toBe('Degraded');
  });

  it('CRD with NonStructuralSchema True is Degraded', () => {
    expect(
      assess(crd(condition('Established', 'True'), condition('NonStructuralSchema', 'True', 'Violations')))
        .state,
    ).toBe('Degraded');
  });

  it('CRD with Terminating True is Progressing', () => {
    expect(
      assess(
        crd(condition('Established', 'True'), condition('Terminating', 'True', 'InstanceDeletionInProgress')),
      ).state,
    ).toBe('Progressing');
  });
});

describe('APIService rule', () => {
  it('APIService with Available True is Healthy', () => {
    expect(assess(apiService(condition('Available', 'True', 'Passed', 'all checks passed'))).state).toBe(
      'Healthy',
    );
  });

  it('APIService with Available False is Progressing', () => {
    const health = assess(
      apiService(
        condition(
          'Available',
          'False',
          'MissingEndpoints',
          'endpoints for service/metrics-server have no addresses',
        ),
      ),
    );
    expect(health).toEqual({
      state: 'Progressing',
      message:
        'APIService is not available yet: MissingEndpoints: endpoints for service/metrics-server have no addresses',
    });
  });

  it('APIService without an Available condition is Progressing', () => {
    expect(assess(apiService()).state).toBe('Progressing');
  });
});
