/**
 * The behaviour every modal <dialog> of the app shares: shown with showModal while `open` (the rest of
 * the page inert, Escape closes it), the focus moved to what `focusFirst` finds in it, and, once it
 * closes by any way, `onClose` called and the focus given back to what had it when it opened.
 */
import type { RefObject } from "preact";
import { useEffect, useRef } from "preact/hooks";

export function useModal(open: boolean, onClose: () => void,
                         focusFirst: (dialog: HTMLDialogElement) => HTMLElement | null | undefined
): { dialog: RefObject<HTMLDialogElement | null>; closed: () => void } {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      element.showModal();
      focusFirst(element)?.focus();
    } else if (!open && element.open) {
      element.close();
    }
  }, [open]);
  const closed = () => { onClose(); opener.current?.focus(); opener.current = null; };
  return { dialog, closed };
}
