/**
 * A modal <dialog> (showModal: the rest of the page is inert, Escape closes it) labelled by its
 * heading. Opened, it moves the focus to its first field (else its first button); closed, it gives
 * the focus back to what had it when it opened (the button that opened it). Its content is drawn
 * only while it is open, so a form in it starts empty each time.
 */
import type { ComponentChildren } from "preact";
import { useId, useState } from "preact/hooks";

import { useModal } from "./modal";

export interface DialogProps {
  open: boolean;
  /** The heading, which names the dialog. */
  title: ComponentChildren;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}

export function Dialog({ open, title, onClose, children, wide = false }: DialogProps) {
  const heading = useId();
  const { dialog, closed } = useModal(open, onClose, (element) =>
    element.querySelector<HTMLElement>("[autofocus], input:not([type=hidden]), select, textarea")
      ?? element.querySelector<HTMLElement>("button"));
  return (
    <dialog ref={dialog} class={wide ? "form-dialog wide" : "form-dialog"} aria-labelledby={heading}
            onClose={closed}>
      {open && <>
        <div class="dialog-head">
          <h2 id={heading}>{title}</h2>
          <button type="button" class="close" aria-label="Close" onClick={() => dialog.current?.close()}>×</button>
        </div>
        {children}
      </>}
    </dialog>
  );
}

/** A button ("Create key") that opens a Dialog; `children` gets the function that closes it. */
export function DialogButton({ label, title, children, wide }: {
  label: string; title: ComponentChildren; children: (close: () => void) => ComponentChildren; wide?: boolean }) {
  const [open, setOpen] = useState(false);
  const close = () => setOpen(false);
  return (
    <>
      <button type="button" class="primary" aria-haspopup="dialog" onClick={() => setOpen(true)}>{label}</button>
      <Dialog open={open} title={title} onClose={close} wide={wide}>{children(close)}</Dialog>
    </>
  );
}
