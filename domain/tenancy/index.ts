export * from './identity.ts';
export * from './policy.ts';
export * from './settings.ts';
