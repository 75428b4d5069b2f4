/**
 * A button that asks before it acts: a modal <dialog> (the browser keeps focus inside it and Escape
 * closes it) naming what will happen; the action runs on "confirm" only.
 */
import type { ComponentChildren } from "preact";
import { useRef } from "preact/hooks";

import { useModal } from "./modal";

export interface ConfirmProps {
  /** The button's text (and the dialog's confirm button). */
  label: string;
  /** What the dialog asks, e.g. "Revoke the key CI? It stops working at once." */
  question: ComponentChildren;
  onConfirm: () => void;
  disabled?: boolean;
  danger?: boolean;
}

export function ConfirmButton({ label, question, onConfirm, disabled, danger = true }: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <>
      <button type="button" class={danger ? "danger" : ""} disabled={disabled}
              onClick={() => dialog.current?.showModal()}>{label}</button>
      <dialog ref={dialog} aria-label={label}>
        <form method="dialog">
          <p>{question}</p>
          <div class="actions">
            <button value="cancel" autofocus>Cancel</button>
            <button value="confirm" class={danger ? "danger" : "primary"}
                    onClick={() => { dialog.current?.close(); onConfirm(); }} type="button">{label}</button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** The same question, asked when `open` turns true (from a row's actions menu): Cancel has the
 * focus; closed either way, the focus goes back to what had it before (the menu's button). */
export function Confirm({ open, label, question, onConfirm, onClose, danger = true }: Omit<ConfirmProps, "disabled"> & {
  open: boolean; onClose: () => void }) {
  const { dialog, closed } = useModal(open, onClose,
                                     (element) => element.querySelector<HTMLElement>("button[value=cancel]"));
  return (
    <dialog ref={dialog} aria-label={label} onClose={closed}>
      <form method="dialog">
        <p>{question}</p>
        <div class="actions">
          <button value="cancel">Cancel</button>
          <button value="confirm" class={danger ? "danger" : "primary"} type="button"
                  onClick={() => { dialog.current?.close(); onConfirm(); }}>{label}</button>
        </div>
      </form>
    </dialog>
  );
}
