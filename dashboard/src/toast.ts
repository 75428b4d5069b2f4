/**
 * The results of actions ("Project Apollo created", "The allowlist is saved"), told as toasts: one
 * region for the whole app (components/toasts.tsx) shows them and a screen reader hears them
 * politely. Each leaves by itself after a few seconds, but never while the pointer or the focus is
 * on the region (held): a person reading or reaching for its Dismiss button keeps it. Errors are not
 * toasts: they stay where the action was, with the request id.
 *
 * A plain store rather than a context, so any page (and a page that navigates away, like a deleted
 * endpoint's) can tell one; the region outlives the pages.
 */

export interface Toast {
  id: number;
  text: string;
}

/** How long a toast stays once nothing holds it. */
export const TOAST_MS = 6000;
/** The most shown at once: a newer one pushes out the oldest. */
export const MOST_TOASTS = 3;

type Listener = (toasts: readonly Toast[]) => void;

export class Toaster {
  #toasts: Toast[] = [];
  #next = 1;
  #held = false;
  readonly #timers = new Map<number, ReturnType<typeof setTimeout>>();
  readonly #listeners = new Set<Listener>();

  constructor(private readonly ms = TOAST_MS, private readonly most = MOST_TOASTS) {}

  get toasts(): readonly Toast[] {
    return this.#toasts;
  }

  show(text: string): number {
    const toast = { id: this.#next++, text };
    const kept = [...this.#toasts, toast];
    for (const pushed of kept.slice(0, Math.max(0, kept.length - this.most))) this.#stop(pushed.id);
    this.#toasts = kept.slice(-this.most);
    if (!this.#held) this.#start(toast.id);
    this.#tell();
    return toast.id;
  }

  dismiss(id: number): void {
    if (!this.#toasts.some((t) => t.id === id)) return;
    this.#stop(id);
    this.#toasts = this.#toasts.filter((t) => t.id !== id);
    this.#tell();
  }

  /** The pointer or the focus is on the region: no toast leaves until `release`. */
  hold(): void {
    this.#held = true;
    for (const id of [...this.#timers.keys()]) this.#stop(id);
  }

  /** Nothing holds the region any more: each toast gets its whole time again to be read. */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    for (const toast of this.#toasts) this.#start(toast.id);
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  /** Every toast gone and every timer stopped (a test's fresh start, a sign-out). */
  clear(): void {
    for (const id of [...this.#timers.keys()]) this.#stop(id);
    this.#toasts = [];
    this.#held = false;
    this.#tell();
  }

  #start(id: number): void {
    this.#stop(id);
    this.#timers.set(id, setTimeout(() => this.dismiss(id), this.ms));
  }

  #stop(id: number): void {
    const timer = this.#timers.get(id);
    if (timer !== undefined) clearTimeout(timer);
    this.#timers.delete(id);
  }

  #tell(): void {
    for (const listener of this.#listeners) listener(this.#toasts);
  }
}

/** The app's one toaster. */
export const toaster = new Toaster();

/** Tell the result of an action in the app's toast region. */
export function toast(text: string): void {
  toaster.show(text);
}
