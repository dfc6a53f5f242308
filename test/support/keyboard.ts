/**
 * Keyboard-only steps of the browser tests: Tab (or Shift+Tab) to a control, checking on the way that
 * the focus is visible where it lands (the control's own ring, or its label's for a hidden file
 * picker) and that no control it passes hides under the status line floating at the window's foot,
 * as a person who cannot use a mouse needs it.
 */
import type { FileChooser, Page } from "playwright-core";
import { expect } from "vitest";

/** Whether the focused element shows a focus ring (on itself, or on the label a hidden control shows it through). */
export async function focusVisible(page: Page): Promise<boolean> {
  // (Expressions as text: test files are type-checked without the DOM's types.)
  return (await page.evaluate(`(() => {
    const a = document.activeElement;
    if (!a || a === document.body) return false;
    const label = a.id ? document.querySelector('label[for="' + a.id + '"]') : null;
    const ring = (e) => getComputedStyle(e).outlineStyle !== "none" && getComputedStyle(e).outlineWidth !== "0px";
    return a.classList.contains("visually-hidden") ? label !== null && ring(label) : ring(a);
  })()`)) as boolean;
}

/**
 * Whether the focused element is clear of the status line (when one shows): not under it, unless it is
 * one of the line's own controls or sits in a dialog, which is drawn above everything.
 */
async function focusClearOfStatus(page: Page): Promise<boolean> {
  return (await page.evaluate(`(() => {
    const line = document.getElementById("status-box");
    const a = document.activeElement;
    if (!line || line.hidden || !a || a === document.body || line.contains(a) || a.closest("dialog")) return true;
    const f = a.getBoundingClientRect();
    const s = line.getBoundingClientRect();
    return f.bottom <= s.top || f.top >= s.bottom || f.right <= s.left || f.left >= s.right;
  })()`)) as boolean;
}

/** Presses Tab (`back`: Shift+Tab) until the focused element matches `selector`; fails when it never does. */
export async function tabTo(page: Page, selector: string, options: { max?: number; back?: boolean } = {}) {
  const key = options.back ? "Shift+Tab" : "Tab";
  for (let i = 0; i < (options.max ?? 80); i++) {
    await page.keyboard.press(key);
    expect(await focusClearOfStatus(page), "the focus is not under the status line").toBe(true);
    if (await page.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) {
      expect(await focusVisible(page), `focus ring on ${selector}`).toBe(true);
      return;
    }
  }
  throw new Error(`${key} never reached ${selector}`);
}

/**
 * Tabs to a file picker and opens it with `key` (Enter or Space), as a keyboard user does; returns the
 * chooser. On a loaded machine the page may still be drawing the view the picker belongs to when the
 * key arrives (the picker is then replaced and the key goes nowhere): a person presses again, and so
 * does this, up to three times, each time from a settled page.
 */
export async function openFilePicker(
  page: Page,
  selector: string,
  key: "Enter" | "Space",
  options: { back?: boolean } = {},
): Promise<FileChooser> {
  for (let attempt = 1; ; attempt++) {
    await page.waitForLoadState("networkidle");
    await tabTo(page, selector, options);
    try {
      const [chooser] = await Promise.all([
        page.waitForEvent("filechooser", { timeout: 10_000 }),
        page.keyboard.press(key),
      ]);
      return chooser;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

/** The focused element, described for a failure message (`BUTTON#approve "Approve this batch…"`). */
export async function focused(page: Page): Promise<string> {
  return (await page.evaluate(`(() => {
    const a = document.activeElement;
    if (!a) return "nothing";
    return a.tagName + (a.id ? "#" + a.id : "") + ' "' + (a.textContent ?? "").trim().slice(0, 40) + '"';
  })()`)) as string;
}
