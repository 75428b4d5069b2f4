/** A value with a Copy button (the clipboard API; it says whether the copy worked). */
import { useState } from "preact/hooks";

export function CopyValue({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState<"no" | "yes" | "failed">("no");
  return (
    <div class="copy">
      <code aria-label={label} class="secret">{value}</code>
      <button type="button" onClick={() => {
        navigator.clipboard.writeText(value).then(() => setCopied("yes"), () => setCopied("failed"));
      }}>Copy</button>
      <span role="status" aria-live="polite">{copied === "yes" ? "Copied" : copied === "failed" ? "Copy failed: select the value" : ""}</span>
    </div>
  );
}
