/**
 * A tab list and its one panel (the WAI-ARIA tabs pattern): one tab stop (the selected tab; the
 * others are reached with the arrow keys, Home and End, which select as they move), each tab a button
 * with role "tab", the panel labelled by its tab. Only the selected tab's panel is drawn, so a tab's
 * content (and its reads) starts when it is shown. Selecting is the page's (tabs.ts: an address each).
 */
import type { ComponentChildren } from "preact";
import { useRef } from "preact/hooks";

import { tabKey } from "../tabs";

export interface TabSpec<Id extends string> {
  id: Id;
  title: string;
}

export function Tabs<Id extends string>({ label, idPrefix, tabs, selected, onSelect, children }: {
  /** Names the tab list ("Billing"). */
  label: string;
  /** Makes the tabs' and the panel's ids unique on the page. */
  idPrefix: string;
  tabs: readonly TabSpec<Id>[];
  selected: Id;
  onSelect: (id: Id) => void;
  /** The selected tab's panel. */
  children: ComponentChildren;
}) {
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  const current = Math.max(0, tabs.findIndex((tab) => tab.id === selected));
  const tabId = (id: Id) => `${idPrefix}-tab-${id}`;
  const panelId = `${idPrefix}-panel`;
  return (
    <>
      <div role="tablist" aria-label={label} class="tabs" onKeyDown={(event) => {
        const next = tabKey(event.key, current, tabs.length);
        const tab = next === null ? undefined : tabs[next];
        if (next === null || !tab) return;
        event.preventDefault();
        buttons.current[next]?.focus();
        if (tab.id !== selected) onSelect(tab.id);
      }}>
        {tabs.map((tab, i) => {
          const isSelected = i === current;
          return (
            <button key={tab.id} type="button" role="tab" id={tabId(tab.id)} ref={(el) => { buttons.current[i] = el; }}
                    aria-selected={isSelected} aria-controls={isSelected ? panelId : undefined}
                    tabIndex={isSelected ? 0 : -1} onClick={() => { if (!isSelected) onSelect(tab.id); }}>
              {tab.title}
            </button>
          );
        })}
      </div>
      <div role="tabpanel" id={panelId} class="tab-panel" aria-labelledby={tabId(tabs[current]?.id ?? selected)} tabIndex={0}>
        {children}
      </div>
    </>
  );
}
