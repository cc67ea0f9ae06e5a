/**
 * A server-side apply body as text, for every apply convoy sends (Release status, rendered objects).
 *
 * Server-side apply bodies are YAML (application/apply-patch+yaml), and the API server's YAML reader
 * refuses characters JSON leaves raw — anything beyond U+FFFF (emoji), DEL, C1 controls, U+FEFF,
 * U+FFFE/FFFF — with HTTP 400 "control characters are not allowed". They reach status through
 * messages that quote user input, and rendered objects through user data (a ConfigMap value, an
 * annotation), so they are written as YAML escapes (`\U0001F600`), which decode to the same
 * characters. C0 controls (U+0000–U+001F) JSON already escapes as `\u00XX`, which YAML reads too.
 */
export function applyPatchText(body: unknown): string {
  return JSON.stringify(body).replace(
    /[\u{7f}-\u{9f}\u{feff}\u{fffe}\u{ffff}\u{10000}-\u{10ffff}]/gu,
    (ch) => `\\U${(ch.codePointAt(0) ?? 0xfffd).toString(16).padStart(8, '0')}`,
  );
}
