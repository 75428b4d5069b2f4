/**
 * The keyboard of a menu button (the WAI-ARIA menu button pattern), as a function of the menu's state:
 * on the button, Enter, Space and Down open the menu on its first item, Up on its last; in the menu,
 * Down and Up move (wrapping), Home and End go to the ends, Escape closes it and gives the button its
 * focus back, Tab closes it and lets the focus move on. Any other key is not the menu's.
 */
export interface MenuState {
  open: boolean;
  /** The item that has the focus (-1: none). */
  active: number;
}

export interface MenuStep {
  state: MenuState;
  /** The key was the menu's: the browser's own handling of it is prevented. */
  handled: boolean;
  /** The focus goes back to the button. */
  focusButton: boolean;
}

export const CLOSED: MenuState = { open: false, active: -1 };

export function menuKey(state: MenuState, key: string, count: number, on: "button" | "menu"): MenuStep {
  const step = (next: MenuState, focusButton = false, handled = true): MenuStep => ({ state: next, handled, focusButton });
  if (on === "button" || !state.open) {
    if (count === 0) return step(state, false, false);
    if (key === "Enter" || key === " " || key === "ArrowDown") return step({ open: true, active: 0 });
    if (key === "ArrowUp") return step({ open: true, active: count - 1 });
    return step(state, false, false);
  }
  switch (key) {
    case "ArrowDown": return step({ open: true, active: (state.active + 1) % count });
    case "ArrowUp": return step({ open: true, active: (state.active - 1 + count) % count });
    case "Home": return step({ open: true, active: 0 });
    case "End": return step({ open: true, active: count - 1 });
    case "Escape": return step(CLOSED, true);
    case "Tab": return step(CLOSED, false, false);
    default: return step(state, false, false);
  }
}
