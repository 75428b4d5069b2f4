/**
 * A row's actions behind one button, "Actions for <name>" (the WAI-ARIA menu button pattern: the
 * keyboard as menu.ts says, a click outside closes it). The menu is placed under its button in the
 * viewport, so a table that scrolls sideways does not cut it. Choosing an item closes the menu and
 * gives the button the focus before the item acts, so a dialog the item opens gives it back there.
 */
import { useEffect, useId, useLayoutEffect, useRef, useState } from "preact/hooks";

import { CLOSED, menuKey, type MenuState } from "../menu";

export interface MenuItem {
  label: string;
  onSelect: () => void;
  /** It destroys something (it still asks first): drawn in the danger colour. */
  danger?: boolean;
}

export function ActionsMenu({ name, items, disabled = false }: { name: string; items: MenuItem[]; disabled?: boolean }) {
  const [state, setState] = useState<MenuState>(CLOSED);
  const [place, setPlace] = useState<{ top: number; right: number }>({ top: 0, right: 0 });
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const id = useId();

  const apply = (next: MenuState, focusButton: boolean) => {
    if (next.open && !state.open && button.current) {
      const box = button.current.getBoundingClientRect();
      setPlace({ top: box.bottom + 4, right: Math.max(4, window.innerWidth - box.right) });
    }
    setState(next);
    if (focusButton) button.current?.focus();
  };

  // Before the next paint, so a key pressed at once lands on the item.
  useLayoutEffect(() => {
    if (!state.open) return;
    menu.current?.querySelectorAll<HTMLElement>("[role=menuitem]")[state.active]?.focus();
  }, [state]);

  useEffect(() => {
    if (!state.open) return;
    const outside = (event: Event) => {
      const target = event.target as Node;
      if (!menu.current?.contains(target) && !button.current?.contains(target)) setState(CLOSED);
    };
    const moved = () => setState(CLOSED);
    document.addEventListener("pointerdown", outside);
    window.addEventListener("resize", moved);
    window.addEventListener("scroll", moved, true);
    return () => {
      document.removeEventListener("pointerdown", outside);
      window.removeEventListener("resize", moved);
      window.removeEventListener("scroll", moved, true);
    };
  }, [state.open]);

  const key = (event: KeyboardEvent, on: "button" | "menu") => {
    const step = menuKey(state, event.key, items.length, on);
    if (step.handled) event.preventDefault();
    if (step.state !== state) apply(step.state, step.focusButton);
  };

  return (
    <div class="menu-button">
      <button type="button" ref={button} aria-haspopup="menu" aria-expanded={state.open} aria-controls={id}
              disabled={disabled} onKeyDown={(e) => key(e, "button")}
              onClick={() => apply(state.open ? CLOSED : { open: true, active: 0 }, false)}>
        Actions<span class="visually-hidden"> for {name}</span>
      </button>
      {state.open && (
        <div role="menu" id={id} ref={menu} aria-label={`Actions for ${name}`} class="menu"
             style={{ top: `${place.top}px`, right: `${place.right}px` }} onKeyDown={(e) => key(e, "menu")}>
          {items.map((item, index) => (
            <button key={item.label} type="button" role="menuitem" tabIndex={index === state.active ? 0 : -1}
                    class={item.danger ? "danger-text" : ""}
                    onClick={() => { apply(CLOSED, true); item.onSelect(); }}>{item.label}</button>
          ))}
        </div>
      )}
    </div>
  );
}
