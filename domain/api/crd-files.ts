import { stringify } from 'yaml';
import { crdOf } from './crd.ts';
import { kinds } from './kinds.ts';

const HEADER = '# Generated from domain/api by `npm run gen:crds`. Do not edit.\n';

/** The CRD YAML files, one per kind, exactly as committed under config/crds. */
export function renderCrdFiles(): { file: string; yaml: string }[] {
  return kinds.map((def) => ({
    file: `${def.plural}.convoy.dev.yaml`,
    yaml: HEADER + stringify(crdOf(def), { lineWidth: 0, aliasDuplicateObjects: false }),
  }));
}
