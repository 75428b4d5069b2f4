/**
 * The app's toast region (toast.ts): a landmark named "Notifications" holding a polite live region,
 * there from the first paint so a screen reader hears each toast added to it. A toast never takes
 * the focus; it has a Dismiss button, and it stays while the pointer or the focus is on the region.
 * It slides in only when the person has not asked for reduced motion (styles.css).
 */
import { useEffect, useRef, useState } from "preact/hooks";

import { type Toaster, toaster as appToaster } from "../toast";

export function Toasts({ toaster = appToaster }: { toaster?: Toaster }) {
  const [toasts, setToasts] = useState(toaster.toasts);
  const region = useRef<HTMLElement>(null);
  const pointer = useRef(false);
  /** Held while the pointer is on the region or the focus in it; released otherwise. */
  const holdOrRelease = () => {
    if (pointer.current || region.current?.contains(document.activeElement)) toaster.hold();
    else toaster.release();
  };
  useEffect(() => toaster.subscribe(setToasts), [toaster]);
  useEffect(() => {
    const element = region.current;
    if (!element) return;
    const enter = () => { pointer.current = true; holdOrRelease(); };
    const leave = () => { pointer.current = false; holdOrRelease(); };
    // focusout fires before the focus lands elsewhere: look once it has
    const focusOut = () => { setTimeout(holdOrRelease, 0); };
    element.addEventListener("pointerenter", enter);
    element.addEventListener("pointerleave", leave);
    element.addEventListener("focusin", holdOrRelease);
    element.addEventListener("focusout", focusOut);
    return () => {
      element.removeEventListener("pointerenter", enter);
      element.removeEventListener("pointerleave", leave);
      element.removeEventListener("focusin", holdOrRelease);
      element.removeEventListener("focusout", focusOut);
    };
  }, [toaster]);
  useEffect(() => {
    // An empty region has no area for the pointer to be on; a dismissed toast's button goes with
    // the focus it had, and no focusout comes: look again.
    if (toasts.length === 0) pointer.current = false;
    setTimeout(holdOrRelease, 0);
  }, [toasts.length]);
  return (
    <section ref={region} class="toasts" aria-label="Notifications">
      <div role="status" aria-live="polite" aria-atomic="false">
        {toasts.map((t) => (
          <div key={t.id} class="toast" data-testid="toast">
            <p>{t.text}</p>
            <button type="button" class="close" aria-label="Dismiss" onClick={() => toaster.dismiss(t.id)}>×</button>
          </div>
        ))}
      </div>
    </section>
  );
}
