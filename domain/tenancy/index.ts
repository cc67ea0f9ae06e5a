export * from './eks-roles.ts';
export * from './identity.ts';
export * from './policy.ts';
export * from './read-refusal.ts';
export * from './settings.ts';
