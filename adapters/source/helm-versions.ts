// Which chart version of a repository index a Release gets: the exact version,
// or the highest one a semver range allows.
import semver from 'semver';
import { SourceNotReadyError, UnsupportedSourceError, redactUrl } from './errors.ts';

export interface IndexEntry {
  version?: unknown;
  urls?: unknown;
  digest?: unknown;
}

export function pickVersion(
  entries: IndexEntry[],
  requested: string,
  chart: string,
  indexUrl: string,
  field: string,
): { entry: IndexEntry; version: string } {
  const versions = entries
    .map((entry) => ({
      entry,
      version: typeof entry.version === 'string' ? entry.version : String(entry.version),
    }))
    .filter((v) => v.version !== 'undefined');
  const exact = versions.find((v) => v.version === requested);
  if (exact) return exact;
  const range = semver.validRange(requested === '' ? '*' : requested, { loose: true });
  if (range === null) {
    throw new UnsupportedSourceError(
      `${field}.version`,
      `${field}.version ${JSON.stringify(requested)} is neither a version nor a semver range (e.g. "6.7.1", "6.7.x", ">=6 <7")`,
    );
  }
  const valid = versions.filter((v) => semver.valid(v.version, { loose: true }) !== null);
  const best = semver.maxSatisfying(
    valid.map((v) => v.version),
    range,
    { loose: true },
  );
  if (best === null) {
    const newest = valid
      .map((v) => v.version)
      .sort((a, b) => semver.rcompare(a, b, true))
      .slice(0, 10);
    throw new SourceNotReadyError(
      `${field}.version`,
      `chart "${chart}" has no version matching ${JSON.stringify(requested || '*')} in ${redactUrl(indexUrl)} ` +
        `(newest: ${newest.join(', ') || 'none'}); publish one or change ${field}.version`,
    );
  }
  return valid.find((v) => v.version === best)!;
}
