// The oldest Node.js convoy runs on, checked by bin/convoy.ts before it imports anything else: an
// older Node fails inside a dependency with a stack trace (fauxqs needs node:sqlite, unflagged
// since 22.13). Plain syntax only, so that an old Node gets as far as this check.
export const MINIMUM_NODE = '22.13.0';

/** One line saying what is wrong with `version` (e.g. process.versions.node), or undefined when it is recent enough. */
export function nodeVersionProblem(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  const [needMajor = 0, needMinor = 0] = MINIMUM_NODE.split('.').map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return `convoy needs Node.js ${MINIMUM_NODE} or later (Node 22 LTS or 24); this is Node.js ${version}. Install a newer one (https://nodejs.org, nvm install 24) and run convoy again.`;
}
