/**
 * The real helm and kubectl binaries for render tests: those of the Lambda layer the reconcile
 * function runs with, found (and unpacked once per machine) by the tool locator.
 */
import type { RenderTools } from '../../../adapters/render/index.ts';
import { createToolLocator } from '../../../adapters/tools/binaries.ts';

export function renderTools(): Promise<RenderTools> {
  return createToolLocator().locate();
}
