// Kept so existing imports of dev/control-plane.ts keep working; the code lives in dev/control-plane/.
export * from './control-plane/index.ts';
