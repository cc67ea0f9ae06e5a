export * from './common.ts';
export * from './git-ref.ts';
export * from './release-spec.ts';
export * from './release-status.ts';
export * from './other-kinds.ts';
export * from './kinds.ts';
export * from './objects.ts';
export * from './release-set.ts';
