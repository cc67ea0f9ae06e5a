// The Events of a Release or ReleaseSet as `describe` and `events` print them (views/events.ts reads them).
import type { ListedEvent } from '../views/events.ts';
import { age, table } from './output.ts';

export function eventTable(events: readonly ListedEvent[], now = Date.now()): string[] {
  return table(
    ['LAST SEEN', 'TYPE', 'REASON', 'FROM', 'COUNT', 'MESSAGE'],
    events.map((e) => [
      age(e.lastSeen, now),
      e.type,
      e.reason,
      e.reportingController,
      String(e.count),
      e.note,
    ]),
  );
}
