/** The oldest Node.js major the function bundles are built for (esbuild target `node24`, ES modules). */
export const MIN_NODE_MAJOR = 24;
