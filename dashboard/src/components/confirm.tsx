/**
 * A button that asks before it acts: a modal <dialog> (the browser keeps focus inside it and Escape
 * closes it) naming what will happen; the action runs on "confirm" only.
 */
import type { ComponentChildren } from "preact";
import { useRef } from "preact/hooks";

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
