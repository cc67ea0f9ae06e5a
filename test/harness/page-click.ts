// A click on what `selector` finds now, in one turn of the page's own JavaScript. puppeteer's
// page.click() finds the element, then scrolls and moves the mouse to it in further round trips;
// the dashboard re-renders a table or panel when its data changes (after an action, on the 2-s
// refresh), and the element found first can be detached by the time the mouse gets there ("Node is
// detached from document": a whole-project soak, run 4 of 5, release-set-dashboard). Here the
// element is found and clicked with nothing in between, as the page is at that moment.
import type { Page } from 'puppeteer-core';

export async function clickNow(page: Page, selector: string): Promise<void> {
  // A string, as the tests' other page expressions: the project's types carry no DOM.
  const found = (await page.evaluate(
    `(() => { const element = document.querySelector(${JSON.stringify(selector)}); if (!(element instanceof HTMLElement)) return false; element.click(); return true; })()`,
  )) as boolean;
  if (!found) throw new Error(`nothing to click: no element matches ${selector}`);
}
